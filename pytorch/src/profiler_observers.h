// What the rest of the device needs of the profiler's observers (Note [PyTorch observers] in
// profiler_observers.cpp).
#pragma once

#include <cstdint>

namespace npuscope::pytorch {

// The number of the step in progress (0 before the first boundary), observed or not.
std::int64_t observed_step();
// An optimizer step that did not run (a loss scaler skipped it) still ends the step, as one that ran
// would have (ignored once the script marks its own steps).
void optimizer_step_skipped();
// Opens the current step if none is open (an op or module call is about to run in it).
void open_observed_step();
// "{prefix}.{n}.forward" for the n-th call of the API `prefix` ("Functional.conv2d") in this step,
// interned; n restarts at every step boundary, as module call numbers do.
const char* api_entry(const char* prefix);

}  // namespace npuscope::pytorch

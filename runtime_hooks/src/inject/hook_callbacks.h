// The subscriber table the injection library gives the emulator (hook_callbacks.cpp).
#pragma once

#include "npuscope/runtime_hooks/hook_api.h"

namespace npuscope::inject {

class Session;

// Points every callback of `table` at `session` (wants_tensors: dump mode other than "none").
void fill_subscriber_table(hooks::SubscriberTable& table, Session& session);

}  // namespace npuscope::inject

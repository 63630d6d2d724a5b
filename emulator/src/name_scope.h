// The thread's name scope, shared by NameScope (dispatch.cpp) and host ops (host_ops.cpp). Private
// to the emulator.
#pragma once

#include <string>

namespace npuscope::emulator {

// What the names of the ops this thread launches are prefixed with ("layer0/attn"): empty for none.
std::string& thread_name_scope() noexcept;

}  // namespace npuscope::emulator

// The device's one CPU fallback: every aten op without a native kernel of the emulated NPU.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace npuscope::pytorch {

// How often each op ran through the fallback in this process, by aten name, most frequent first.
std::vector<std::pair<std::string, std::int64_t>> fallback_counts();
void reset_fallback_counts();

}  // namespace npuscope::pytorch

// User ranges on the host timeline (like NVTX / mstx): push/pop or a scoped range.
#pragma once

#include <string_view>

namespace npuscope::emulator {

void range_push(std::string_view name);
void range_pop();

class ScopedRange {
 public:
  explicit ScopedRange(std::string_view name) { range_push(name); }
  ~ScopedRange() { range_pop(); }
  ScopedRange(const ScopedRange&) = delete;
  ScopedRange& operator=(const ScopedRange&) = delete;
};

// Interns a string for the life of the process (hook records carry such pointers).
const char* intern(std::string_view s);

}  // namespace npuscope::emulator

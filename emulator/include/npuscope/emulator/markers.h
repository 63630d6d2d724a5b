// User ranges on the host timeline (like NVTX / mstx): push/pop or a scoped range.
#pragma once

#include <cstdint>
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

// Step boundaries (training or inference iterations), like mstx/NVTX step ranges: `npuscope run
// --steps A-B` limits tensor dumps to those steps.
void step_begin(std::int64_t step);
void step_end();

class ScopedStep {
 public:
  explicit ScopedStep(std::int64_t step) { step_begin(step); }
  ~ScopedStep() { step_end(); }
  ScopedStep(const ScopedStep&) = delete;
  ScopedStep& operator=(const ScopedStep&) = delete;
};

// Interns a string for the life of the process (hook records carry such pointers).
const char* intern(std::string_view s);
// intern() through a per-thread cache: no lock for a string this thread interned before (the hot
// paths that intern per op: input signatures, framework op names).
const char* intern_cached(std::string_view s);

}  // namespace npuscope::emulator

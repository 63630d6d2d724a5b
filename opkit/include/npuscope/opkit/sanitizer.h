// The sanitizer's checks (msSanitizer's memcheck / racecheck and the CPU twin's ErrorRead/ErrorWrite/
// ErrorSync/ErrorBuffer/ErrorLeak/ErrorFree checks, shared/REFERENCE.md "Ascend C"), declared once.
//
// Every instruction of a kernel is checked against the buffers the pipe gave out and the global
// memory the launch knows (its arguments). A failed check is a Finding naming the kernel, the block,
// the instruction and the file:line of the call in the kernel's source. By default the first finding
// stops the launch with a KernelFault; with keep_going the faulty instruction is skipped and the
// kernel runs on, so one run lists them all.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "npuscope/runtime_hooks/vocabulary.h"

namespace npuscope::opkit {

// The checks are the trace vocabulary's KernelCheck (runtime_hooks/vocabulary.h), so that the
// trace's KERNEL_FINDING rows and the tools name them as the sanitizer does.
using Check = KernelCheck;
inline constexpr int kNumChecks = kNumKernelChecks;
inline std::string_view check_name(Check c) { return enum_name(c); }

struct Finding {
  Check check = Check::kBadArgument;
  std::string kernel;
  std::int32_t block = 0;   // block index; -1 for a finding about the launch as a whole
  std::string instruction;  // "DataCopy", "AllocTensor"...
  std::string file;         // of the call in the kernel's source
  std::uint32_t line = 0;
  std::string message;  // what went wrong, with the sizes and addresses involved
};

// "ERROR: misaligned_copy in add_custom, block 3, DataCopy at add_custom.cpp:41: ..."
std::string format_finding(const Finding& f);

// What a kernel's first finding throws (without keep_going), and what a launch reports when the
// kernel itself throws. Carries every finding made so far.
class KernelFault : public std::runtime_error {
 public:
  explicit KernelFault(std::vector<Finding> findings);
  const std::vector<Finding>& findings() const noexcept { return findings_; }

 private:
  std::vector<Finding> findings_;
};

// A kernel or launch set up wrongly (no kernel, block_dim 0, a tiling that does not fit): not a
// finding of the sanitizer but the author's mistake before anything ran.
class LaunchError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

}  // namespace npuscope::opkit

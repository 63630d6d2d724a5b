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

namespace npuscope::opkit {

// X(enumerator, name, what it means)
#define NPUSCOPE_OPKIT_CHECKS(X)                                                                             \
  X(kGmReadOutOfRange, "gm_read_out_of_range", "a read of global memory outside every tensor of the launch") \
  X(kGmWriteOutOfRange, "gm_write_out_of_range", "a write to global memory outside every output")            \
  X(kBufferOverflow, "buffer_overflow", "the pipe's buffers need more of a memory (UB, L1, L0) than it has") \
  X(kLocalOutOfRange, "local_out_of_range", "an access past the end of a local tensor")                      \
  X(kMisalignedCopy, "misaligned_copy",                                                                      \
    "a DataCopy whose length or local address is not a multiple of 32 bytes (use DataCopyPad)")              \
  X(kUninitializedRead, "uninitialized_read", "a read of local memory nothing wrote")                        \
  X(kDeQueEmpty, "deque_without_enque", "DeQue on a queue with nothing enqueued")                            \
  X(kQueueFull, "enque_full_queue", "EnQue on a queue already holding its depth of tensors")                 \
  X(kAllocExhausted, "alloc_without_free_buffer", "AllocTensor with every buffer of the queue in use")       \
  X(kDoubleFree, "double_free", "FreeTensor of a tensor already freed (or never allocated)")                 \
  X(kLeak, "tensor_leak", "a tensor still allocated or enqueued when the kernel ends")                       \
  X(kGmWriteOverlap, "gm_write_overlap", "two blocks wrote the same global memory bytes (not atomic add)")   \
  X(kMmadParams, "mmad_params", "Mmad parameters or buffer addresses out of range")                          \
  X(kBadArgument, "bad_argument", "an instruction's argument out of its range (count, repeat, dtype)")

enum class Check : std::uint8_t {
#define NPUSCOPE_OPKIT_CHECK_ENUM(e, n, d) e,
  NPUSCOPE_OPKIT_CHECKS(NPUSCOPE_OPKIT_CHECK_ENUM)
#undef NPUSCOPE_OPKIT_CHECK_ENUM
};
inline constexpr int kNumChecks = 0
#define NPUSCOPE_OPKIT_CHECK_COUNT(e, n, d) +1
    NPUSCOPE_OPKIT_CHECKS(NPUSCOPE_OPKIT_CHECK_COUNT)
#undef NPUSCOPE_OPKIT_CHECK_COUNT
    ;
std::string_view check_name(Check c);
std::string_view check_doc(Check c);

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

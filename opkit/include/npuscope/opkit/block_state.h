// What one block of a running kernel owns: its local memories, its pipes' clocks, the instructions
// it issued and the sanitizer's view of it. The kernel's API (tensor.h, pipe.h, data_copy.h,
// vector_ops.h, cube_ops.h) reaches it through current_block(): a kernel function takes only its
// GM_ADDR arguments, as on the device, and GetBlockIdx() is a free function.
//
// Note [Pipe timing]
// Each pipe (types.h) runs its instructions in the order the scalar unit issues them, one at a time:
//   start = max(the pipe's clock, the scalar unit's issue time), end = start + cycles.
// Issuing costs the scalar unit one cycle per instruction, so a loop of tiny instructions is bound
// by the scalar unit, as on the device. Pipes share no clock: an MTE2 copy runs while the vector
// unit computes, unless a flag orders them. The queues insert those flags (queue.h):
//   EnQue   sets a flag when the producer pipe has finished what it issued so far,
//   DeQue   makes the consumer pipe wait for it (read after write),
//   FreeTensor sets a flag when the consumer pipe is done with the buffer, and
//   AllocTensor makes the producer pipe wait for it before reusing the buffer (write after read).
// With two buffers per queue the copy of tile i+1 goes into the buffer that tile i-1 freed, so MTE2
// and Vector overlap; with one buffer every copy waits for the previous tile's compute.
// The block lasts until its last pipe finishes (the critical path); the kernel until its slowest
// core finishes, a core running the blocks given to it one after another (launch.h).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <source_location>
#include <string>
#include <vector>

#include "npuscope/emulator/numerics.h"
#include "npuscope/opkit/pipe_costs.h"
#include "npuscope/opkit/sanitizer.h"
#include "npuscope/opkit/types.h"
#include "npuscope/opkit/written_ranges.h"
#include "npuscope/runtime_hooks/vocabulary.h"

namespace npuscope::opkit {

// One instruction as the pipe view shows it. Names and files are static strings (literals and
// std::source_location), so recording one allocates nothing beyond the vector's growth.
struct InstructionRecord {
  const char* name = nullptr;
  const char* file = nullptr;
  std::uint32_t line = 0;
  Pipe pipe = Pipe::kScalar;
  std::uint64_t start_cycle = 0;
  std::uint64_t end_cycle = 0;
  std::uint64_t bytes = 0;  // moved (copies) or read by the instruction (compute)
};

namespace detail {

struct LaunchState;

// A buffer the pipe gave to a queue or a TBuf (queue.h), and where it is in its life.
struct BufferSlot {
  enum class State : std::uint8_t { kFree, kAllocated, kEnqueued, kDequeued };
  TPosition position = TPosition::VECCALC;
  std::uint32_t offset = 0;  // bytes from the start of its memory
  std::uint32_t bytes = 0;
  State state = State::kFree;
  std::uint64_t ready_cycle = 0;     // EnQue's flag: the producer pipe finished writing it
  std::uint64_t freed_cycle = 0;     // FreeTensor's flag: the consumer pipe finished reading it
  const char* alloc_file = nullptr;  // where AllocTensor last handed it out (for a leak's report)
  std::uint32_t alloc_line = 0;
};

// Marks thrown through a kernel to stop it at its first finding; launch() catches it.
struct KernelAbort {};

class BlockState {
 public:
  BlockState(const LaunchState& launch, std::int32_t block_idx);

  const LaunchState& launch() const { return launch_; }
  std::int32_t block_idx() const { return block_idx_; }
  std::int32_t block_dim() const;
  const PipeCosts& costs() const;

  // Local memories: backing bytes (grown past the capacity when the pipe oversubscribes it, which
  // is a finding, so that a keep-going run goes on) and what of them has been written.
  std::byte* memory(Memory m) { return memory_[static_cast<int>(m)]; }
  std::uint64_t capacity(Memory m) const;
  std::uint32_t reserve(Memory m, std::uint32_t bytes, const char* instruction, const std::source_location& loc);
  void mark_written(Memory m, std::uint64_t offset, std::uint64_t bytes);
  bool is_written(Memory m, std::uint64_t offset, std::uint64_t bytes) const;

  std::vector<BufferSlot>& slots() { return slots_; }

  // Issues an instruction on a pipe (Note [Pipe timing]); returns its end cycle.
  std::uint64_t issue(Pipe pipe, const char* name, std::uint64_t cycles, std::uint64_t bytes,
                      const std::source_location& loc);
  // A flag wait: the pipe starts nothing before `cycle`.
  void wait_pipe(Pipe pipe, std::uint64_t cycle) {
    auto& c = pipe_clock_[static_cast<int>(pipe)];
    if (cycle > c) c = cycle;
  }
  std::uint64_t pipe_clock(Pipe pipe) const { return pipe_clock_[static_cast<int>(pipe)]; }
  // PipeBarrier<PIPE_ALL>: every pipe and the scalar unit wait for all of them.
  void barrier_all();
  // The critical path so far: the last pipe's end.
  std::uint64_t cycles() const;
  const std::array<std::uint64_t, kNumPipes>& busy_cycles() const { return busy_; }
  std::vector<InstructionRecord>& instructions() { return instructions_; }
  std::uint64_t issued() const { return issued_; }
  std::uint32_t reserved(Memory m) const { return reserved_[static_cast<int>(m)]; }

  // A transfer between global memory and the core, `row_bytes` at a time from `gm`: counted, and
  // counted as unaligned when the address or the row length is not a multiple of 32 bytes (the
  // analyzer's misaligned-copy advice: the MTEs move whole 32-byte blocks).
  void count_gm_copy(const void* gm, std::uint64_t row_bytes) {
    ++gm_copies_;
    if (reinterpret_cast<std::uintptr_t>(gm) % 32 != 0 || row_bytes % 32 != 0) ++unaligned_gm_copies_;
  }
  std::uint64_t gm_copies() const { return gm_copies_; }
  std::uint64_t unaligned_gm_copies() const { return unaligned_gm_copies_; }

  // The sanitizer: records a finding; without keep_going, stops the kernel (throws KernelAbort).
  // Returns false so that a caller can write `if (!ok) return fail(...)` and skip the instruction.
  bool fail(Check check, const char* instruction, const std::source_location& loc, std::string message);
  // The same, at a place other than the caller's (a leak is reported where the tensor was allocated).
  bool fail_at(Check check, const char* instruction, const char* file, std::uint32_t line, std::string message);
  std::vector<Finding>& findings() { return findings_; }

  // Global memory: whether [p, p + bytes) lies inside one tensor of the launch that allows it.
  bool gm_ok(const void* p, std::uint64_t bytes, bool write) const;
  // gm_ok, or the out-of-range finding (false) every instruction that touches GM reports.
  bool check_gm(const void* p, std::uint64_t bytes, bool write, const char* instruction,
                const std::source_location& loc);
  void record_gm_write(const void* p, std::uint64_t bytes);
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>>& gm_writes() { return gm_writes_; }

  emulator::OverflowMode overflow_mode() const;
  // A result that is not finite once rounded to `t` (`stored`): recorded as an overflow, and what is
  // stored instead: in saturation mode +-dtype_max(t) (NaN -> 0), as the emulator's kernels store it.
  float overflowed(float stored, npuscope::DType t);
  bool overflow() const { return overflow_; }
  bool saturated() const { return saturated_; }

 private:
  const LaunchState& launch_;
  std::int32_t block_idx_;
  std::array<std::byte*, kNumLocalMemories> memory_{};     // from the thread's pool (block_state.cpp)
  std::array<std::uint64_t, kNumLocalMemories> backed_{};  // bytes behind memory_
  std::array<WrittenRanges, kNumLocalMemories> written_;
  std::array<std::uint32_t, kNumLocalMemories> reserved_{};
  std::array<bool, kNumLocalMemories> overflow_reported_{};
  std::vector<BufferSlot> slots_;
  std::array<std::uint64_t, kNumPipes> pipe_clock_{};
  std::array<std::uint64_t, kNumPipes> busy_{};
  std::uint64_t issue_clock_ = 0;
  std::uint64_t issued_ = 0;
  std::uint64_t gm_copies_ = 0, unaligned_gm_copies_ = 0;
  std::vector<InstructionRecord> instructions_;
  std::vector<Finding> findings_;
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> gm_writes_;
  bool overflow_ = false, saturated_ = false;
};

// The block the calling thread is running (set by launch()); a kernel API call outside a launch
// throws LaunchError.
BlockState& current_block();
void set_current_block(BlockState* block);

}  // namespace detail

// Ascend C's block index and count.
std::int64_t GetBlockIdx();
std::int64_t GetBlockNum();

}  // namespace npuscope::opkit

// The custom (opkit) kernels of a trace as the viewer knows them before any is selected: each
// launch's blocks (KERNEL_BLOCK) and sanitizer findings (KERNEL_FINDING), read once with the
// timeline, and the devices' clocks. Their instructions are read per task, when one is selected
// (Note [Pipe lanes] in pipe_lanes.h).
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "npuscope/collector/trace_reader.h"

namespace npuscope::viewer {

class KernelIndex {
 public:
  // Reads KERNEL_BLOCK, KERNEL_FINDING and DEVICE_INFO (empty tables in a trace without custom kernels
  // or older than schema 9). A block row is ~150 bytes and there is one per block of each launch:
  // a trace of 10k launches of 48 blocks holds 70 MB of them. The reader has no query of one task's
  // blocks, which would let them be read on selection as the instructions are.
  void load(const collector::TraceReader& trace);

  bool empty() const { return blocks_.empty() && findings_.empty(); }
  // A task's blocks, by block index; empty if it is not a custom kernel.
  std::span<const collector::KernelBlockRow> blocks_of(std::int64_t task_id) const;
  // A task's findings, by block (-1, the launch as a whole, first).
  std::span<const collector::KernelFindingRow> findings_of(std::int64_t task_id) const;
  // Every task with blocks or findings, ascending (to flag them on the timeline).
  std::vector<std::int64_t> kernel_tasks() const;
  std::vector<std::int64_t> tasks_with_findings() const;
  // DEVICE_INFO.clock_hz of a device; 0 if it is unknown.
  double clock_hz(std::int32_t device_id) const;
  std::size_t memory_bytes() const;

 private:
  std::vector<collector::KernelBlockRow> blocks_;      // by task, block
  std::vector<collector::KernelFindingRow> findings_;  // by task, block
  std::vector<std::pair<std::int32_t, double>> clocks_;
};

}  // namespace npuscope::viewer

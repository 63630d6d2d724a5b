// The figures the rules compute, before each rule writes them into its finding tables (Note
// [Finding tables]). Times are integer nanoseconds on the trace's clock.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "npuscope/analyzer/roofline.h"
#include "npuscope/collector/trace_stats.h"
#include "npuscope/runtime_hooks/vocabulary.h"

namespace npuscope::analyzer {

// ---- summary ----
struct StreamUse {
  std::int32_t device_id = 0, stream_id = 0;
  std::int64_t tasks = 0, busy_ns = 0;
  double utilisation = 0;  // busy / the device's span
};

struct DeviceUse {
  std::int32_t device_id = 0;
  std::string name;  // spec preset
  std::int64_t tasks = 0;
  std::int64_t first_ns = 0, last_ns = 0, busy_ns = 0;  // busy: union of the task intervals
  double busy_pct = 0;                                  // busy / (last - first)
};

struct Summary {
  bool complete = true;  // META.status: an incomplete trace ends where its program was killed
  std::string command;
  std::int64_t tasks = 0, span_ns = 0;  // span: first task start to last task end, all devices
  std::vector<DeviceUse> devices;
  std::vector<StreamUse> streams;
  std::int64_t api_calls = 0, host_api_ns = 0;  // host time inside runtime API calls, all threads
  std::int64_t dropped_records = 0;             // META stat.dropped_records (records the profiler lost)
  std::vector<collector::StatValue> data_loss;  // every non-zero data-loss counter (Note [Trace stats])
  std::optional<std::int64_t> kernel_findings;  // KERNEL_FINDING rows; none when no custom kernel ran
};

// ---- roofline (npuscope/analyzer/roofline.h) ----

struct TaskPerf {
  std::int64_t task_id = 0;
  std::string op_name, op_type, task_type;
  std::int32_t device_id = 0, stream_id = 0, block_dim = 0;
  std::int64_t start_ns = 0, duration_ns = 0, flops = 0, bytes = 0;
  Bound bound = Bound::kLatency;
  double flops_per_s = 0, bytes_per_s = 0;           // achieved
  double compute_pct = 0, memory_pct = 0;            // achieved / the device's ceiling (FLOP/s, bandwidth)
  double compute_peak_pct = 0, memory_peak_pct = 0;  // achieved / its paper peak
};

struct BoundShare {
  Bound bound = Bound::kLatency;
  std::int64_t tasks = 0, total_ns = 0;
};

// ---- device idle time (Holistic Trace Analysis' breakdown) ----
enum class GapKind { kHostWait, kSyncWait, kOther };
const char* gap_kind_name(GapKind k);  // "host_wait", "sync_wait", "other"

struct Gap {
  std::int32_t device_id = 0;
  std::int32_t thread_id = 0;  // the host thread that launched next_op
  std::int64_t start_ns = 0, end_ns = 0;
  GapKind kind = GapKind::kOther;
  std::string next_op;        // the task that ended the gap
  std::string host_activity;  // what the launching thread was doing meanwhile
};

struct DeviceIdle {
  std::int32_t device_id = 0;
  std::int64_t span_ns = 0, idle_ns = 0, host_wait_ns = 0, sync_wait_ns = 0, other_ns = 0, gaps = 0;
};

struct IdleReport {
  std::vector<DeviceIdle> devices;
  std::vector<Gap> longest;  // longest first
};

// ---- AI CPU fallbacks ----
struct FallbackOp {
  std::string op_type, example_op_name;
  std::int64_t count = 0, total_ns = 0, max_ns = 0;
  double avg_ns = 0;
  bool fallback = true;  // false: an AI_CPU op by design, not a missing NPU kernel
};

// ---- overflows ----
struct OverflowTask {
  std::int64_t task_id = 0;
  std::string op_name, op_type;
  std::int32_t device_id = 0;
  std::int64_t start_ns = 0;
  std::string pass;  // forward, backward or optimizer (PyTorch scripts); empty otherwise
};

struct NanInfOrigin {
  OverflowTask task;
  std::string method;  // "stats": inputs finite, outputs not (dump); "overflow_flag": first flagged task
  std::string detail;  // e.g. "output 0: 12 inf"
};

struct OverflowReport {
  std::int64_t count = 0;             // overflowing tasks
  std::optional<OverflowTask> first;  // in execution (start time) order
  std::vector<OverflowTask> items;    // in execution order (the first `kMaxItems`)
  std::optional<NanInfOrigin> origin;
  std::string overflow_mode;  // of the device of the first overflow
};

// ---- memory ----
struct Leak {
  std::int64_t address = 0, bytes = 0, ts_ns = 0;
};

struct DeviceMemory {
  std::int32_t device_id = 0;
  std::int64_t peak_allocated_bytes = 0, peak_allocated_ns = 0;
  std::int64_t peak_reserved_bytes = 0, peak_reserved_ns = 0;
  double fragmentation_at_peak = 0;  // cached / reserved when the allocated peak was reached
  std::int64_t allocations = 0, leaked_count = 0, leaked_bytes = 0;
  std::vector<Leak> largest_leaks;  // biggest first
};

struct MemoryReport {
  std::int64_t peak_allocated_bytes = 0, peak_reserved_bytes = 0, leaked_bytes = 0;  // largest device / sum
  std::vector<DeviceMemory> devices;
};

// ---- custom (opkit) kernels' pipes (kernel_pipes.cpp, Note [Kernel pipe ratios]) ----

// A launch's block that ran far longer than its median block.
struct TailBlock {
  std::int64_t task_id = 0;
  std::string op_name;
  std::int32_t block = 0, core = 0;
  std::int64_t cycles = 0;
  double median_cycles = 0;
  std::int64_t excess_ns = 0;                // the block's time beyond the median block's
  std::int64_t long_blocks = 0, blocks = 0;  // the launch's blocks over the tail threshold; all of them
};

// One op type's launches that have KERNEL_BLOCK rows, summed over their blocks.
// What custom-kernel blocks (KERNEL_BLOCK rows) add up to: one block's, a launch's, a kernel's
// over its launches. Sums saturate.
struct PipeTotals {
  std::int64_t blocks = 0;
  std::int64_t cycles = 0;                         // the blocks' critical paths
  std::array<std::int64_t, kNumPipes> busy{};      // by Pipe
  std::int64_t overlap = 0, overlap_possible = 0;  // MTE2 and Vector both busy; the smaller busy time, per block
  std::int64_t instructions = 0, gm_copies = 0, unaligned_gm_copies = 0;
  std::int64_t ub_bytes = 0, ub_capacity = 0;  // of the block using the largest share of its UB

  void add(const PipeTotals& o);
  // busy(p) / cycles: the op simulator's vec_ratio, mte2_ratio, ...; nullopt without cycles.
  std::optional<double> ratio(Pipe p) const {
    if (cycles <= 0) return std::nullopt;
    return static_cast<double>(busy[static_cast<std::size_t>(p)]) / static_cast<double>(cycles);
  }
  Pipe bound() const;  // the pipe with the highest ratio (the first in Pipe order on a tie)
  double ub_share() const {
    return ub_capacity > 0 ? static_cast<double>(ub_bytes) / static_cast<double>(ub_capacity) : 0;
  }
};

struct KernelPipes : PipeTotals {
  std::string op_type;
  std::int64_t calls = 0, total_ns = 0;
  std::int64_t slowest_task_id = 0, slowest_ns = -1;
  std::int64_t tail_calls = 0, tail_excess_ns = 0;
  std::optional<TailBlock> worst_tail;  // the launch whose tail block cost the most
};

// ---- advice ----
struct Advice {
  std::string rule;    // e.g. "fusion", "cube_alignment"
  std::string title;   // one line
  std::string detail;  // the figures
  std::string action;  // what to do
  std::vector<std::string> ops;
  std::int64_t impact_ns = 0;  // time at stake (for ordering; an estimate)
};

}  // namespace npuscope::analyzer

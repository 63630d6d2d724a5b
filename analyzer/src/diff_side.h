// One side of a diff (BASE or NEW): what diff() needs of a trace, read once in compact rows.
//
// Note [Diff memory]
// A 10M-task trace must diff in <= 2 GB for both sides (bench/diff_bench.cpp), so a side keeps
// 48 bytes per op (DiffOp) and no strings per op: names, types and shapes stay the trace's own
// string ids until ids_to_keys() maps the few distinct ones to keys shared by both sides. Host
// APIs, framework ops, copies and memory records are folded into totals as they are read.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "npuscope/analyzer/op_pairing.h"
#include "npuscope/collector/trace_reader.h"

namespace npuscope::analyzer {

struct DiffOp {
  std::int64_t task_id = 0, start_ns = 0, dur_ns = 0;
  // Names, types and shapes: the trace's string ids, then shared keys (ids_to_keys in diff.cpp);
  // the call index counted from the range's first call of the name.
  PairingKeys keys;
  std::int8_t task_type = 0, fallback = 0;
  std::int8_t kernel_class = 0;  // a GPU kernel's KernelClass (TaskType KERNEL); 0 otherwise
};
static_assert(sizeof(DiffOp) == 48, "Note [Diff memory]: 48 bytes an op");

// Count, total and largest of some durations or sizes.
struct Tally {
  std::int64_t count = 0, total = 0, max = 0, min = 0;
  void add(std::int64_t v) {
    min = count == 0 ? v : std::min(min, v);
    ++count;
    total += v;
    max = std::max(max, v);
  }
};

struct MemoryTotals {
  std::int64_t peak_allocated = 0, peak_reserved = 0;
  Tally allocations, frees;  // sizes of the blocks allocated / freed
  bool recorded = false;     // any MEMORY_RECORD row in the range
};

// Where the ops' time went on the device (msprof-analyze's OverallMetrics): interval unions, so
// that overlapping streams count once.
struct TimeSplit {
  std::int64_t e2e_ns = 0;
  std::int64_t computing_ns = 0;  // kernels and copies
  std::int64_t cube_ns = 0, vector_ns = 0, ai_cpu_ns = 0, host_cpu_ns = 0, copy_ns = 0;
  std::int64_t cube_count = 0, vector_count = 0, ai_cpu_count = 0, fallback_count = 0, host_cpu_count = 0,
               copy_count = 0, communication_count = 0;
  // A GPU's kernels (TaskType KERNEL) by what their name says, as msprof-analyze's compare splits a
  // GPU profile: GEMM, elementwise, the others (Note [Kernel classes] in diff_side.cpp).
  std::int64_t gemm_ns = 0, elementwise_ns = 0, other_kernel_ns = 0;
  std::int64_t gemm_count = 0, elementwise_count = 0, other_kernel_count = 0;
  std::int64_t communication_ns = 0;            // every collective's time
  std::int64_t uncovered_communication_ns = 0;  // |computing U communication| - |computing|
  std::int64_t free_ns = 0;                     // e2e - |computing U communication|
};

struct DiffSide {
  std::string path;
  std::optional<std::int64_t> step;  // the step compared; none: the whole trace
  std::int64_t steps = 0;            // step markers in the trace
  std::vector<DiffOp> ops;           // in start order
  // The framework op (PYTORCH_API) that launched each op, parallel to ops, as that op's name and
  // input shapes string ids; {0, 0}: none. Empty for a trace without framework ops. Read for a diff
  // across hardware (Note [Diff across hardware] in diff.cpp), then released.
  std::vector<std::pair<std::int32_t, std::int32_t>> framework_op_of;
  bool gpu = false, npu = false;  // it has GPU kernels (KERNEL); NPU tasks (AI_CORE, AI_VECTOR_CORE, MIX_*, AI_CPU)
  TimeSplit time;
  MemoryTotals memory;
  std::vector<Tally> apis;           // host API calls' durations, by name id
  std::vector<Tally> framework_ops;  // PYTORCH_API's durations, by name id
  // Run settings: META command, DEVICE_INFO's preset, precision and overflow modes, tool version.
  std::string command, device, precision_mode, overflow_mode, version, status;
};

// Reads `trace` (its own connection: call it on one thread per side). `step`: compare that step
// only (DiffError naming the trace and its steps when it has no such step).
DiffSide load_diff_side(const collector::TraceReader& trace, std::optional<std::int64_t> step,
                        const std::atomic<bool>* cancel);

}  // namespace npuscope::analyzer

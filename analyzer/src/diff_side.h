// One side of a diff (BASE or NEW): what diff() needs of a trace, read once in compact rows.
//
// Note [Diff memory]
// A 10M-task trace must diff in <= 2 GB for both sides (bench/diff_bench.cpp), so a side keeps
// 48 bytes per op (DiffOp) and no strings per op: names, types and shapes stay the trace's own
// string ids until ids_to_keys() maps the few distinct ones to keys shared by both sides. Host
// APIs, framework ops, copies and memory records are folded into totals as they are read.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "npuscope/analyzer/diff_classes.h"
#include "npuscope/analyzer/op_pairing.h"
#include "npuscope/collector/trace_reader.h"

namespace npuscope::analyzer {

struct DiffOp {
  std::int64_t task_id = 0, start_ns = 0, dur_ns = 0;
  // Names, types and shapes: the trace's string ids, then shared keys (ids_to_keys in diff.cpp);
  // the call index counted from the range's first call of the name.
  PairingKeys keys;
  std::int8_t task_type = 0, fallback = 0;
  ComputeClass compute_class = ComputeClass::kOther;  // Note [Kernel classes] (a collective: unused)
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

// Where the ops' time went on the device (msprof-analyze's OverallMetrics, Note [Overall time
// split] in diff_time_split.h): interval unions, so that overlapping streams count once.
struct ClassTime {
  std::int64_t ns = 0, count = 0;
};
struct GroupTime {   // one communicator's collectives
  std::string name;  // the communicator's; empty: a collective without its COMMUNICATION row
  std::int64_t uncovered_ns = 0, wait_ns = 0, count = 0;
};
struct TimeSplit {
  std::int64_t e2e_ns = 0;
  std::int64_t computing_ns = 0, computing_count = 0;  // |U kernels| (copies are not computing)
  std::array<ClassTime, kComputeClasses> classes{};    // sum to computing_ns
  std::int64_t uncovered_communication_ns = 0;         // |computing U communication| - |computing|
  std::int64_t communication_count = 0;                // collectives
  std::vector<GroupTime> groups;                       // by name
  std::int64_t group_overlap_ns = 0;                   // sum of the groups' uncovered - the whole
  std::int64_t free_ns = 0;                            // e2e - |computing U communication|
  std::int64_t sdma_ns = 0, sdma_count = 0;            // of Free, the copies' and memsets'
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
  // Each op's output shapes (TASK.output_shapes_id, then a shared key), parallel to ops; read for a
  // diff of an emulated run against a real one only (Note [Diff emulated vs real]).
  std::vector<std::int32_t> output_shapes_of;
  std::string source;             // META source: empty for an emulated trace, the tool's for an import
  bool gpu = false, npu = false;  // it has GPU kernels (KERNEL); NPU tasks (AI_CORE, AI_VECTOR_CORE, MIX_*, AI_CPU)
  TimeSplit time;
  MemoryTotals memory;
  std::vector<Tally> apis;           // host API calls' durations, by name id
  std::vector<Tally> framework_ops;  // PYTORCH_API's durations, by name id
  // Run settings: META command, DEVICE_INFO's preset, precision and overflow modes, tool version.
  std::string command, device, precision_mode, overflow_mode, version, status;
};

// Reads `trace` (its own connection: call it on one thread per side). `step`: compare that step
// only (DiffError naming the trace and its steps when it has no such step). `output_shapes`: fill
// output_shapes_of.
DiffSide load_diff_side(const collector::TraceReader& trace, std::optional<std::int64_t> step,
                        const std::atomic<bool>* cancel, bool output_shapes = false);

}  // namespace npuscope::analyzer

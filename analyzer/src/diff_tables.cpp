// The declarations of the diff's tables, and docs/diff.md's generated part.
#include "diff_tables.h"

#include <limits>

#include "npuscope/analyzer/diff.h"

namespace npuscope::analyzer {

double diff_ratio(std::int64_t base, std::int64_t next) {
  if (base == 0) return next == 0 ? 1.0 : std::numeric_limits<double>::infinity();
  return static_cast<double>(next) / static_cast<double>(base);
}

namespace {

constexpr Column kRunsColumns[] = {
    {"setting", Unit::kText, "what the runs were: trace, step, command, device preset, precision and overflow modes"},
    {"base", Unit::kText, "BASE's value"},
    {"new", Unit::kText, "NEW's value"},
    {"differs", Unit::kFlag, "the two differ"},
};

constexpr Column kOverallColumns[] = {
    {"metric", Unit::kText,
     "msprof-analyze's OverallMetrics rows: Computing Time split into Flash Attention, Conv, Matmul (each Cube and "
     "Vector), Paged Attention, Vector (Trans, No Trans), Cube, SDMA (Tensor Move), MC2 and Other (Note [Kernel "
     "classes]); Uncovered Communication Time per communicator with its Wait and Transmit; Free Time split into "
     "SDMA and Free; E2E Time"},
    {"base_ns", Unit::kNs, "BASE's time (a union of intervals: overlapping streams count once)", "base"},
    {"base_share_pct", Unit::kPercent, "of BASE's E2E", "base %"},
    {"base_count", Unit::kCount, "BASE's tasks", "base n"},
    {"new_ns", Unit::kNs, "NEW's time", "new"},
    {"new_share_pct", Unit::kPercent, "of NEW's E2E", "new %"},
    {"new_count", Unit::kCount, "NEW's tasks", "new n"},
    {"diff_ns", Unit::kNs, "NEW - BASE: positive is slower", "diff"},
    {"ratio", Unit::kFactor, "NEW / BASE"},
};

constexpr Column kMemoryColumns[] = {
    {"metric", Unit::kText, "peak allocated and reserved (the allocator's totals), allocations, frees"},
    {"base_bytes", Unit::kBytes, "BASE's value", "base"},
    {"new_bytes", Unit::kBytes, "NEW's value", "new"},
    {"diff_bytes", Unit::kBytes, "NEW - BASE", "diff"},
    {"ratio", Unit::kFactor, "NEW / BASE"},
    {"base_count", Unit::kCount, "BASE's allocations or frees", "base n"},
    {"new_count", Unit::kCount, "NEW's", "new n"},
};

constexpr Column kMatchingColumns[] = {
    {"base_ops", Unit::kCount, "ops in BASE's compared range"},
    {"new_ops", Unit::kCount, "ops in NEW's"},
    {"by_name", Unit::kCount, "pairs of the same name and call index"},
    {"by_name_map", Unit::kCount, "pairs through --op-name-map"},
    {"by_type_shape", Unit::kCount, "pairs of the same op type and input shapes, in execution order", "by type+shape"},
    {"added", Unit::kCount, "NEW ops with no BASE op"},
    {"removed", Unit::kCount, "BASE ops with no NEW op"},
    {"slower", Unit::kCount, "op rows whose time grew (HTA's increased)"},
    {"faster", Unit::kCount, "op rows whose time fell (HTA's decreased)"},
    {"unchanged", Unit::kCount, "op rows whose time did not change"},
};

// The columns of BASE, NEW, diff and ratio each per-op table has (diff_op_tables.cpp fills them
// with append_totals and append_calls), and what one table says otherwise.
constexpr Column kBaseTotal{"base_total_ns", Unit::kNs, "BASE's time in its calls (device time; host time for an API)",
                            "base"};
constexpr Column kNewTotal{"new_total_ns", Unit::kNs, "NEW's", "new"};
constexpr Column kDiff{"diff_ns", Unit::kNs, "NEW - BASE: the time it adds (rows sorted by it, most first)", "diff"};
constexpr Column kRatio{"ratio", Unit::kFactor, "NEW / BASE"};
constexpr Column kBaseCalls{"base_calls", Unit::kCount, "BASE's calls", "base n"};
constexpr Column kNewCalls{"new_calls", Unit::kCount, "NEW's calls", "new n"};
constexpr Column kBaseAvg{"base_avg_ns", Unit::kNs, "BASE's average call", "base avg"};
constexpr Column kNewAvg{"new_avg_ns", Unit::kNs, "NEW's average call", "new avg"};
constexpr Column kBaseMax{"base_max_ns", Unit::kNs, "BASE's longest call", "base max", true};
constexpr Column kNewMax{"new_max_ns", Unit::kNs, "NEW's longest call", "new max", true};
constexpr Column detail(Column c) {
  c.detail = true;
  return c;
}
// Totals and calls, the averages left out of the terminal (the ops and APIs tables).
constexpr Column kSides[] = {kBaseTotal, kNewTotal,        kDiff,          kRatio, kBaseCalls,
                             kNewCalls,  detail(kBaseAvg), detail(kNewAvg)};

constexpr Column kOpsLead[] = {
    {"op", Unit::kOpName, "the op: NEW's name (BASE's for a removed op)"},
    {"op_type", Unit::kText, "its type (NEW's)", "type"},
    {"match", Unit::kText,
     "how its calls were paired: name, name map, type+shape; added / removed (with a count when some of its "
     "calls were)"},
    {"base_op", Unit::kText, "BASE's name when it differs (renamed)", "base op", true},
};
constexpr Column kOpsTail[] = {
    kBaseMax,
    kNewMax,
    {"base_unit", Unit::kText, "the unit BASE ran it on (AI_CORE, AI_VECTOR_CORE, AI_CPU, ...; mixed)", "base unit",
     true},
    {"new_unit", Unit::kText, "NEW's unit", "new unit", true},
    {"base_shapes", Unit::kText, "BASE's input shapes (its first call; msprof's Input Shapes)", "base shapes", true},
    {"new_shapes", Unit::kText, "NEW's input shapes", "new shapes", true},
    {"change", Unit::kText,
     "why it may differ: BASE's name when renamed, the unit it ran on (AI_CORE -> AI_CPU: a fallback), its input "
     "shapes"},
    {"new_task_id", Unit::kTaskId, "NEW's call that added the most time (the viewer jumps to it)", "new task", true},
    {"base_task_id", Unit::kTaskId, "its BASE call", "base task", true},
};
constexpr auto kOpsColumns = join_columns(kOpsLead, kSides, kOpsTail);

constexpr Column kOpTypesColumns[] = {
    {"op_type", Unit::kText, "the op type", "type"},
    kBaseTotal,
    kNewTotal,
    kDiff,
    kRatio,
    kBaseCalls,
    kNewCalls,
    kBaseAvg,
    kNewAvg,
};

constexpr Column kKernelsColumns[] = {
    {"op_type", Unit::kText, "the op type", "type"},
    {"input_shapes", Unit::kText, "its input shapes: one row per shape, so that a shape change stands out", "shapes"},
    kBaseTotal,
    kNewTotal,
    kDiff,
    {"ratio", Unit::kFactor, "NEW / BASE (total)"},
    {"avg_ratio", Unit::kFactor, "NEW's average call / BASE's", "avg ratio"},
    kBaseCalls,
    kNewCalls,
    detail(kBaseAvg),
    detail(kNewAvg),
    kBaseMax,
    kNewMax,
    {"base_min_ns", Unit::kNs, "BASE's shortest call", "base min", true},
    {"new_min_ns", Unit::kNs, "NEW's shortest call", "new min", true},
};

constexpr Column kModelErrorColumns[] = {
    {"op_type", Unit::kText, "the CANN op type (an emulated op's through cann_op_of)", "type"},
    {"output_shapes", Unit::kText,
     "(all): the op type's row; else one kernel shape under it, as the real run records its outputs", "shapes"},
    {"paired", Unit::kCount, "ops paired by type and first output (Note [Diff emulated vs real])"},
    {"emulated_only", Unit::kCount, "emulated ops of the type left unpaired (the type's row)", "emulated only"},
    {"real_only", Unit::kCount, "real kernels of the type left unpaired (the type's row)", "real only"},
    {"emulated_ns", Unit::kNs, "the paired ops' emulated device time", "emulated"},
    {"real_ns", Unit::kNs, "their real device time", "real"},
    {"diff_ns", Unit::kNs, "emulated - real: positive, the model is too slow", "diff"},
    {"error_pct", Unit::kPercent, "(emulated - real) / real", "error"},
};

constexpr Column kApisLead[] = {
    {"api", Unit::kText, "the host call: a runtime API (aclnn*, aclrt*) or a framework op (aten::mm, a module)"},
    {"source", Unit::kText, "runtime (API) or framework (PYTORCH_API)"},
};
constexpr auto kApisColumns = join_columns(kApisLead, kSides);

}  // namespace

const TableSpec kDiffRunsTable{"diff_runs",  "Runs compared", "What each run was, and which settings differ.",
                               kRunsColumns, Layout::kRows,   Section::kSummary};
const TableSpec kDiffOverallTable{
    "diff_overall",
    "Overall (where the device time went)",
    "msprof-analyze's OverallMetrics (Note [Overall time split]): Computing Time is the union of the kernels' "
    "intervals, each class given the part its kernels cover first, so that the classes sum to it; Uncovered "
    "Communication Time = |computing U communication| - |computing|; Free Time = E2E - |computing U "
    "communication|, of which SDMA is what copies cover; E2E from the first task's start to the last one's end (a "
    "step: from its start). A row 0 in both runs is left out.",
    kOverallColumns,
    Layout::kRows,
    Section::kSummary};
const TableSpec kDiffMemoryTable{"diff_memory",
                                 "Memory",
                                 "The device allocator's peaks (its totals after each operation), and the "
                                 "allocations and frees in the compared range.",
                                 kMemoryColumns,
                                 Layout::kRows,
                                 Section::kSummary};
const TableSpec kDiffMatchingTable{
    "diff_matching",  "Op matching",   "How the ops of the two runs were paired (Note [Op pairing]).",
    kMatchingColumns, Layout::kRecord, Section::kSummary};
// The per-op tables: rows, details (TableSpec's defaults).
const TableSpec kDiffOpsTable{"diff_ops", "Ops (what got slower, and by how much)",
                              "Per op: its paired calls, plus its added or removed ones; sorted by the time it "
                              "adds (diff), most first. A unit or shape change says why.",
                              kOpsColumns};
const TableSpec kDiffOpTypesTable{"diff_op_types", "Op types", "Per op type, sorted by the time it adds.",
                                  kOpTypesColumns};
const TableSpec kDiffKernelsTable{"diff_kernels", "Kernels by input shape",
                                  "msprof-analyze's KernelCompare: per op type and input shapes, sorted by the time "
                                  "it adds; a shape that only one run has is a row of its own.",
                                  kKernelsColumns};
const TableSpec kDiffApisTable{"diff_apis", "Host APIs and framework ops",
                               "Host time per runtime API and per framework op (msprof-analyze's ApiCompare), "
                               "sorted by the time it adds.",
                               kApisColumns};

const TableSpec kDiffModelErrorTable{
    "diff_model_error",
    "Model error (emulated vs real)",
    "Only when one run is emulated and the other a real Ascend profile (Note [Diff emulated vs real]): per CANN op "
    "type, the paired ops' emulated and real device time and the emulator's error, the types sorted by |real - "
    "emulated| so that the worst-modelled lead; under a type with several kernel shapes or unpaired ops, one row per "
    "shape in the same order. Collectives are left out (their time is the other ranks' wait).",
    kModelErrorColumns,
    Layout::kRows,
    Section::kSummary};

std::vector<const TableSpec*> diff_table_specs() {
  return {&kDiffRunsTable,    &kDiffOverallTable, &kDiffMemoryTable, &kDiffMatchingTable,  &kDiffOpsTable,
          &kDiffOpTypesTable, &kDiffKernelsTable, &kDiffApisTable,   &kDiffModelErrorTable};
}

}  // namespace npuscope::analyzer

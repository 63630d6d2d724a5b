// Underflows in execution order and the first one: tasks whose finite non-zero results were
// flushed to zero when narrowed to f16/bf16 (TASK.underflow; Note [Underflow counts] in
// emulator/src/kernels/kernel_util.h).
//
// Note [First underflow]
// A value is counted once, by the op whose result flushed it: the ops after it read zeros and
// produce zeros without counting them. So the first task with TASK.underflow > 0 in execution order
// is where the activations start to vanish (the op to keep in f32 or to scale), as the NaN/Inf origin
// is for an overflow. Its share of flushed elements needs its output sizes: from the TENSOR rows of a
// `--dump stats` trace, else null.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "rules.h"

namespace npuscope::analyzer {
namespace {

constexpr std::size_t kMaxItems = 1000;

struct UnderflowTask {
  std::int64_t task_id = 0;
  std::string op_name, op_type, pass;
  std::int32_t device_id = 0;
  std::int64_t start_ns = 0, underflow = 0, subnormal = 0;
  std::string compute_dtype;
  std::optional<std::int64_t> output_elements;  // from TENSOR rows, if the trace has them
};

std::optional<std::int64_t> output_elements(const TraceData& data, std::int64_t task_id) {
  std::int64_t n = 0;
  bool any = false;
  data.reader.for_each(
      [&](const collector::TensorRow& r) {
        if (!is(r.role, TensorRole::kOutput)) return;
        any = true;
        n += std::max<std::int64_t>(r.numel, 0);
      },
      {.task_id = task_id});
  return any ? std::optional(n) : std::nullopt;
}

UnderflowTask underflow_task(const TraceData& data, const Task& t) {
  const auto dtype = dtype_from_value(t.compute_dtype);
  return {t.task_id,
          data.str(t.name_id),
          data.str(t.op_type_id),
          std::string(data.pass_of(t)),
          t.device_id,
          t.start_ns,
          t.underflow,
          t.subnormal,
          dtype ? std::string(dtype_name(*dtype)) : std::string(),
          output_elements(data, t.task_id)};
}

Value ratio_or_null(const UnderflowTask& t) {
  if (!t.output_elements || *t.output_elements <= 0) return {};
  return std::min(1.0, static_cast<double>(t.underflow) / static_cast<double>(*t.output_elements));
}

Value text_or_null(const std::string& s) { return s.empty() ? Value() : Value(s); }

constexpr Column kUnderflowSummaryColumns[] = {
    {"count", Unit::kCount, "tasks whose outputs underflowed (TASK.underflow > 0)", "underflowing tasks"},
    {"flushed_elements", Unit::kCount, "output elements flushed to zero, all tasks", "elements flushed"},
    {"first_task_id", Unit::kTaskId, "the first underflowing task in execution order (Note [First underflow])",
     "first task"},
    {"first_op_name", Unit::kOpName, "its op", "first underflowing op"},
    {"first_op_type", Unit::kText, "its op type", "first op type"},
    {"first_start_ns", Unit::kNs, "its start", "first at"},
    {"first_pass", Unit::kText, "the pass it ran in: forward, backward or optimizer (PyTorch scripts; else null)",
     "first op's pass"},
    {"first_compute_dtype", Unit::kText, "the dtype it computed in (f16 when the precision mode lowered it)",
     "computed in"},
    {"first_flushed", Unit::kCount, "its output elements flushed to zero", "first op's elements flushed"},
    {"first_flushed_ratio", Unit::kRatio,
     "their share of its output elements (from the TENSOR rows of a --dump stats trace; else null)",
     "first op's share flushed"},
    {"first_subnormal", Unit::kCount, "its output elements left subnormal (fewer significant bits)",
     "first op's subnormal elements"},
};
constexpr Column kUnderflowExtraColumns[] = {
    {"flushed", Unit::kCount, "output elements flushed to zero (TASK.underflow)"},
    {"flushed_ratio", Unit::kRatio, "their share of its output elements (--dump stats traces; else null)",
     "share flushed"},
    {"subnormal", Unit::kCount, "output elements left subnormal (TASK.subnormal)"},
    {"pass", Unit::kText, "forward, backward or optimizer (PyTorch scripts; else null)", "pass", true},
};
constexpr auto kUnderflowColumns = join_columns(kTaskInOrderColumns, kUnderflowExtraColumns);

}  // namespace

constexpr TableSpec kUnderflowSummaryTable{
    "underflow_summary",
    "Underflows",
    "The first op whose finite non-zero results were flushed to zero by f16/bf16, and how much of its output; "
    "null without underflows.",
    kUnderflowSummaryColumns,
    Layout::kRecord,
    Section::kAlert};
constexpr TableSpec kUnderflowsTable{
    "underflows",
    "Underflowing tasks",
    "Tasks whose outputs underflowed, in execution order (the first 1000).",
    kUnderflowColumns,
    Layout::kRows,
    Section::kAlert,
    "values below f16's smallest subnormal (5.96e-8) become 0: keep the first op in f32 (precision mode "
    "must_keep_origin_dtype or allow_mix_precision), compute in bf16 (range down to 1e-38), or scale the values up "
    "(loss scaling) before it",
    {},
    10};

namespace {

void run_underflow(RuleContext& c) {
  std::int64_t count = 0, flushed = 0;
  std::vector<UnderflowTask> items;
  for (const Task& t : c.data.kernels) {  // execution order
    if (t.underflow == 0) continue;
    ++count;
    flushed += t.underflow;
    if (items.size() < kMaxItems) items.push_back(underflow_task(c.data, t));
  }
  if (count == 0) return;
  const UnderflowTask& f = items.front();
  c.add(kUnderflowSummaryTable, {count, flushed, f.task_id, f.op_name, f.op_type, f.start_ns, text_or_null(f.pass),
                                 text_or_null(f.compute_dtype), f.underflow, ratio_or_null(f), f.subnormal});
  for (std::size_t i = 0; i < items.size(); ++i) {
    const UnderflowTask& t = items[i];
    c.add(kUnderflowsTable,
          {static_cast<std::int64_t>(i + 1), t.task_id, t.op_name, t.op_type, std::int64_t{t.device_id}, t.start_ns,
           t.underflow, ratio_or_null(t), t.subnormal, text_or_null(t.pass)});
  }
}

constexpr const TableSpec* kUnderflowTables[] = {&kUnderflowSummaryTable, &kUnderflowsTable};

}  // namespace

extern const Rule kUnderflowRule{"underflow",   "tasks whose f16/bf16 results were flushed to zero, the first one",
                                 run_underflow, kUnderflowTables,
                                 false,         "its flushed-to-zero counts (TASK.underflow) and tensor statistics"};

}  // namespace npuscope::analyzer

// Overflows in execution order, the first one, and the NaN/Inf origin.
//
// Note [NaN/Inf origin]
// msprobe's rule: the origin is the first compute op whose inputs are finite and whose outputs are
// not. With a stats dump (TENSOR rows) we apply it as written, in execution (start time) order.
// Without one, or when no task matches (in saturation mode outputs are clamped to finite values and
// only the hardware flag tells), the origin is the first task with the overflow flag.
#include <algorithm>
#include <map>

#include "analyses.h"
#include "rules.h"

namespace npuscope::analyzer {
namespace {

constexpr std::size_t kMaxItems = 1000;

OverflowTask overflow_task(const TraceData& data, const Task& t) {
  return {t.task_id,   data.str(t.name_id), data.str(t.op_type_id),
          t.device_id, t.start_ns,          std::string(data.pass_of(t))};
}

struct TensorFlags {
  bool dumped = false, input_nonfinite = false, output_nonfinite = false;
  std::string detail;
};

std::optional<NanInfOrigin> origin_from_stats(const TraceData& data) {
  std::map<std::int64_t, TensorFlags> by_task;
  data.reader.for_each([&](const collector::TensorRow& r) {
    TensorFlags& f = by_task[r.task_id];
    f.dumped = true;
    const bool nonfinite = r.nan_count > 0 || r.inf_count > 0;
    if (is(r.role, TensorRole::kInput)) f.input_nonfinite |= nonfinite;
    if (is(r.role, TensorRole::kOutput) && nonfinite) {
      f.output_nonfinite = true;
      if (f.detail.empty()) {
        f.detail = "output " + std::to_string(r.idx) + ": " + std::to_string(r.nan_count) + " NaN, " +
                   std::to_string(r.inf_count) + " Inf of " + std::to_string(r.numel);
      }
    }
  });
  if (by_task.empty()) return std::nullopt;
  for (const Task& t : data.kernels) {  // execution order
    const auto it = by_task.find(t.task_id);
    if (it == by_task.end() || it->second.input_nonfinite || !it->second.output_nonfinite) continue;
    return NanInfOrigin{overflow_task(data, t), "stats", it->second.detail + " (inputs finite)"};
  }
  return std::nullopt;
}

}  // namespace

OverflowReport overflows(const TraceData& data) {
  OverflowReport r;
  for (const Task& t : data.kernels) {
    if (!t.overflow) continue;
    ++r.count;
    if (r.items.size() < kMaxItems) r.items.push_back(overflow_task(data, t));
  }
  if (!r.items.empty()) {
    r.first = r.items.front();
    if (const DeviceInfoRow* d = data.device(r.first->device_id)) r.overflow_mode = d->overflow_mode;
  }
  r.origin = origin_from_stats(data);
  if (!r.origin && r.first)
    r.origin = NanInfOrigin{*r.first, "overflow_flag", "the first task that raised the overflow flag"};
  return r;
}

namespace {

constexpr Column kOverflowSummaryColumns[] = {
    {"count", Unit::kCount, "tasks with the overflow flag", "overflowing tasks"},
    {"overflow_mode", Unit::kText, "the overflow mode of the first one's device (inf_nan or saturation)",
     "overflow mode"},
    {"first_task_id", Unit::kTaskId, "the first overflowing task in execution order", "first task"},
    {"first_op_name", Unit::kOpName, "its op", "first overflowing op"},
    {"first_op_type", Unit::kText, "its op type", "first op type"},
    {"first_start_ns", Unit::kNs, "its start", "first at"},
    {"first_pass", Unit::kText, "the pass it ran in: forward, backward or optimizer (PyTorch scripts; else null)",
     "first op's pass"},
    {"origin_task_id", Unit::kTaskId, "the NaN/Inf origin (Note [NaN/Inf origin])", "origin task"},
    {"origin_op_name", Unit::kOpName, "its op", "NaN/Inf origin"},
    {"origin_op_type", Unit::kText, "its op type", "origin op type"},
    {"origin_method", Unit::kText, "stats (inputs finite, outputs not) or overflow_flag (the first flagged task)",
     "found by"},
    {"origin_detail", Unit::kText, "what was seen, e.g. output 0: 12 Inf", "origin detail"},
};
constexpr Column kOverflowExtraColumns[] = {
    {"pass", Unit::kText, "forward, backward or optimizer (PyTorch scripts; else null)"},
    {"origin", Unit::kText, "the origin's method when this task is the NaN/Inf origin, else null"},
};
constexpr auto kOverflowColumns = join_columns(kTaskInOrderColumns, kOverflowExtraColumns);

}  // namespace

constexpr TableSpec kOverflowSummaryTable{"overflow_summary",
                                          "Overflows",
                                          "The first overflowing op and the NaN/Inf origin; null without overflows.",
                                          kOverflowSummaryColumns,
                                          Layout::kRecord,
                                          Section::kAlert};
constexpr TableSpec kOverflowsTable{
    "overflows",
    "Overflowing tasks",
    "Tasks with the overflow flag in execution order (the first 1000).",
    kOverflowColumns,
    Layout::kRows,
    Section::kAlert,
    "check the first op's inputs and its output dtype range (f16 max 65504); keep it in f32 (precision mode) or "
    "scale the values",
    {},
    10};

namespace {

void run_overflows(RuleContext& c) {
  const OverflowReport o = overflows(c.data);
  if (o.count == 0) return;
  const auto text_or_null = [](const std::string& s) { return s.empty() ? Value() : Value(s); };
  Row summary = {o.count,          o.overflow_mode,   o.first->task_id,           o.first->op_name,
                 o.first->op_type, o.first->start_ns, text_or_null(o.first->pass)};
  if (o.origin) {
    for (Value v : {Value(o.origin->task.task_id), Value(o.origin->task.op_name), Value(o.origin->task.op_type),
                    Value(o.origin->method), Value(o.origin->detail)}) {
      summary.push_back(std::move(v));
    }
  } else {
    summary.resize(kOverflowSummaryTable.columns.size());
  }
  c.add(kOverflowSummaryTable, std::move(summary));
  for (std::size_t i = 0; i < o.items.size(); ++i) {
    const OverflowTask& t = o.items[i];
    const bool origin = o.origin && o.origin->task.task_id == t.task_id;
    c.add(kOverflowsTable,
          {static_cast<std::int64_t>(i + 1), t.task_id, t.op_name, t.op_type, std::int64_t{t.device_id}, t.start_ns,
           text_or_null(t.pass), origin ? Value(o.origin->method) : Value()});
  }
}

constexpr const TableSpec* kOverflowTables[] = {&kOverflowSummaryTable, &kOverflowsTable};

}  // namespace

extern const Rule kOverflowsRule{"overflows",   "overflowing tasks, the first one and the NaN/Inf origin",
                                 run_overflows, kOverflowTables,
                                 false,         "the overflow flags and tensor statistics of its dumps"};

}  // namespace npuscope::analyzer

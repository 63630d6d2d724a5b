// The tables of `npuscope compare` (Note [Finding tables]: declared once, written by any format),
// and the code that fills them from a CompareResult. Column names are the JSON keys and CSV headers
// `npuscope compare` has always written (msprobe's metric names in snake case).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "npuscope/comparator/compare_report.h"
#include "report_cells.h"

namespace npuscope::comparator {
namespace {

using analyzer::Column;
using analyzer::Layout;
using analyzer::Row;
using analyzer::Section;
using analyzer::Table;
using analyzer::TableSpec;
using analyzer::Unit;
using analyzer::Value;

constexpr Column kSummaryColumns[] = {
    {"npu_trace", Unit::kText, "the NPU trace", "NPU"},
    {"golden_trace", Unit::kText, "the golden trace", "golden"},
    {"mode", Unit::kText,
     "tensor (the dumps' data compared), stats (statistics only: both runs dumped with --dump stats) or mixed"},
    {"ops_compared", Unit::kCount, "paired ops with tensors dumped on either side"},
    {"passed", Unit::kCount, "ops whose compared outputs all pass"},
    {"failed", Unit::kCount, "ops with a failing output"},
    {"not_applicable", Unit::kCount, "ops none of whose outputs could be compared", "n/a"},
    {"unmatched_npu", Unit::kCount, "NPU ops with no golden op", "unmatched NPU ops"},
    {"unmatched_golden", Unit::kCount, "golden ops with no NPU op", "unmatched golden ops"},
    {"first_failing", Unit::kText,
     "the first failing op in execution order, in a line: name (type, call, task, pass): its worst cosine and max abs "
     "err; the reason of its first failing output; `none`",
     "first failing op"},
    {"first_introducing", Unit::kText,
     "the first op that introduced the error (its inputs match the golden run, its outputs do not), in a line; null "
     "when none",
     "first op that introduced the error"},
};
constexpr TableSpec kSummaryTable{"summary",       "Comparison",    "What was compared, and the verdict.",
                                  kSummaryColumns, Layout::kRecord, Section::kSummary};

// One op's verdict: the ops table and the first failing and first introducing ops.
constexpr Column kOpColumns[] = {
    {"op_name", Unit::kOpName, "the NPU op's name", "op"},
    {"op_type", Unit::kText, "its type", "type"},
    {"pass", Unit::kText, "forward, backward or optimizer (Note [Model pass of an op]); null when the trace has none"},
    {"verdict", Unit::kText, "pass, fail (an output fails) or n/a (no output compared): see Enumerations: verdict"},
    {"origin", Unit::kText,
     "introduced (it failed, its inputs did not), inherited (an input failed too) or none: see Enumerations: origin"},
    {"cosine", Unit::kSimilarity, "its outputs' lowest cosine; null when none was compared"},
    {"max_abs_err", Unit::kNumber, "its outputs' largest max abs err; null when none was compared", "max abs err"},
    {"call_index", Unit::kCount, "n-th call of its name (TASK.call_index)", "call", true},
    {"task_id", Unit::kTaskId, "the NPU task", "task", true},
    {"golden_task_id", Unit::kId, "the golden trace's task it was paired with", "golden task", true},
    {"start_ns", Unit::kNs, "when the NPU task started; null in a comparison read back from COMPARE_RESULT", "start",
     true},
    {"npu_overflow", Unit::kFlag, "the NPU task was flagged as overflowing (TASK.overflow)", "overflow", true},
    {"npu_underflow", Unit::kCount, "output elements the NPU task flushed to zero (TASK.underflow)", "underflow", true},
};
constexpr TableSpec kFirstFailingTable{"first_failing_op",
                                       "First failing op",
                                       "The first failing op in execution order; null when none fails.",
                                       kOpColumns,
                                       Layout::kRecord,
                                       Section::kDetail,
                                       {},
                                       {},
                                       analyzer::kNotInText};
constexpr TableSpec kFirstIntroducingTable{
    "first_introducing_op",
    "First op that introduced the error",
    "The first failing op whose inputs match the golden run (Note [Verdicts]); null when none.",
    kOpColumns,
    Layout::kRecord,
    Section::kDetail,
    {},
    {},
    analyzer::kNotInText};
constexpr TableSpec kOpsTable{"ops", "Worst ops",
                              "Every paired op with tensors, failing first, then by lowest cosine, then by largest "
                              "max abs err, then in execution order.",
                              kOpColumns};

constexpr Column kUnmatchedColumns[] = {
    {"op_name", Unit::kOpName, "the op's name", "op"},
    {"op_type", Unit::kText, "its type", "type"},
    {"call_index", Unit::kCount, "n-th call of its name", "call"},
    {"task_id", Unit::kId, "its task in its own trace", "task"},
};
constexpr TableSpec kUnmatchedNpuTable{"unmatched_npu",
                                       "Unmatched NPU ops",
                                       "NPU ops with no golden op.",
                                       kUnmatchedColumns,
                                       Layout::kRows,
                                       Section::kDetail,
                                       {},
                                       {},
                                       20};
constexpr TableSpec kUnmatchedGoldenTable{"unmatched_golden",
                                          "Unmatched golden ops",
                                          "Golden ops with no NPU op.",
                                          kUnmatchedColumns,
                                          Layout::kRows,
                                          Section::kDetail,
                                          {},
                                          {},
                                          20};

// One tensor pair: msprobe's compare_result rows.
constexpr Column kRowColumns[] = {
    {"op_name", Unit::kOpName, "the NPU op's name", "op"},
    {"op_type", Unit::kText, "its type", "type"},
    {"call_index", Unit::kCount, "n-th call of its name", "call"},
    {"tensor", Unit::kText, "input.N or output.N: the tensors pair by role and index"},
    {"shape", Unit::kText, "the NPU tensor's shape", "shape", true},
    {"dtype", Unit::kText, "its dtype", "dtype", true},
    {"golden_shape", Unit::kText, "the golden tensor's shape", "golden shape", true},
    {"golden_dtype", Unit::kText, "its dtype (compared by value when it differs)", "golden dtype", true},
    {"cosine", Unit::kSimilarity, "n.b / (|n| |b|); null when it does not apply"},
    {"max_abs_err", Unit::kNumber, "max |n - b|", "max abs err"},
    {"max_rel_err", Unit::kNumber, "max |n - b| / |b|", "max rel err"},
    {"one_thousandth_ratio", Unit::kRatio, "share of elements with relative error < 0.001", "1e-3 ratio", true},
    {"five_thousandth_ratio", Unit::kRatio, "share with relative error < 0.005", "5e-3 ratio", true},
    {"rmse", Unit::kNumber, "sqrt(mean((n - b)^2))", "RMSE"},
    {"rel_euclidean", Unit::kNumber, "sqrt(sum (n - b)^2 / sum b^2)", "rel euclidean", true},
    {"allclose", Unit::kFlag, "within torch.testing's tolerance for the golden dtype everywhere", "allclose", true},
    {"verdict", Unit::kText, "pass, fail or n/a (Note [Verdicts])"},
    {"origin", Unit::kText, "its op's: introduced, inherited or none"},
    {"reason", Unit::kText, "why it failed or could not be compared"},
    {"match", Unit::kText, "how its op was paired: name, name map, type+shape, type+order (Note [Op pairing])", "match",
     true},
    {"task_id", Unit::kTaskId, "the NPU task", "task", true},
    {"golden_task_id", Unit::kId, "the golden task; 0 if none", "golden task", true},
    {"pass", Unit::kText, "its op's pass; null when the trace has none", "pass", true},
    {"max_rel_diff", Unit::kNumber, "statistics mode: |max n - max b| / max(|max n|, |max b|); null otherwise",
     "max rel diff", true},
    {"min_rel_diff", Unit::kNumber, "statistics mode: the same of the minimums", "min rel diff", true},
    {"mean_rel_diff", Unit::kNumber, "statistics mode: the same of the means", "mean rel diff", true},
    {"norm_rel_diff", Unit::kNumber, "statistics mode: the same of the L2 norms", "norm rel diff", true},
    {"nan_inf_differ", Unit::kFlag, "statistics mode: the NaN or Inf counts differ", "NaN/Inf differ", true},
};
constexpr TableSpec kRowsTable{"rows",
                               "Tensors",
                               "Every compared tensor, op by op in execution order, inputs then outputs (msprobe's "
                               "compare_result). Metrics are null where they do not apply: in statistics mode, for a "
                               "tensor that cannot be compared, a cosine of one element.",
                               kRowColumns,
                               Layout::kRows,
                               Section::kDetail,
                               {},
                               {},
                               analyzer::kNotInText};

using report_cells::metric;
using report_cells::name;
using report_cells::number;
using report_cells::text_or_null;

// "layer0/attn/o_proj (MatMul, call 0, task 31, backward pass): cosine 0.960703, max abs err 1.044".
std::string op_line(const OpVerdict& op) {
  return op.op_name + " (" + op.op_type + ", call " + std::to_string(op.call_index) + ", task " +
         std::to_string(op.npu_task_id) + (op.pass.empty() ? "" : ", " + op.pass + " pass") + "): cosine " +
         number(op.worst_cosine, "%.6f") + ", max abs err " + number(op.worst_max_abs_err, "%.4g") +
         (op.npu_overflow ? "; it overflowed on the NPU" : "") +
         (op.npu_underflow > 0
              ? "; it underflowed on the NPU (" + std::to_string(op.npu_underflow) + " elements flushed to 0)"
              : "");
}

// The reason of an op's first failing output.
std::string failing_reason(const CompareResult& r, const OpVerdict& op) {
  for (const CompareRow& row : r.rows) {
    if (row.npu_task_id == op.npu_task_id && is(row.role, TensorRole::kOutput) && row.verdict == Verdict::kFail) {
      return row.tensor + ": " + row.reason;
    }
  }
  return "";
}

Table summary_table(const CompareResult& r) {
  const auto count = [](std::size_t n) { return static_cast<std::int64_t>(n); };
  Value failing = std::string("none"), introducing;
  if (r.first_failing) {
    const OpVerdict& op = r.ops[*r.first_failing];
    const std::string reason = failing_reason(r, op);
    failing = op_line(op) + (reason.empty() ? "" : "; " + reason);
  }
  if (r.first_introducing) {
    introducing = op_line(r.ops[*r.first_introducing]) + " (its inputs match the golden run, its outputs do not)";
  }
  Table t{&kSummaryTable, {}};
  t.add({r.npu_path, r.golden_path, r.mode, count(r.ops.size()), r.passed, r.failed, r.not_applicable,
         count(r.unmatched_npu.size()), count(r.unmatched_golden.size()), std::move(failing), std::move(introducing)});
  return t;
}

Row op_row(const OpVerdict& op) {
  return {op.op_name,
          op.op_type,
          text_or_null(op.pass),
          name(op.verdict),
          name(op.origin),
          metric(op.worst_cosine),
          metric(op.worst_max_abs_err),
          std::int64_t{op.call_index},
          op.npu_task_id,
          op.golden_task_id,
          op.start_ns >= 0 ? Value(op.start_ns) : Value(),
          op.npu_overflow,
          op.npu_underflow};
}

Table op_record(const TableSpec& spec, const CompareResult& r, const std::optional<std::size_t>& op) {
  Table t{&spec, {}};
  if (op) t.add(op_row(r.ops[*op]));
  return t;
}

// Failing ops first, then by cosine as shown (none, i.e. not comparable, first; then the lowest),
// then by max abs err, then execution order.
Table ops_table(const CompareResult& r) {
  std::vector<const OpVerdict*> order;
  for (const OpVerdict& op : r.ops) order.push_back(&op);
  const auto rank = [](const OpVerdict* op) {
    return op->verdict == Verdict::kFail ? 0 : op->verdict == Verdict::kPass ? 1 : 2;
  };
  const auto cosine = [](const OpVerdict* op) {
    return std::isnan(op->worst_cosine) ? -1 : std::round(op->worst_cosine * 1e6);
  };
  const auto error = [](const OpVerdict* op) { return std::isnan(op->worst_max_abs_err) ? -1 : op->worst_max_abs_err; };
  std::stable_sort(order.begin(), order.end(), [&](const OpVerdict* a, const OpVerdict* b) {
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    if (cosine(a) != cosine(b)) return cosine(a) < cosine(b);
    return error(a) > error(b);
  });
  Table t{&kOpsTable, {}};
  for (const OpVerdict* op : order) t.add(op_row(*op));
  return t;
}

Table unmatched_table(const TableSpec& spec, const std::vector<UnmatchedOp>& ops) {
  Table t{&spec, {}};
  for (const UnmatchedOp& op : ops) t.add({op.op_name, op.op_type, std::int64_t{op.call_index}, op.task_id});
  return t;
}

Row tensor_row(const CompareRow& row) {
  const TensorMetrics& m = row.metrics;
  const bool metrics = !row.stats_mode && m.comparable;
  const StatsDiff& s = row.stats;
  const bool stats = row.stats_mode;
  return {row.op_name,
          row.op_type,
          std::int64_t{row.call_index},
          row.tensor,
          row.shape,
          row.dtype,
          row.golden_shape,
          row.golden_dtype,
          metric(m.cosine, metrics),
          metric(m.max_abs_err, metrics),
          metric(m.max_rel_err, metrics),
          metric(m.one_thousandth_ratio, metrics),
          metric(m.five_thousandth_ratio, metrics),
          metric(m.rmse, metrics),
          metric(m.rel_euclidean, metrics),
          metrics ? Value(m.allclose) : Value(),
          name(row.verdict),
          name(row.origin),
          row.reason,
          name(row.match),
          row.npu_task_id,
          row.golden_task_id,
          text_or_null(row.pass),
          metric(s.max_rel, stats),
          metric(s.min_rel, stats),
          metric(s.mean_rel, stats),
          metric(s.norm_rel, stats),
          stats ? Value(s.nan_inf_differ) : Value()};
}

Table rows_table(const CompareResult& r) {
  Table t{&kRowsTable, {}};
  t.rows.reserve(r.rows.size());
  for (const CompareRow& row : r.rows) t.add(tensor_row(row));
  return t;
}

}  // namespace

analyzer::Report compare_report(const CompareResult& r, int top) {
  analyzer::Report report;
  report.rules = {"compare"};
  report.notes = r.notes;
  if (!r.stored) report.tables.push_back(summary_table(r));
  Table ops = ops_table(r);
  if (top > 0 && ops.rows.size() > static_cast<std::size_t>(top)) {
    report.notes.push_back("ops: the " + std::to_string(top) + " worst of " + std::to_string(ops.rows.size()) +
                           " (--top N: more; JSON and CSV have all)");
    ops.rows.resize(static_cast<std::size_t>(top));
  }
  report.tables.push_back(std::move(ops));
  report.tables.push_back(op_record(kFirstFailingTable, r, r.first_failing));
  report.tables.push_back(op_record(kFirstIntroducingTable, r, r.first_introducing));
  if (!r.stored) {
    report.tables.push_back(unmatched_table(kUnmatchedNpuTable, r.unmatched_npu));
    report.tables.push_back(unmatched_table(kUnmatchedGoldenTable, r.unmatched_golden));
  }
  report.tables.push_back(rows_table(r));
  return report;
}

std::vector<const TableSpec*> compare_table_specs() {
  return {&kSummaryTable,         &kFirstFailingTable, &kFirstIntroducingTable, &kOpsTable, &kUnmatchedNpuTable,
          &kUnmatchedGoldenTable, &kRowsTable};
}

std::string compare_tables_markdown() {
  std::ostringstream o;
  o << kCompareGeneratedMarker << "\n\n## Compare tables\n\n"
    << "Every table below is a key of `npuscope compare --format json` (an array of row objects keyed by the column "
       "names; a record table is one object, or null), a file `<table>.csv` of `--format csv -o DIR` and, unless "
       "it says it is not, a section of the text report; the viewer's Compare panel draws them from an annotated "
       "trace (COMPARE_RESULT). Cells are integers for count, id, task id and ns; numbers for number, ratio (a share "
       "from 0 to 1) and similarity (cosine, six decimals in text); strings for text and op name; booleans for "
       "flag; null when there is no value.\n";
  for (const TableSpec* t : compare_table_specs()) {
    o << analyzer::table_markdown(*t, t->text_rows == analyzer::kNotInText ? "; not in the text report" : "");
  }
  o << "\n## Dump compare tables\n\n"
    << "The tables of a comparison of two msprobe dumps (\"Comparing msprobe dumps\" above), keyed and written as "
       "those above. `compare_result` has the columns of msprobe's compare_result for the mode, its cells the text "
       "msprobe writes (numbers as Python writes them, N/A, Nan, unsupported, ...).\n";
  for (const TableSpec* t : dump_compare_table_specs()) {
    o << analyzer::table_markdown(*t, t->text_rows == analyzer::kNotInText ? "; not in the text report" : "");
  }
  return o.str();
}

}  // namespace npuscope::comparator

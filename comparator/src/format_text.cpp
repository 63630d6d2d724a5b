// The terminal report: the verdict first (the first failing and the first introducing op), then
// the worst ops, then what could not be paired.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "npuscope/comparator/format.h"

namespace npuscope::comparator {
namespace {

using collector::format_count;
using collector::TextReport;
using collector::TextTable;

std::string number(double v, const char* format = "%.6f") {
  if (!std::isfinite(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string op_line(const OpVerdict& op) {
  return op.op_name + " (" + op.op_type + ", call " + std::to_string(op.call_index) + ", task " +
         std::to_string(op.npu_task_id) + (op.pass.empty() ? "" : ", " + op.pass + " pass") + "): cosine " +
         number(op.worst_cosine) + ", max abs err " + number(op.worst_max_abs_err, "%.4g") +
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

void summary(TextReport& w, const CompareResult& r) {
  w.heading("Comparison (" + r.mode + " mode)");
  w.line("NPU:    " + r.npu_path);
  w.line("golden: " + r.golden_path);
  w.line(format_count(static_cast<std::int64_t>(r.ops.size())) +
         " ops compared: " + w.green(format_count(r.passed) + " passed") + ", " +
         (r.failed ? w.red(format_count(r.failed) + " failed") : "0 failed") + ", " + format_count(r.not_applicable) +
         " n/a; unmatched: " + format_count(static_cast<std::int64_t>(r.unmatched_npu.size())) + " NPU ops, " +
         format_count(static_cast<std::int64_t>(r.unmatched_golden.size())) + " golden ops");
  for (const std::string& note : r.notes) w.line(w.yellow("note: " + note));
  if (r.first_failing) {
    const OpVerdict& op = r.ops[*r.first_failing];
    w.line(w.red("first failing op:") + " " + op_line(op) + "; " + failing_reason(r, op));
  } else {
    w.line(w.green("no op fails"));
  }
  if (r.first_introducing) {
    const OpVerdict& op = r.ops[*r.first_introducing];
    w.line(w.red("first op that introduced the error:") + " " + op_line(op) +
           " (its inputs match the golden run, its outputs do not)");
  }
}

void worst_ops(TextReport& w, const CompareResult& r, int top) {
  std::vector<const OpVerdict*> order;
  for (const OpVerdict& op : r.ops) order.push_back(&op);
  // Failing ops first, then by cosine as shown (none, i.e. not comparable, first; then the lowest),
  // then by max abs err, then execution order.
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
  order.resize(std::min<std::size_t>(order.size(), static_cast<std::size_t>(std::max(top, 0))));
  if (order.empty()) return;
  w.heading("Worst ops");
  // The pass column only for a trace that knows passes (a PyTorch script's).
  const bool passes = std::any_of(r.ops.begin(), r.ops.end(), [](const OpVerdict& op) { return !op.pass.empty(); });
  std::vector<TextTable::Column> columns = {{"op"}, {"type"}};
  if (passes) columns.push_back({"pass"});
  columns.insert(columns.end(), {{"verdict"}, {"origin"}, {"cosine", true}, {"max abs err", true}});
  TextTable t(columns);
  for (const OpVerdict* op : order) {
    const std::string verdict = verdict_name(op->verdict);
    std::vector<std::string> cells = {op->op_name, op->op_type};
    if (passes) cells.push_back(op->pass.empty() ? "-" : op->pass);
    cells.insert(cells.end(), {op->verdict == Verdict::kFail ? w.red(verdict) : verdict, origin_name(op->origin),
                               number(op->worst_cosine), number(op->worst_max_abs_err, "%.4g")});
    t.add(cells);
  }
  w.table(t);
}

void unmatched(TextReport& w, const char* side, const std::vector<UnmatchedOp>& ops) {
  if (ops.empty()) return;
  w.heading(std::string("Unmatched ") + side + " ops: " + format_count(static_cast<std::int64_t>(ops.size())));
  TextTable t({{"op"}, {"type"}, {"call", true}, {"task", true}});
  for (std::size_t i = 0; i < std::min<std::size_t>(ops.size(), 20); ++i) {
    t.add({ops[i].op_name, ops[i].op_type, std::to_string(ops[i].call_index), std::to_string(ops[i].task_id)});
  }
  w.table(t);
  if (ops.size() > 20)
    w.line("... and " + format_count(static_cast<std::int64_t>(ops.size() - 20)) + " more (all in --format json)");
}

}  // namespace

void write_text(const CompareResult& r, std::ostream& out, const TextStyle& style, int top) {
  TextReport w(out, style);
  summary(w, r);
  worst_ops(w, r, top);
  unmatched(w, "NPU", r.unmatched_npu);
  unmatched(w, "golden", r.unmatched_golden);
}

}  // namespace npuscope::comparator

#include "npuscope/comparator/results_table.h"

#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

#include "compare_ops.h"
#include "npuscope/collector/compare_results.h"
#include "verdict.h"

namespace npuscope::comparator {

void store_results(const CompareResult& result, const std::string& path, bool new_file) {
  const auto writer = collector::CompareResultWriter::open(path, new_file);
  constexpr double kNone = std::numeric_limits<double>::quiet_NaN();  // NULL in SQL
  std::vector<collector::CompareResultRow> rows;
  rows.reserve(result.rows.size());
  for (const CompareRow& r : result.rows) {
    const TensorMetrics& m = r.metrics;
    const bool applies = !r.stats_mode && m.comparable;
    const auto metric = [&](double v) { return applies ? v : kNone; };
    rows.push_back({r.npu_task_id, r.golden_task_id, writer->intern(r.op_name), writer->intern(r.op_type), r.call_index,
                    r.role, r.index, static_cast<std::int32_t>(r.verdict), static_cast<std::int32_t>(r.origin),
                    metric(m.cosine), metric(m.max_abs_err), metric(m.max_rel_err), metric(m.one_thousandth_ratio),
                    metric(m.five_thousandth_ratio), metric(m.rmse), metric(m.rel_euclidean),
                    applies ? (m.allclose ? 1 : 0) : -1, r.reason.empty() ? 0 : writer->intern(r.reason)});
  }
  writer->add(rows);
  const auto task_of = [&](const std::optional<std::size_t>& op) {
    return op ? std::to_string(result.ops[*op].npu_task_id) : std::string("0");
  };
  writer->set_meta("compare.npu_trace", result.npu_path);
  writer->set_meta("compare.golden_trace", result.golden_path);
  writer->set_meta("compare.mode", result.mode);
  writer->set_meta("compare.first_failing_task", task_of(result.first_failing));
  writer->set_meta("compare.first_introducing_task", task_of(result.first_introducing));
  writer->commit();
}

namespace {

// A stored row back as the comparator wrote it, as far as COMPARE_RESULT keeps it: allclose -1
// says the metrics did not apply (not comparable, or statistics mode).
CompareRow row_of(const collector::TraceReader& trace, const collector::CompareResultRow& s) {
  CompareRow r{.op_name = trace.string(s.name_id),
               .op_type = trace.string(s.op_type_id),
               .call_index = s.call_index,
               .npu_task_id = s.task_id,
               .golden_task_id = s.golden_task_id,
               .role = s.role,
               .index = s.idx,
               .tensor = tensor_label(s.role, s.idx)};
  TensorMetrics& m = r.metrics;
  m.comparable = s.allclose >= 0;
  m.allclose = s.allclose == 1;
  std::tie(m.cosine, m.max_abs_err, m.max_rel_err, m.one_thousandth_ratio, m.five_thousandth_ratio, m.rmse,
           m.rel_euclidean) = std::tie(s.cosine, s.max_abs_err, s.max_rel_err, s.one_thousandth_ratio,
                                       s.five_thousandth_ratio, s.rmse, s.rel_euclidean);
  r.verdict = enum_from_value<Verdict>(s.verdict).value_or(Verdict::kNotApplicable);
  r.reason = s.reason_id != 0 ? trace.string(s.reason_id) : "";
  return r;
}

}  // namespace

CompareResult load_results(const collector::TraceReader& trace) {
  CompareResult result;
  result.stored = true;
  result.npu_path = trace.meta("compare.npu_trace").value_or(trace.path());
  result.golden_path = trace.meta("compare.golden_trace").value_or("");
  result.mode = trace.meta("compare.mode").value_or("");
  trace.for_each([&](const collector::CompareResultRow& s) {  // by task, role, index
    result.rows.push_back(row_of(trace, s));
  });
  for (std::size_t first = 0, last = 0; first < result.rows.size(); first = last) {
    const CompareRow& r = result.rows[first];
    while (last < result.rows.size() && result.rows[last].npu_task_id == r.npu_task_id) ++last;
    add_judged_op(result, {r.op_name, r.op_type, r.call_index, "", r.npu_task_id, r.golden_task_id, -1}, first, last);
  }
  return result;
}

}  // namespace npuscope::comparator

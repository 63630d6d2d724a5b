#include "npuscope/comparator/results_table.h"

#include <cmath>
#include <limits>
#include <vector>

#include "npuscope/collector/compare_results.h"

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

}  // namespace npuscope::comparator

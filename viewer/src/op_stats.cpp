#include "npuscope/viewer/op_stats.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>

namespace npuscope::viewer {

std::vector<OpTypeStats> op_type_stats(const TimelineModel& model) {
  std::unordered_map<std::int32_t, OpTypeStats> by_type;
  std::int64_t all_ns = 0;
  for (const Lane& lane : model.lanes()) {
    if (lane.kind != LaneKind::kStream) continue;
    for (const TimelineItem& item : lane.rows[0]) {
      const std::int64_t d = item.end_ns() - item.start_ns;
      OpTypeStats& s = by_type[model.colour_key(lane, item)];
      if (s.count == 0 || d < s.min_ns) s.min_ns = d;
      s.max_ns = std::max(s.max_ns, d);
      ++s.count;
      s.total_ns += d;
      all_ns += d;
    }
  }
  std::vector<OpTypeStats> rows;
  rows.reserve(by_type.size());
  for (auto& [id, s] : by_type) {
    s.op_type_id = id;
    s.op_type = model.str(id).empty() ? "(unnamed)" : model.str(id);
    s.avg_ns = static_cast<double>(s.total_ns) / static_cast<double>(s.count);
    s.ratio_pct = all_ns > 0 ? 100.0 * static_cast<double>(s.total_ns) / static_cast<double>(all_ns) : 0;
    rows.push_back(std::move(s));
  }
  sort_op_stats(rows, OpStatsColumn::kTotal, false);
  return rows;
}

void sort_op_stats(std::vector<OpTypeStats>& rows, OpStatsColumn by, bool ascending) {
  const auto key = [by](const OpTypeStats& s) -> double {
    switch (by) {
      case OpStatsColumn::kCount: return static_cast<double>(s.count);
      case OpStatsColumn::kTotal: return static_cast<double>(s.total_ns);
      case OpStatsColumn::kAverage: return s.avg_ns;
      case OpStatsColumn::kMin: return static_cast<double>(s.min_ns);
      case OpStatsColumn::kMax: return static_cast<double>(s.max_ns);
      case OpStatsColumn::kRatio: return s.ratio_pct;
      case OpStatsColumn::kOpType: break;
    }
    return 0;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const OpTypeStats& a, const OpTypeStats& b) {
    if (by == OpStatsColumn::kOpType) return ascending ? a.op_type < b.op_type : b.op_type < a.op_type;
    // Ties by name, so that the order does not depend on the hash map's.
    const double ka = key(a), kb = key(b);
    if (ka != kb) return ascending ? ka < kb : kb < ka;
    return a.op_type < b.op_type;
  });
}

}  // namespace npuscope::viewer

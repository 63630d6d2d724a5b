#include "npuscope/viewer/op_stats.h"

#include <algorithm>

namespace npuscope::viewer {

std::vector<OpTypeStats> op_type_stats(const TimelineModel& model) {
  collector::OpStatisticAccumulator stats;  // decides which tasks count (not the cpu backend's lanes)
  for (const Lane& lane : model.lanes()) {
    if (lane.kind != LaneKind::kStream) continue;
    for (const TimelineItem& item : lane.rows[0]) {
      stats.add(lane.device_id, model.colour_key(lane, item), item.task_type(), item.start_ns, item.end_ns());
    }
  }
  return stats.rows(model.trace());
}

void sort_op_stats(std::vector<OpTypeStats>& rows, OpStatsColumn by, bool ascending) {
  const auto key = [by](const OpTypeStats& s) -> double {
    switch (by) {
      case OpStatsColumn::kDevice: return s.device_id;
      case OpStatsColumn::kCoreType: return static_cast<double>(s.task_type);
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
    // Ties by name, so that the order is a function of the rows alone.
    const double ka = key(a), kb = key(b);
    if (ka != kb) return ascending ? ka < kb : kb < ka;
    return a.op_type < b.op_type;
  });
}

}  // namespace npuscope::viewer

// The op statistics panel's table, computed from the timeline model (no second read of the trace):
// per op type, the count and total / average / min / max time of its tasks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "npuscope/viewer/timeline_model.h"

namespace npuscope::viewer {

struct OpTypeStats {
  std::int32_t op_type_id = 0;
  std::string op_type;
  std::int64_t count = 0, total_ns = 0, min_ns = 0, max_ns = 0;
  double avg_ns = 0, ratio_pct = 0;  // ratio: share of all task time
};

enum class OpStatsColumn { kOpType, kCount, kTotal, kAverage, kMin, kMax, kRatio };

// Every op type of the stream lanes, most total time first.
std::vector<OpTypeStats> op_type_stats(const TimelineModel& model);
void sort_op_stats(std::vector<OpTypeStats>& rows, OpStatsColumn by, bool ascending);

}  // namespace npuscope::viewer

// The op statistics panel's table: msprof's op_statistic, counted by the collector's rule
// (Note [What op_statistic counts] in npuscope/collector/op_statistic.h) over the tasks of the
// timeline model (no second read of the trace).
#pragma once

#include <vector>

#include "npuscope/collector/op_statistic.h"
#include "npuscope/viewer/timeline_model.h"

namespace npuscope::viewer {

using OpTypeStats = collector::OpStatisticRow;

// The panel's columns, in its order.
enum class OpStatsColumn { kDevice, kOpType, kCoreType, kCount, kTotal, kAverage, kMin, kMax, kRatio };

// Per device, op type and core type, in the collector's order (by device, most total time first).
std::vector<OpTypeStats> op_type_stats(const TimelineModel& model);
void sort_op_stats(std::vector<OpTypeStats>& rows, OpStatsColumn by, bool ascending);

}  // namespace npuscope::viewer

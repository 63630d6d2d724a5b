// Op statistics: msprof's op_statistic, counted by the collector (Note [What op_statistic counts] in
// npuscope/collector/op_statistic.h) over the kernels already in memory, and written as a table.
#include <cmath>

#include "npuscope/collector/op_statistic.h"
#include "rules.h"

namespace npuscope::analyzer {
namespace {

constexpr Column kOpStatisticsColumns[] = {
    {"device_id", Unit::kId, "the NPU device", "device"},
    {"op_type", Unit::kText, "the op type"},
    {"core_type", Unit::kText, "AI_CORE, AI_VECTOR_CORE or AI_CPU (TASK.task_type)"},
    {"count", Unit::kCount, "its kernel tasks"},
    {"total_ns", Unit::kNs, "their time"},
    {"avg_ns", Unit::kNs, "total / count, to the nearest ns"},
    {"min_ns", Unit::kNs, "the shortest"},
    {"max_ns", Unit::kNs, "the longest"},
    {"ratio_pct", Unit::kPercent, "total / the device's kernel time", "ratio"},
};

}  // namespace

constexpr TableSpec kOpStatisticsTable{
    "op_statistics", "Op statistics (by total time)",
    "msprof's op_statistic: per device, op type and core type, by device and then total time. The same rows as "
    "`npuscope export --csv`'s op_statistic.csv and the viewer's op statistics panel.",
    kOpStatisticsColumns};

namespace {

void run_op_statistics(RuleContext& c) {
  collector::OpStatisticAccumulator stats;
  for (const Task& t : c.data.kernels) stats.add(t.device_id, t.op_type_id, t.task_type, t.start_ns, t.end_ns);
  for (const collector::OpStatisticRow& s : stats.rows(c.data.reader)) {
    c.add(kOpStatisticsTable,
          {std::int64_t{s.device_id}, s.op_type, std::string(collector::task_type_name(s.task_type)), s.count,
           s.total_ns, static_cast<std::int64_t>(std::llround(s.avg_ns)), s.min_ns, s.max_ns, s.ratio_pct});
  }
}

constexpr const TableSpec* kOpStatisticsTables[] = {&kOpStatisticsTable};

}  // namespace

extern const Rule kOpStatisticsRule{"op_statistics", "msprof's op_statistic per op type and core type",
                                    run_op_statistics, kOpStatisticsTables};

}  // namespace npuscope::analyzer

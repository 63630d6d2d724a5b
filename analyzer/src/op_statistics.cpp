// Op statistics per op type and core type: msprof's op_statistic (count, total, avg, min, max, ratio).
#include <algorithm>
#include <map>

#include "analyses.h"

namespace npuscope::analyzer {

std::vector<OpStat> op_statistics(const TraceData& data) {
  std::map<std::pair<std::string, std::int32_t>, OpStat> by_type;
  std::int64_t all_ns = 0;
  for (const TaskRow& t : data.kernels) {
    OpStat& s = by_type[{data.str(t.op_type_id), t.task_type}];
    const std::int64_t d = duration(t);
    s.min_ns = s.count == 0 ? d : std::min(s.min_ns, d);
    s.max_ns = std::max(s.max_ns, d);
    ++s.count;
    s.total_ns += d;
    all_ns += d;
  }
  std::vector<OpStat> out;
  for (auto& [key, s] : by_type) {
    s.op_type = key.first;
    s.task_type = collector::task_type_name(static_cast<collector::TaskType>(key.second));
    s.avg_ns = static_cast<double>(s.total_ns) / static_cast<double>(s.count);
    s.ratio_pct = all_ns > 0 ? 100.0 * static_cast<double>(s.total_ns) / static_cast<double>(all_ns) : 0;
    out.push_back(std::move(s));
  }
  std::stable_sort(out.begin(), out.end(), [](const OpStat& a, const OpStat& b) { return a.total_ns > b.total_ns; });
  return out;
}

}  // namespace npuscope::analyzer

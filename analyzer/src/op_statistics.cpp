// Op statistics per op type and core type: msprof's op_statistic (count, total, avg, min, max, ratio).
#include <algorithm>
#include <map>

#include "analyses.h"

namespace npuscope::analyzer {

std::vector<OpStat> op_statistics(const TraceData& data) {
  std::map<std::pair<std::int32_t, std::int32_t>, OpStat> by_type;  // (op type id, task type): few keys
  std::int64_t all_ns = 0;
  std::pair<std::int32_t, std::int32_t> last_key{-1, -1};
  OpStat* last = nullptr;
  for (const Task& t : data.kernels) {
    const std::pair<std::int32_t, std::int32_t> key{t.op_type_id, t.task_type};
    if (!last || key != last_key) {  // runs of one op type are common
      last = &by_type[key];
      last_key = key;
    }
    OpStat& s = *last;
    const std::int64_t d = duration(t);
    s.min_ns = s.count == 0 ? d : std::min(s.min_ns, d);
    s.max_ns = std::max(s.max_ns, d);
    ++s.count;
    s.total_ns += d;
    all_ns += d;
  }
  std::vector<OpStat> out;
  for (auto& [key, s] : by_type) {
    s.op_type = data.str(key.first);
    s.task_type = collector::task_type_name(key.second);
    s.avg_ns = static_cast<double>(s.total_ns) / static_cast<double>(s.count);
    s.ratio_pct = all_ns > 0 ? 100.0 * static_cast<double>(s.total_ns) / static_cast<double>(all_ns) : 0;
    out.push_back(std::move(s));
  }
  std::stable_sort(out.begin(), out.end(), [](const OpStat& a, const OpStat& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.op_type < b.op_type;
  });
  return out;
}

}  // namespace npuscope::analyzer

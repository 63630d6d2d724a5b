// AI CPU tasks and fallbacks (ops with no NPU kernel that ran their CPU kernel as an AI CPU task),
// grouped by op type, costliest first.
#include <algorithm>
#include <map>

#include "analyses.h"

namespace npuscope::analyzer {

std::vector<FallbackOp> fallback_ops(const TraceData& data) {
  std::map<std::pair<std::string, bool>, FallbackOp> by_type;
  for (const Task& t : data.kernels) {
    if (!is(t.task_type, TaskType::kAiCpu) && !t.fallback) continue;
    FallbackOp& f = by_type[{data.str(t.op_type_id), t.fallback != 0}];
    if (f.count == 0) f.example_op_name = data.str(t.name_id);
    ++f.count;
    f.total_ns += duration(t);
    f.max_ns = std::max(f.max_ns, duration(t));
  }
  std::vector<FallbackOp> out;
  for (auto& [key, f] : by_type) {
    f.op_type = key.first;
    f.fallback = key.second;
    f.avg_ns = static_cast<double>(f.total_ns) / static_cast<double>(f.count);
    out.push_back(std::move(f));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const FallbackOp& a, const FallbackOp& b) { return a.total_ns > b.total_ns; });
  return out;
}

}  // namespace npuscope::analyzer

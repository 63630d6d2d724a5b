// op_statistic, counted once: see Note [What op_statistic counts] in op_statistic.h.
#include "npuscope/collector/op_statistic.h"

#include <algorithm>

namespace npuscope::collector {

void OpStatisticAccumulator::add(std::int32_t device_id, StringId op_type_id, std::int32_t task_type,
                                 std::int64_t start_ns, std::int64_t end_ns) {
  if (!counts_in_op_statistic(device_id, task_type)) return;
  const Key key{device_id, op_type_id, task_type};
  if (last_ == nullptr || key != last_key_) {
    last_ = &groups_[key];
    last_key_ = key;
  }
  Durations& d = *last_;
  const std::int64_t ns = op_statistic_duration(start_ns, end_ns);
  d.min = d.count == 0 ? ns : std::min(d.min, ns);
  d.max = std::max(d.max, ns);
  ++d.count;
  d.total = add_saturated(d.total, ns);
}

std::vector<OpStatisticRow> OpStatisticAccumulator::rows(const TraceReader& strings) const {
  std::map<std::int32_t, std::int64_t> device_total;
  for (const auto& [key, d] : groups_) {
    std::int64_t& total = device_total[std::get<0>(key)];
    total = add_saturated(total, d.total);
  }
  std::vector<OpStatisticRow> out;
  out.reserve(groups_.size());
  for (const auto& [key, d] : groups_) {
    const auto [device, op_type, task_type] = key;
    const std::int64_t all = device_total[device];
    out.push_back({device, strings.string(op_type), static_cast<TaskType>(task_type), d.count, d.total, d.min, d.max,
                   static_cast<double>(d.total) / static_cast<double>(d.count),
                   all > 0 ? 100.0 * static_cast<double>(d.total) / static_cast<double>(all) : 0.0});
  }
  std::stable_sort(out.begin(), out.end(), [](const OpStatisticRow& a, const OpStatisticRow& b) {
    if (a.device_id != b.device_id) return a.device_id < b.device_id;
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    if (a.op_type != b.op_type) return a.op_type < b.op_type;
    return a.task_type < b.task_type;
  });
  return out;
}

std::vector<OpStatisticRow> op_statistic(const TraceReader& reader) {
  OpStatisticAccumulator acc;
  reader.for_each([&](const TaskRow& t) { acc.add(t); });
  return acc.rows(reader);
}

}  // namespace npuscope::collector

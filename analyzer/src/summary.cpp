// Summary: span, device busy %, per-stream utilisation, host API time.
#include <algorithm>
#include <map>

#include "analyses.h"

namespace npuscope::analyzer {

std::vector<std::pair<std::int64_t, std::int64_t>> busy_intervals(const std::vector<const TaskRow*>& tasks) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  for (const TaskRow* t : tasks) {  // sorted by start: extend the last interval or open one
    if (!out.empty() && t->start_ns <= out.back().second) {
      out.back().second = std::max(out.back().second, t->end_ns);
    } else {
      out.emplace_back(t->start_ns, t->end_ns);
    }
  }
  return out;
}

Summary summarize(const TraceData& data) {
  Summary s;
  s.complete = data.reader.complete();
  s.command = data.reader.meta("command").value_or("");
  s.tasks = static_cast<std::int64_t>(data.kernels.size());
  std::map<std::int32_t, std::vector<const TaskRow*>> by_device;
  std::map<std::pair<std::int32_t, std::int32_t>, std::vector<const TaskRow*>> by_stream;
  for (const TaskRow& t : data.kernels) {
    by_device[t.device_id].push_back(&t);
    by_stream[{t.device_id, t.stream_id}].push_back(&t);
  }
  std::int64_t first = 0, last = 0;
  for (const auto& [id, tasks] : by_device) {
    DeviceUse d;
    d.device_id = id;
    if (const DeviceInfoRow* info = data.device(id)) d.name = info->name;
    d.tasks = static_cast<std::int64_t>(tasks.size());
    d.first_ns = tasks.front()->start_ns;
    for (const auto& [a, b] : busy_intervals(tasks)) {
      d.busy_ns += b - a;
      d.last_ns = std::max(d.last_ns, b);
    }
    d.busy_pct = d.last_ns > d.first_ns ? 100.0 * static_cast<double>(d.busy_ns) / static_cast<double>(d.last_ns - d.first_ns) : 0;
    first = s.devices.empty() ? d.first_ns : std::min(first, d.first_ns);
    last = std::max(last, d.last_ns);
    s.devices.push_back(d);
  }
  s.span_ns = last - first;
  for (const auto& [key, tasks] : by_stream) {
    StreamUse u;
    u.device_id = key.first;
    u.stream_id = key.second;
    u.tasks = static_cast<std::int64_t>(tasks.size());
    for (const auto& [a, b] : busy_intervals(tasks)) u.busy_ns += b - a;
    const auto device = std::find_if(s.devices.begin(), s.devices.end(),
                                     [&](const DeviceUse& d) { return d.device_id == key.first; });
    const std::int64_t span = device->last_ns - device->first_ns;
    u.utilisation = span > 0 ? static_cast<double>(u.busy_ns) / static_cast<double>(span) : 0;
    s.streams.push_back(u);
  }
  std::map<std::int32_t, std::int64_t> thread_end;  // per thread: nested calls count once
  for (const ApiRow& a : data.apis) {  // in start order
    ++s.api_calls;
    std::int64_t& end = thread_end[a.thread_id];
    s.host_api_ns += std::max<std::int64_t>(0, a.end_ns - std::max(a.start_ns, end));
    end = std::max(end, a.end_ns);
  }
  for (const collector::StatRow& stat : data.reader.stats()) {
    if (stat.name == "dropped_records") s.dropped_records = stat.value;  // the total; per kind beside it
  }
  return s;
}

}  // namespace npuscope::analyzer

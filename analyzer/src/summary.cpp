// Summary: span, device busy %, per-stream utilisation, host API time.
#include <algorithm>
#include <map>

#include "analyses.h"

namespace npuscope::analyzer {

namespace {

// The busy time of a set of tasks seen in start order: the length of the union of their intervals.
struct BusyTime {
  std::int64_t tasks = 0, busy_ns = 0, first_ns = 0, start = 0, end = 0;  // [start, end): the open interval

  void add(const Task& t) {
    if (tasks++ == 0) {
      first_ns = start = t.start_ns;
      end = t.end_ns;
    } else if (t.start_ns <= end) {
      end = std::max(end, t.end_ns);
    } else {
      busy_ns += end - start;
      start = t.start_ns;
      end = t.end_ns;
    }
  }
  std::int64_t total_ns() const { return tasks ? busy_ns + (end - start) : 0; }
};

}  // namespace

Summary summarize(const TraceData& data) {
  Summary s;
  s.complete = data.reader.complete();
  s.command = data.reader.meta("command").value_or("");
  s.tasks = static_cast<std::int64_t>(data.kernels.size());
  std::map<std::int32_t, BusyTime> by_device;  // devices and streams are few
  std::map<std::pair<std::int32_t, std::int32_t>, BusyTime> by_stream;
  std::pair<std::int32_t, std::int32_t> last_stream{0, 0};
  BusyTime *on_device = nullptr, *on_stream = nullptr;
  for (const Task& t : data.kernels) {  // in start order
    if (!on_stream || last_stream != std::pair{t.device_id, t.stream_id}) {
      last_stream = {t.device_id, t.stream_id};
      on_device = &by_device[t.device_id];
      on_stream = &by_stream[last_stream];
    }
    on_device->add(t);
    on_stream->add(t);
  }
  std::int64_t first = 0, last = 0;
  for (const auto& [id, busy] : by_device) {
    DeviceUse d;
    d.device_id = id;
    if (const DeviceInfoRow* info = data.device(id)) d.name = info->name;
    d.tasks = busy.tasks;
    d.first_ns = busy.first_ns;
    d.busy_ns = busy.total_ns();
    d.last_ns = busy.end;
    d.busy_pct = d.last_ns > d.first_ns ? 100.0 * static_cast<double>(d.busy_ns) / static_cast<double>(d.last_ns - d.first_ns) : 0;
    first = s.devices.empty() ? d.first_ns : std::min(first, d.first_ns);
    last = std::max(last, d.last_ns);
    s.devices.push_back(d);
  }
  s.span_ns = last - first;
  for (const auto& [key, busy] : by_stream) {
    StreamUse u;
    u.device_id = key.first;
    u.stream_id = key.second;
    u.tasks = busy.tasks;
    u.busy_ns = busy.total_ns();
    const auto device = std::find_if(s.devices.begin(), s.devices.end(),
                                     [&](const DeviceUse& d) { return d.device_id == key.first; });
    const std::int64_t span = device->last_ns - device->first_ns;
    u.utilisation = span > 0 ? static_cast<double>(u.busy_ns) / static_cast<double>(span) : 0;
    s.streams.push_back(u);
  }
  std::map<std::int32_t, std::int64_t> thread_end;  // per thread: nested calls count once
  for (const Api& a : data.apis) {  // in start order
    ++s.api_calls;
    std::int64_t& end = thread_end[a.thread_id];
    s.host_api_ns += std::max<std::int64_t>(0, a.end_ns - std::max(a.start_ns, end));
    end = std::max(end, a.end_ns);
  }
  s.data_loss = collector::data_loss(data.reader.stats());
  for (const collector::StatValue& stat : s.data_loss) {
    if (stat.name == collector::stat_name(collector::StatId::kDroppedRecords)) s.dropped_records = stat.value;
  }
  return s;
}

}  // namespace npuscope::analyzer

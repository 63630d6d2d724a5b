// Summary: span, device busy %, per-stream utilisation, host API time, sanitizer findings.
#include <algorithm>
#include <map>

#include "analyses.h"
#include "rules.h"

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
    d.busy_pct = d.last_ns > d.first_ns
                     ? 100.0 * static_cast<double>(d.busy_ns) / static_cast<double>(d.last_ns - d.first_ns)
                     : 0;
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
    const std::int32_t device_id = key.first;  // a structured binding clang 14 cannot capture
    const auto device =
        std::find_if(s.devices.begin(), s.devices.end(), [&](const DeviceUse& d) { return d.device_id == device_id; });
    const std::int64_t span = device->last_ns - device->first_ns;
    u.utilisation = span > 0 ? static_cast<double>(u.busy_ns) / static_cast<double>(span) : 0;
    s.streams.push_back(u);
  }
  std::map<std::int32_t, std::int64_t> thread_end;  // per thread: nested calls count once
  for (const Api& a : data.apis) {                  // in start order
    ++s.api_calls;
    std::int64_t& end = thread_end[a.thread_id];
    s.host_api_ns = add_ns(s.host_api_ns, std::max<std::int64_t>(0, a.end_ns - std::max(a.start_ns, end)));
    end = std::max(end, a.end_ns);
  }
  s.data_loss = collector::data_loss(data.reader.stats());
  for (const collector::StatValue& stat : s.data_loss) {
    if (stat.name == collector::stat_name(collector::StatId::kDroppedRecords)) s.dropped_records = stat.value;
  }
  // Custom kernels are checked by the opkit sanitizer: 0 findings says something only when one ran.
  const std::int64_t findings = data.reader.count("KERNEL_FINDING");
  if (findings > 0 || data.reader.count("KERNEL_BLOCK") > 0) s.kernel_findings = findings;
  return s;
}

namespace {

constexpr Column kSummaryColumns[] = {
    {"command", Unit::kText, "the profiled command line (META command)"},
    {"complete", Unit::kFlag, "false when the program did not exit cleanly: the trace ends at its last commit"},
    {"tasks", Unit::kCount, "kernel tasks on NPU devices", "kernel tasks"},
    {"span_ns", Unit::kNs, "first kernel start to last kernel end, all devices"},
    {"api_calls", Unit::kCount, "runtime API calls, all host threads", "API calls"},
    {"host_api_ns", Unit::kNs, "host time inside runtime API calls (nested calls once, summed over threads)",
     "host time in API calls"},
    {"dropped_records", Unit::kCount,
     "records the profiler lost (META stat.dropped_records): figures undercount; null for an imported profile"},
    {"kernel_findings", Unit::kCount,
     "the opkit sanitizer's findings in custom kernels (KERNEL_FINDING rows; kernel_sanitizer lists them); null "
     "when no custom kernel ran",
     "sanitizer findings"},
};
constexpr Column kDeviceColumns[] = {
    {"device_id", Unit::kId, "the NPU device", "device"},
    {"spec", Unit::kText, "its spec preset or file"},
    {"tasks", Unit::kCount, "kernel tasks on it"},
    {"first_ns", Unit::kNs, "its first kernel's start", "", true},
    {"last_ns", Unit::kNs, "its last kernel's end", "", true},
    {"span_ns", Unit::kNs, "last - first"},
    {"busy_ns", Unit::kNs, "the union of its kernels' intervals"},
    {"busy_pct", Unit::kPercent, "busy / span", "busy %"},
};
constexpr Column kDataLossColumns[] = {
    {"counter", Unit::kText, "the META stat.<name> counter (docs/schema.md lists them all)"},
    {"value", Unit::kCount, "how many records (or bytes, as the counter says) were lost"},
    {"meaning", Unit::kText, "what is missing from the trace"},
};
constexpr Column kUnmappedColumns[] = {
    {"source", Unit::kText, "the file of the imported profile"},
    {"what", Unit::kText, "what the import passed over: an event kind, a column, a table"},
    {"count", Unit::kCount, "how many"},
};
constexpr Column kStreamColumns[] = {
    {"device_id", Unit::kId, "the NPU device", "device"},
    {"stream_id", Unit::kId, "the stream", "stream"},
    {"tasks", Unit::kCount, "kernel tasks on it"},
    {"busy_ns", Unit::kNs, "the union of its kernels' intervals"},
    {"utilisation_pct", Unit::kPercent, "busy / the device's span", "utilisation"},
};

}  // namespace

constexpr TableSpec kSummaryTable{"summary",       "Summary",       "The trace as a whole.",
                                  kSummaryColumns, Layout::kRecord, Section::kSummary};
constexpr TableSpec kDevicesTable{"devices",      "Devices",     "Per device: how busy its kernels kept it.",
                                  kDeviceColumns, Layout::kRows, Section::kSummary};
constexpr TableSpec kDataLossTable{"data_loss",
                                   "Data lost while recording",
                                   "Every data-loss counter of the trace that is not zero: the figures built on "
                                   "those records undercount.",
                                   kDataLossColumns,
                                   Layout::kRows,
                                   Section::kSummary};
constexpr TableSpec kUnmappedTable{"unmapped",
                                   "Not mapped",
                                   "What the import of a real profile found and did not map (UNMAPPED): no "
                                   "figure of this report counts it.",
                                   kUnmappedColumns,
                                   Layout::kRows,
                                   Section::kSummary};
constexpr TableSpec kStreamsTable{"streams",      "Streams",     "Per stream: its utilisation of its device's span.",
                                  kStreamColumns, Layout::kRows, Section::kSummary};

namespace {

void run_summary(RuleContext& c) {
  const Summary s = summarize(c.data);
  if (!s.complete) c.note("the trace is incomplete (the program did not exit cleanly): it ends at its last commit");
  if (!s.data_loss.empty())
    c.note("data was lost while recording (the data_loss table): figures built on it undercount");
  for (const collector::StatValue& lost : s.data_loss) {
    c.add(kDataLossTable,
          {lost.name, lost.value,
           lost.doc.empty() ? std::string("a counter this build does not know") : std::string(lost.doc)});
  }
  std::int64_t unmapped = 0;
  c.data.reader.for_each([&](const collector::UnmappedRow& u) {
    c.add(kUnmappedTable, {c.data.str(u.source_id), c.data.str(u.what_id), u.count});
    unmapped = add_ns(unmapped, u.count);
  });
  if (unmapped > 0) {
    c.note("the import did not map " + std::to_string(unmapped) + " records of " + c.data.source +
           "'s profile (the unmapped table)");
  }
  // An imported profile does not say what its profiler lost (Note [Emulated-only rules]).
  const Value dropped = c.data.imported() ? Value() : Value(s.dropped_records);
  c.add(kSummaryTable, {s.command, s.complete, s.tasks, s.span_ns, s.api_calls, s.host_api_ns, dropped,
                        s.kernel_findings ? Value(*s.kernel_findings) : Value()});
  for (const DeviceUse& d : s.devices) {
    c.add(kDevicesTable, {std::int64_t{d.device_id}, d.name, d.tasks, d.first_ns, d.last_ns, d.last_ns - d.first_ns,
                          d.busy_ns, d.busy_pct});
  }
  for (const StreamUse& u : s.streams) {
    c.add(kStreamsTable,
          {std::int64_t{u.device_id}, std::int64_t{u.stream_id}, u.tasks, u.busy_ns, 100 * u.utilisation});
  }
}

constexpr const TableSpec* kSummaryTables[] = {&kSummaryTable, &kDataLossTable, &kUnmappedTable, &kDevicesTable,
                                               &kStreamsTable};

}  // namespace

extern const Rule kSummaryRule{"summary", "the trace as a whole; always runs", run_summary, kSummaryTables, true};

}  // namespace npuscope::analyzer

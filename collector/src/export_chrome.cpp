// See Note [Chrome trace layout] in export_chrome.h and Note [Exports stream] in export_util.h.
#include "npuscope/collector/export_chrome.h"
#include "npuscope/collector/time_math.h"

#include <algorithm>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "connection_set.h"
#include "export_util.h"

namespace npuscope::collector {
namespace {

using export_util::append_int;
using export_util::append_json_string;
using export_util::append_us;

using export_util::device_pid;  // Note [Export pids]
using export_util::kFirstNpuPid;
using export_util::kGoldenPid;
using export_util::kHostPid;
using export_util::kLaneStride;

class ChromeWriter {
 public:
  ChromeWriter(const TraceReader& reader, const std::string& path) : reader_(reader), out_(path) {
    result_.path = path;
  }
  ChromeExportResult run();

 private:
  std::string& open_event(std::string_view name, std::string_view cat, char ph, std::int64_t pid, std::int64_t tid);
  void close_event() {
    out_.buffer() += '}';
    out_.maybe_flush();
  }
  static void add_us(std::string& b, std::string_view key, std::int64_t ns);
  static void add_int(std::string& b, std::string_view key, std::int64_t v);
  static void add_single_arg(std::string& b, std::string_view key, std::int64_t v);  // ,"args":{"key":v}
  std::int64_t lane_tid(std::int64_t pid, std::int64_t lane);

  void write_api(const ApiRow& a);
  void write_marker(const MarkerRow& m);
  void write_pytorch_op(const PytorchApiRow& p);
  void write_task(const TaskRow& t);
  void write_task_args(std::string& b, const TaskRow& t);
  void write_memcpy(const MemcpyRow& c);
  void write_memory(const MemoryRow& r);
  void write_flow_end(std::int64_t id, std::int64_t pid, std::int64_t tid, std::int64_t start_ns);
  void write_metadata();
  void write_process_metadata(std::int64_t pid);
  void write_footer();

  const TraceReader& reader_;
  export_util::OutputFile out_;
  ChromeExportResult result_;
  std::set<std::int64_t> pids_;
  std::set<std::pair<std::int64_t, std::int64_t>> lanes_;  // (pid, lane)
  std::pair<std::int64_t, std::int64_t> last_lane_{-1, -1};
  export_util::ConnectionSet copies_;    // connection ids of MEMCPY rows
  export_util::ConnectionSet launches_;  // connection ids of every task and copy drawn
  std::vector<DeviceInfoRow> devices_;
};

ChromeExportResult ChromeWriter::run() {
  devices_ = reader_.rows<DeviceInfoRow>();
  out_.buffer() += "{\"traceEvents\":[";
  // Device work first: the API pass then knows which calls launched something (Note [Flows]).
  reader_.for_each([this](const MemcpyRow& c) { write_memcpy(c); });
  reader_.for_each([this](const TaskRow& t) { write_task(t); });
  reader_.for_each([this](const ApiRow& a) { write_api(a); });
  reader_.for_each([this](const MarkerRow& m) { write_marker(m); });
  reader_.for_each([this](const PytorchApiRow& p) { write_pytorch_op(p); });
  reader_.for_each([this](const MemoryRow& r) { write_memory(r); });
  write_metadata();
  write_footer();
  out_.commit();
  result_.bytes = out_.bytes_written();
  return result_;
}

std::string& ChromeWriter::open_event(std::string_view name, std::string_view cat, char ph, std::int64_t pid,
                                      std::int64_t tid) {
  std::string& b = out_.buffer();
  b += result_.events++ == 0 ? "\n{\"name\":" : ",\n{\"name\":";
  append_json_string(b, name);
  b += ",\"cat\":\"";
  b += cat;  // our own constants: nothing to escape
  b += "\",\"ph\":\"";
  b += ph;
  b += '"';
  add_int(b, "pid", pid);
  add_int(b, "tid", tid);
  return b;
}

void ChromeWriter::add_us(std::string& b, std::string_view key, std::int64_t ns) {
  b += ",\"";
  b += key;
  b += "\":";
  append_us(b, ns);
}

void ChromeWriter::add_int(std::string& b, std::string_view key, std::int64_t v) {
  b += ",\"";
  b += key;
  b += "\":";
  append_int(b, v);
}

void ChromeWriter::add_single_arg(std::string& b, std::string_view key, std::int64_t v) {
  b += ",\"args\":{\"";
  b += key;
  b += "\":";
  append_int(b, v);
  b += '}';
}

std::int64_t ChromeWriter::lane_tid(std::int64_t pid, std::int64_t lane) {
  lane = ((lane % kLaneStride) + kLaneStride) % kLaneStride;
  if (last_lane_ != std::pair{pid, lane}) {  // rows come in runs on one lane: skip the set
    last_lane_ = {pid, lane};
    pids_.insert(pid);
    lanes_.insert(last_lane_);
  }
  return pid * kLaneStride + lane;
}

void ChromeWriter::write_api(const ApiRow& a) {
  const std::int64_t tid = lane_tid(kHostPid, a.thread_id);
  std::string& b = open_event(reader_.string(a.name_id), "api", 'X', kHostPid, tid);
  add_us(b, "ts", a.start_ns);
  add_us(b, "dur", duration_saturated(a.start_ns, a.end_ns));  // Note [Timestamp range]
  b += ",\"args\":{\"connection_id\":";
  append_int(b, a.connection_id);
  if (const auto level = enum_from_value<ApiLevel>(a.level); level && *level != ApiLevel::kUnknown) {
    b.append(",\"level\":\"").append(enum_name(*level)).append("\"");  // as trace_view.json's CANN events
  }
  b += '}';
  close_event();
  ++result_.apis;
  if (a.connection_id == 0 || !launches_.contains(a.connection_id)) return;
  std::string& s = open_event("launch", "flow", 's', kHostPid, tid);
  add_us(s, "ts", a.start_ns);
  add_int(s, "id", a.connection_id);
  close_event();
  ++result_.flows;
}

void ChromeWriter::write_marker(const MarkerRow& m) {
  const std::int64_t tid = lane_tid(kHostPid, m.thread_id);
  const bool step = is(m.kind, MarkerKind::kStep);
  std::string name = reader_.string(m.name_id);
  if (name.empty()) name = step ? "step " + std::to_string(m.step) : "marker";
  const bool instant = m.end_ns <= m.start_ns;
  std::string& b = open_event(name, step ? "step" : "marker", instant ? 'i' : 'X', kHostPid, tid);
  add_us(b, "ts", m.start_ns);
  if (instant) {
    b += ",\"s\":\"t\"";
  } else {
    add_us(b, "dur", duration_saturated(m.start_ns, m.end_ns));
  }
  if (step) {
    b += ",\"args\":{\"step\":";
    append_int(b, m.step);
    b += '}';
  }
  close_event();
  ++result_.markers;
}

void ChromeWriter::write_pytorch_op(const PytorchApiRow& p) {
  const auto kind = enum_from_value<HostOpKind>(p.kind);
  const char* cat = !kind                                    ? "cpu_op"
                    : *kind == HostOpKind::kModule           ? "module"
                    : *kind == HostOpKind::kBackwardFunction ? "backward"
                    : *kind == HostOpKind::kOptimizer        ? "optimizer"
                                                             : "cpu_op";
  std::string& b = open_event(reader_.string(p.name_id), cat, 'X', kHostPid, lane_tid(kHostPid, p.thread_id));
  add_us(b, "ts", p.start_ns);
  add_us(b, "dur", duration_saturated(p.start_ns, p.end_ns));
  b += ",\"args\":{\"pass\":";
  append_json_string(b, stored_name<ModelPass>(p.pass, "pass"));
  b += ",\"module\":";
  append_json_string(b, reader_.string(p.module_id));
  b += ",\"input_shapes\":";
  append_json_string(b, reader_.string(p.input_shapes_id));
  b += ",\"input_dtypes\":";
  append_json_string(b, reader_.string(p.input_dtypes_id));
  add_int(b, "sequence_number", p.sequence_number);
  add_int(b, "id", p.id);
  b += '}';
  close_event();
  ++result_.pytorch_ops;
}

void ChromeWriter::write_task(const TaskRow& t) {
  // A copy recorded in both TASK and MEMCPY is drawn once, from the richer MEMCPY row.
  if (is(t.task_type, TaskType::kMemcpy) && copies_.contains(t.connection_id)) return;
  const std::int64_t pid = device_pid(t.device_id);
  // Golden kernels run inline on the host thread that called them: one lane per host thread.
  const std::int64_t tid = lane_tid(pid, t.device_id >= 0 ? t.stream_id : t.thread_id);
  const std::string& op_name = reader_.string(t.name_id);
  std::string& b = open_event(op_name.empty() ? reader_.string(t.op_type_id) : op_name, "task", 'X', pid, tid);
  add_us(b, "ts", t.start_ns);
  add_us(b, "dur", duration_saturated(t.start_ns, t.end_ns));
  if (t.overflow != 0) b += ",\"cname\":\"terrible\"";
  write_task_args(b, t);
  close_event();
  ++result_.tasks;
  if (t.overflow != 0) {
    std::string& o = open_event("overflow", "overflow", 'i', pid, tid);
    add_us(o, "ts", t.start_ns);
    o += ",\"s\":\"t\",\"args\":{\"op\":";
    append_json_string(o, op_name);
    o += '}';
    close_event();
    ++result_.overflow_tasks;
  }
  if (t.underflow != 0) {
    std::string& u = open_event("underflow", "underflow", 'i', pid, tid);
    add_us(u, "ts", t.start_ns);
    u += ",\"s\":\"t\",\"args\":{\"op\":";
    append_json_string(u, op_name);
    add_int(u, "flushed", t.underflow);
    u += '}';
    close_event();
    ++result_.underflow_tasks;
  }
  write_flow_end(t.connection_id, pid, tid, t.start_ns);
}

void ChromeWriter::write_task_args(std::string& b, const TaskRow& t) {
  b += ",\"args\":{\"op_type\":";
  append_json_string(b, reader_.string(t.op_type_id));
  b += ",\"task_type\":\"";
  b += task_type_name(t.task_type);
  b += '"';
  add_int(b, "block_dim", t.block_dim);
  add_int(b, "flops", t.flops);
  add_int(b, "bytes", t.bytes);
  add_int(b, "overflow", t.overflow);
  if (t.underflow != 0 || t.subnormal != 0) {  // Note [Underflow counts]: most tasks have none
    add_int(b, "underflow", t.underflow);
    add_int(b, "subnormal", t.subnormal);
  }
  add_int(b, "fallback", t.fallback);
  add_int(b, "connection_id", t.connection_id);
  add_int(b, "call_index", t.call_index);
  add_int(b, "task_id", t.task_id);
  add_int(b, "stream_id", t.stream_id);
  b += '}';
}

void ChromeWriter::write_memcpy(const MemcpyRow& c) {
  const std::int64_t pid = device_pid(c.device_id);
  const std::int64_t tid = lane_tid(pid, c.stream_id);
  const std::string kind = export_util::copy_kind_name(c.copy_kind);
  std::string& b = open_event("Memcpy " + kind, "memcpy", 'X', pid, tid);
  add_us(b, "ts", c.start_ns);
  add_us(b, "dur", duration_saturated(c.start_ns, c.end_ns));
  b += ",\"args\":{\"copy_kind\":\"";
  b += kind;
  b += '"';
  add_int(b, "bytes", c.bytes);
  add_int(b, "connection_id", c.connection_id);
  add_int(b, "task_id", c.task_id);
  add_int(b, "stream_id", c.stream_id);
  b += '}';
  close_event();
  ++result_.memcpys;
  if (c.connection_id != 0) copies_.insert(c.connection_id);
  write_flow_end(c.connection_id, pid, tid, c.start_ns);
}

// Note [Flows]
// An arrow from an API call to the work it launched is a pair of v1 flow events with
// id = connection_id. "f" is written right after the device slice, at its start, with "bp":"e":
// viewers order non-slice events after the slices of the same timestamp, so it binds to that
// slice. "s" is written right after the API slice, at its start, so it binds to the call itself;
// it is written only for calls that launched something (launches_), never left dangling. Device
// work is exported before API calls so that launches_ is complete when the calls are.
void ChromeWriter::write_flow_end(std::int64_t id, std::int64_t pid, std::int64_t tid, std::int64_t start_ns) {
  if (id == 0) return;
  launches_.insert(id);
  std::string& f = open_event("launch", "flow", 'f', pid, tid);
  add_us(f, "ts", start_ns);
  add_int(f, "id", id);
  f += ",\"bp\":\"e\"";
  close_event();
}

void ChromeWriter::write_memory(const MemoryRow& r) {
  const std::int64_t pid = device_pid(r.device_id);
  pids_.insert(pid);
  for (const auto& [name, value] :
       {std::pair{"memory allocated", r.allocated_bytes}, std::pair{"memory reserved", r.reserved_bytes}}) {
    std::string& b = open_event(name, "memory", 'C', pid, pid);
    add_us(b, "ts", r.ts_ns);
    add_single_arg(b, "bytes", value);
    close_event();
  }
  ++result_.memory_records;
}

void ChromeWriter::write_metadata() {
  for (const std::int64_t pid : pids_) write_process_metadata(pid);
  for (const auto& [pid, lane] : lanes_) {
    const std::int64_t tid = pid * kLaneStride + lane;
    std::string name = (pid >= kFirstNpuPid ? "stream " : "thread ") + std::to_string(lane);
    std::string& b = open_event("thread_name", "__metadata", 'M', pid, tid);
    b += ",\"args\":{\"name\":";
    append_json_string(b, name);
    b += '}';
    close_event();
    std::string& s = open_event("thread_sort_index", "__metadata", 'M', pid, tid);
    add_single_arg(s, "sort_index", lane);
    close_event();
  }
}

void ChromeWriter::write_process_metadata(std::int64_t pid) {
  const std::string name = export_util::process_name(pid);
  std::string& b = open_event("process_name", "__metadata", 'M', pid, pid);
  b += ",\"args\":{\"name\":";
  append_json_string(b, name);
  b += '}';
  close_event();
  // Host first, then the NPUs in order, the golden backend last.
  std::string& s = open_event("process_sort_index", "__metadata", 'M', pid, pid);
  add_single_arg(s, "sort_index", export_util::process_rank(pid));
  close_event();
  if (pid < kFirstNpuPid) return;
  for (const DeviceInfoRow& d : devices_) {
    if (device_pid(d.device_id) != pid || d.name.empty()) continue;
    std::string& l = open_event("process_labels", "__metadata", 'M', pid, pid);
    l += ",\"args\":{\"labels\":";
    append_json_string(l, d.name);
    l += '}';
    close_event();
  }
}

void ChromeWriter::write_footer() {
  std::string& b = out_.buffer();
  b += "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"npuscope_trace\":";
  append_json_string(b, reader_.path());
  add_int(b, "schema_version", reader_.schema_version());
  b += ",\"status\":";
  append_json_string(b, reader_.complete() ? "complete" : "incomplete");
  b += "}}\n";
}

}  // namespace

ChromeExportResult export_chrome_trace(const TraceReader& reader, const std::string& path) {
  return ChromeWriter(reader, path).run();
}

}  // namespace npuscope::collector

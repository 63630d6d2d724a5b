// Reading the events (Note [Ascend timeline mapping] in ascend_timeline.h); the rows are written by
// ascend_timeline_write.cpp.
#include "ascend_timeline.h"

#include <array>
#include <charconv>

#include "api_levels.h"
#include "ascend_names.h"
#include "ascend_timeline_state.h"
#include "chrome_events.h"
#include "csv_reader.h"
#include "npuscope/collector/time_math.h"
#include "tensor_lists.h"

namespace npuscope::importer {
namespace {

using collector::StringId;

// "3170820512", "Stream 7", "Thread 3096504": the number in it; a hash for a name without one.
std::int64_t id_of(std::string_view text) {
  if (const auto v = parse_int(text)) return *v;
  const std::size_t digits = text.find_last_not_of("0123456789");
  if (digits != std::string_view::npos && digits + 1 < text.size()) {
    if (const auto v = parse_int(text.substr(digits + 1))) return *v;
  }
  return static_cast<std::int64_t>(std::hash<std::string_view>{}(text)&0x7fffffff);
}
std::int32_t tid_of(std::string_view text) { return static_cast<std::int32_t>(id_of(text)); }

std::uint64_t flow_id_of(std::string_view text) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc() && end == text.data() + text.size()) return v;
  return std::hash<std::string_view>{}(text);
}

bool is_overlap_analysis(std::string_view name) {
  return name == "Computing" || name == "Communication" || name == "Communication(Not Overlapped)" || name == "Free";
}

// The arguments of a device event a row takes (from the event itself when kernel_details has no row).
constexpr std::array<std::string_view, 7> kShapeArgs{"Input Shapes",  "Input Data Types",  "Input Formats",
                                                     "Output Shapes", "Output Data Types", "Output Formats",
                                                     "Block Dim"};

class Reader {
 public:
  explicit Reader(AscendTimeline::State& s) : s_(s) {}

  void on_event(const ChromeEvent& e) {
    const std::string_view ph = e.ph;
    if (ph == "X") return complete(e);
    if (ph == "C") return counter(e);
    if (ph == "M") return metadata(e);
    if (ph == "s" || ph == "f" || ph == "t") return flow(e);
    count("event ph=", ph, e.cat);
  }

 private:
  void count(std::string_view a, std::string_view b = {}, std::string_view c = {}) {
    s_.key.assign(a).append(b);
    if (!c.empty()) s_.key.append(" cat=").append(c);
    s_.count(s_.key);
  }

  void complete(const ChromeEvent& e) {
    if (!e.ts_ns) return count("event without ts: ph=X ", e.name.substr(0, 40));
    const std::int64_t start = *e.ts_ns,
                       end = collector::add_saturated(start, std::max<std::int64_t>(0, e.dur_ns.value_or(0)));
    const std::string_view cat = e.cat;
    if (cat == "cpu_op" || cat == "python_function" || cat == "user_annotation") return host_op(e, start, end);
    if (e.arg("Task Type")) return hw_task(e, start, end);
    if (e.arg("src rank") || e.arg("task type")) return link_task(e, start, end);
    if (e.arg("alg_type") || (e.arg("count") && e.arg("data_type"))) return collective(e, start, end);
    if (e.arg("level") || e.arg("memcpy direction") || (cat.empty() && e.name.find('@') != std::string_view::npos)) {
      return api(e, start, end);
    }
    if (e.args.empty() && is_overlap_analysis(e.name)) return count("event Overlap Analysis ", e.name);
    if (e.name.starts_with("Iteration ")) {  // the older msprof's step_trace json
      if (const auto n = parse_int(e.name.substr(10))) return step(e, *n, start, end);
    }
    count("event ph=X", {}, cat.empty() ? "(none)" : cat);
  }

  void host_op(const ChromeEvent& e, std::int64_t start, std::int64_t end) {
    const std::int32_t tid = tid_of(e.tid);
    if (const std::int64_t n = step_number(e.name); n >= 0 && e.cat != "python_function") {
      return step(e, n, start, end);
    }
    HostOp op{.start_ns = start, .end_ns = end, .name_id = s_.sink.id(e.name), .tid = tid};
    bool module_id = false;
    for (const ChromeArg& a : e.args) {
      if (a.key == "Sequence number") {
        op.sequence_number = parse_int(a.value).value_or(-1);
      } else if (a.key == "Fwd thread id") {
        op.fwd_tid = static_cast<std::int32_t>(parse_int(a.value).value_or(0));
      } else if (a.key == "Input Dims") {
        op.shapes_id = s_.sink.id(shape_list(a.value));
      } else if (a.key == "Input type") {
        op.dtypes_id = s_.sink.id(dtype_list(a.value));
      } else if (a.key == "Call stack") {
        op.stack_id = s_.sink.id(join_parts(a.value, ";\n"));
      } else if (a.key == "Python module id") {
        module_id = true;
      } else {  // Python id / parent id / thread: the nesting follows from the times
        count("argument ", a.key, e.cat);
      }
    }
    op.kind = host_op_kind(e.cat, e.name, module_id);
    s_.host_ops.add(op);
  }

  void step(const ChromeEvent& e, std::int64_t n, std::int64_t start, std::int64_t end) {
    s_.sink.add(collector::MarkerRow{.start_ns = s_.t(start),
                                     .end_ns = s_.t(end),
                                     .name_id = s_.sink.id(e.name),
                                     .thread_id = tid_of(e.tid),
                                     .kind = static_cast<std::int32_t>(MarkerKind::kStep),
                                     .step = n});
    s_.result.steps = true;
  }

  void hw_task(const ChromeEvent& e, std::int64_t start, std::int64_t end) {
    HwTask t{.start_ns = start, .end_ns = end, .pid = id_of(e.pid), .name_id = s_.sink.id(e.name)};
    t.tid = tid_of(e.tid);
    t.stream = t.tid;
    TaskArgs extra;
    bool has_extra = false;
    const auto pmu_begin = static_cast<std::uint32_t>(s_.task_pmu.size());
    for (const ChromeArg& a : e.args) {
      if (a.key == "Task Type") {
        t.type = ascend_task_type(a.value);
        if (t.type == TaskType::kMixAiCore || t.type == TaskType::kMixAiVector) s_.result.split_cores = true;
      } else if (a.key == "Physic Stream Id" || a.key == "Stream Id") {
        t.stream = static_cast<std::int32_t>(parse_int(a.value).value_or(t.stream));
      } else if (a.key == "Task Id") {
        t.task_id = static_cast<std::int32_t>(parse_int(a.value).value_or(-1));
      } else if (a.key == "connection_id") {
        t.connection_id = parse_int(a.value).value_or(0);
      } else if (shape_arg(a, extra) || a.key == "Op Type" || a.key == "OP Type") {
        if (a.key == "Op Type" || a.key == "OP Type") extra.op_type = s_.sink.id(a.value);
        has_extra = true;
      } else if (a.key == "size(B)" || a.key == "operation") {  // a MEMCPY_ASYNC's (msprof since 2024-12)
        if (a.key == "size(B)") extra.copy_bytes = parse_int(a.value).value_or(0);
        if (a.key == "operation") extra.copy_kind = ascend_copy_kind(a.value);
        has_extra = true;
      } else if (a.key == "bandwidth(GB/s)") {  // size over duration
      } else if (const auto v = a.kind == ChromeArg::Kind::kNumber ? parse_double(a.value) : std::nullopt;
                 v && is_metric(a.key)) {
        s_.task_pmu.emplace_back(s_.sink.id(pmu_metric_name(a.key)), *v);
        has_extra = true;
      } else {
        count("argument ", a.key, "device task");
      }
    }
    if (has_extra) {
      extra.pmu_begin = pmu_begin;
      extra.pmu_end = static_cast<std::uint32_t>(s_.task_pmu.size());
      t.args = static_cast<std::int32_t>(s_.task_args.size());
      s_.task_args.push_back(extra);
    }
    s_.hw.push_back(t);
  }

  bool shape_arg(const ChromeArg& a, TaskArgs& x) {
    StringId* slots[] = {&x.input_shapes,  &x.input_dtypes,  &x.input_formats,
                         &x.output_shapes, &x.output_dtypes, &x.output_formats};
    for (std::size_t i = 0; i < kShapeArgs.size(); ++i) {
      if (a.key != kShapeArgs[i]) continue;
      if (i == 6) {
        x.block_dim = static_cast<std::int32_t>(csv_int(a.value).value_or(-1));
      } else if (!csv_missing(a.value)) {
        *slots[i] = s_.sink.id(i == 1 || i == 4 ? dtype_list(a.value) : shape_list(a.value));
      }
      return true;
    }
    return false;
  }

  // A per-task hardware metric carried by the event (aic_*, aiv_*, *_ratio, *_time, ...).
  static bool is_metric(std::string_view key) {
    return key.starts_with("aic") || key.starts_with("aiv") || key.ends_with("_ratio") || key.ends_with("_time") ||
           key.ends_with("(us)") || key.ends_with("cycles") || key.ends_with("_bw") || key.ends_with("(%)");
  }

  void link_task(const ChromeEvent& e, std::int64_t start, std::int64_t end) {
    LinkTask l{.start_ns = start, .end_ns = end, .pid = id_of(e.pid), .name_id = s_.sink.id(e.name)};
    l.tid = tid_of(e.tid);
    std::string_view link_type, transport;
    for (const ChromeArg& a : e.args) {
      if (a.key == "stream id") {
        l.stream = static_cast<std::int32_t>(parse_int(a.value).value_or(0));
      } else if (a.key == "task id") {
        l.task_id = static_cast<std::int32_t>(parse_int(a.value).value_or(-1));
      } else if (a.key == "src rank") {
        l.src = parse_int(a.value).value_or(-1);
      } else if (a.key == "dst rank") {
        l.dst = parse_int(a.value).value_or(-1);
      } else if (a.key == "size(Byte)") {
        l.size = parse_int(a.value).value_or(0);
      } else if (a.key == "link type") {
        link_type = a.value;
      } else if (a.key == "transport type") {
        transport = a.value;
      } else if (a.key != "task type") {  // notify_id, context id, data type, bandwidth(GB/s), ...
        count("argument ", a.key, "HCCL task");
      }
    }
    // A rank past any cluster's size is none (4294967295: HCCL's "no peer"; or a damaged file).
    constexpr std::int64_t kMaxRank = std::int64_t{1} << 20;
    if (l.src >= kMaxRank) l.src = -1;
    const bool to_self = l.dst < 0 || l.dst >= kMaxRank || l.dst == l.src;
    if (to_self) l.dst = l.src;
    l.transport = hccl_transport(link_type, transport, to_self);
    s_.links.push_back(l);
  }

  void collective(const ChromeEvent& e, std::int64_t start, std::int64_t end) {
    Collective c{.start_ns = start, .end_ns = end, .pid = id_of(e.pid), .name_id = s_.sink.id(e.name)};
    c.name = e.name;
    c.tid = tid_of(e.tid);
    for (const ChromeArg& a : e.args) {
      if (a.key == "connection_id") {
        c.connection_id = parse_int(a.value).value_or(0);
      } else if (a.key == "count") {
        c.count = parse_int(a.value).value_or(-1);
      } else if (a.key == "data_type") {
        const auto d = hccl_dtype(a.value);
        if (d) c.dtype = static_cast<std::int32_t>(*d);
        if (!d) count("HCCL data type ", a.value);
      } else if (a.key == "alg_type") {
        const auto g = hccl_algorithm(a.value);
        if (g) c.algorithm = static_cast<std::int32_t>(*g);
        if (!g) count("HCCL algorithm ", a.value);
      } else {
        count("argument ", a.key, "HCCL op");  // model id, ...
      }
    }
    s_.collectives.push_back(std::move(c));
  }

  void api(const ChromeEvent& e, std::int64_t start, std::int64_t end) {
    std::int32_t tid = tid_of(e.tid);
    std::int64_t connection = 0;
    std::string_view level;
    CopyInfo copy;
    std::int32_t stream = -1, task = -1;
    for (const ChromeArg& a : e.args) {
      if (a.key == "connection_id") {
        connection = parse_int(a.value).value_or(0);
      } else if (a.key == "Thread Id") {
        tid = static_cast<std::int32_t>(parse_int(a.value).value_or(tid));
      } else if (a.key == "level") {
        level = a.value;
      } else if (a.key == "data size") {  // the older msprof's copy calls: "4096 byte"
        copy.bytes = parse_int(a.value.substr(0, a.value.find(' '))).value_or(0);
      } else if (a.key == "memcpy direction") {
        copy.kind = ascend_copy_kind(a.value);
      } else if (a.key == "stream id" || a.key == "task id") {  // its async copy's task
        (a.key == "stream id" ? stream : task) = static_cast<std::int32_t>(parse_int(a.value).value_or(-1));
      } else {  // Mode, id, item_id (the name's parts), ...
        count("argument ", a.key, "CANN API");
      }
    }
    if (copy.bytes > 0) {
      if (connection != 0) s_.copy_by_connection.try_emplace(connection, copy);
      if (stream >= 0 && task >= 0) s_.copy_by_task[{stream, task}] = copy;
    }
    s_.sink.add(collector::ApiRow{.start_ns = s_.t(start),
                                  .end_ns = s_.t(end),
                                  .name_id = s_.sink.id(e.name),
                                  .connection_id = connection,
                                  .thread_id = tid,
                                  .kind = static_cast<std::int32_t>(cann_api_kind(e.name)),
                                  .level = static_cast<std::int32_t>(cann_api_level(level, e.name))});
    if (connection != 0) s_.api_by_connection.try_emplace(connection, ApiRef{start, tid});
  }

  // A counter per numeric argument: "AI Core Freq (MHz)", "HBM 0/Read (MB/s)", "read_bandwidth acc_id=0".
  void counter(const ChromeEvent& e) {
    if (!e.ts_ns) return count("counter without ts ", e.name.substr(0, 40));
    std::string label;
    for (const ChromeArg& a : e.args) {
      if (a.key == "id" || a.key.ends_with("_id")) label.append(" ").append(a.key).append("=").append(a.value);
    }
    for (const ChromeArg& a : e.args) {
      if (a.key == "id" || a.key.ends_with("_id")) continue;
      const auto v = parse_double(a.value);
      if (!v) {
        count("counter argument ", a.key);
        continue;
      }
      std::string& name = s_.key;
      name.assign(e.name);
      const std::size_t paren = a.key.find('(');
      if (paren != std::string_view::npos) {
        name.append(" ").append(a.key.substr(paren));
      } else if (a.key != "value" && a.key != e.name) {
        name.append(" (").append(a.key).append(")");
      }
      name.append(label);
      s_.sink.add(collector::CounterRow{
          .ts_ns = s_.t(*e.ts_ns), .device_id = s_.device_of(id_of(e.pid)), .name_id = s_.sink.id(name), .value = *v});
    }
  }

  void metadata(const ChromeEvent& e) {
    const ChromeArg* name = e.arg("name");
    if (e.name == "process_name" && name) {
      s_.process_names[id_of(e.pid)] = std::string(name->value);
    } else if (e.name == "thread_name" && name) {
      s_.thread_names[{id_of(e.pid), tid_of(e.tid)}] = std::string(name->value);
    } else if (e.name == "process_labels") {  // "NPU 3": the device of a timeline of several; "NPU", "CPU"
      const ChromeArg* labels = e.arg("labels");
      const std::string_view l = labels != nullptr ? labels->value : std::string_view();
      if (const auto n = l.starts_with("NPU ") ? parse_int(l.substr(4)) : std::nullopt; n && *n >= 0 && *n < 65536) {
        s_.process_devices[id_of(e.pid)] = static_cast<std::int32_t>(*n);
      }
    } else {
      count("metadata ", e.name);  // process_sort_index, thread_sort_index, ...
    }
  }

  void flow(const ChromeEvent& e) {
    if (e.cat == "HostToDevice") return;  // the connection_id both ends hold already
    if (e.cat != "async_npu" || !e.ts_ns || e.ph == "t") return count("flow", {}, e.cat.empty() ? "(none)" : e.cat);
    const std::uint64_t id = flow_id_of(e.id);
    if (e.ph == "s") {
      s_.flow_starts.try_emplace(id, FlowStart{*e.ts_ns, tid_of(e.tid)});
    } else {
      s_.flow_ends.try_emplace(FlowEndKey{id_of(e.pid), *e.ts_ns, tid_of(e.tid)}, id);
    }
  }

  AscendTimeline::State& s_;
};

}  // namespace

AscendTimeline::AscendTimeline(ImportSink& sink, TimelineInputs inputs)
    : s_(std::make_unique<State>(sink, std::move(inputs))) {}
AscendTimeline::~AscendTimeline() = default;

void AscendTimeline::read(const std::string& path, const std::function<void(std::int64_t)>& progress) {
  s_->file = path;
  Reader reader(*s_);
  ChromeHandlers handlers;
  handlers.event = [&](const ChromeEvent& e) { reader.on_event(e); };
  handlers.top_level = [&](std::string_view key, std::string_view) {
    s_->key.assign("top-level member ").append(key);
    s_->count(s_->key);
  };
  handlers.progress = progress;
  const ChromeStreamResult r = stream_chrome_events(path, handlers);
  s_->result.events += r.events;
  s_->result.bytes += r.bytes;
  if (r.truncated) {
    s_->result.truncated = true;
    s_->sink.set_incomplete();
    s_->sink.note(path + " ends in the middle of an event (cut short?): the events before the cut are imported");
  }
  s_->flush_counts();
}

TimelineResult AscendTimeline::finish() {
  write_timeline(*s_);
  s_->result.device_id = s_->in.device_id;
  if (s_->result.devices.empty()) s_->result.devices.push_back(s_->in.device_id);
  return s_->result;
}

}  // namespace npuscope::importer

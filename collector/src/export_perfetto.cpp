// See Note [Perfetto trace layout] in export_perfetto.h and Note [Exports stream] in export_util.h.
#include "npuscope/collector/export_perfetto.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "connection_set.h"
#include "export_util.h"
#include "npuscope/collector/time_math.h"
#include "op_flows.h"
#include "perfetto_packets.h"
#include "task_rows_window.h"

namespace npuscope::collector {
namespace {

using perfetto::Arg;
using perfetto::CounterUnit;
using perfetto::EventType;

using export_util::device_pid;  // pids and tids as in the Chrome export: Note [Export pids]
using export_util::kFirstNpuPid;
using export_util::kGoldenPid;
using export_util::kHostPid;
using export_util::kLaneStride;
std::int64_t wrap_lane(std::int64_t lane) { return ((lane % kLaneStride) + kLaneStride) % kLaneStride; }

// What a track holds, each kind of row its own track (Note [Perfetto trace layout]).
enum class Holds : std::uint8_t { kThread, kApi, kMarkers, kTasks, kCopies, kCommunication };

struct TrackKey {
  std::int64_t pid, lane;
  Holds holds;
  auto operator<=>(const TrackKey&) const = default;
};

// The open slices of one lane of a track: their end times, innermost last.
struct Lane {
  std::uint64_t uuid = 0;
  std::vector<std::int64_t> open_ends;
};

// Note [Rows that start together]
// A table comes in start order, and rows that start at the same nanosecond in the order they were
// written: a module and the first op inside it, a step and its first call, may come child first.
// Perfetto orders equal timestamps by their place in the file, so the child's BEGIN would open the
// parent inside it. Each run of rows with one start is therefore written longest first (a parent
// before what it holds), holding at most kMaxRun rows (a table whose rows all start together, as a
// broken import may have, is ordered a run at a time).
template <class Row>
class SameStartRuns {
 public:
  static constexpr std::size_t kMaxRun = 4096;
  template <class Write>
  void add(const Row& row, Write&& write) {
    if (!run_.empty() && (row.start_ns != run_.front().start_ns || run_.size() == kMaxRun)) flush(write);
    run_.push_back(row);
  }
  template <class Write>
  void flush(Write&& write) {
    std::stable_sort(run_.begin(), run_.end(), [](const Row& a, const Row& b) { return a.end_ns > b.end_ns; });
    for (const Row& r : run_) write(r);
    run_.clear();
  }

 private:
  std::vector<Row> run_;
};

// The training step a time falls in, for the step argument of tasks and PyTorch ops: the MARKER
// rows of kind step (ProfilerStep#N of a real profile, optimizer.step() or npuscope.torch.step() of
// an emulated one), a few per second of a trace at most, held sorted by start.
class StepRanges {
 public:
  explicit StepRanges(const TraceReader& reader) {
    reader.for_each([&](const MarkerRow& m) {
      if (is(m.kind, MarkerKind::kStep) && m.end_ns > m.start_ns) steps_.push_back({m.start_ns, m.end_ns, m.step});
    });
    std::sort(steps_.begin(), steps_.end(), [](const Step& a, const Step& b) { return a.start < b.start; });
  }
  // The step whose range holds t (the latest to start, if several do); nullopt if none.
  std::optional<std::int64_t> at(std::int64_t t) const {
    auto it =
        std::upper_bound(steps_.begin(), steps_.end(), t, [](std::int64_t v, const Step& s) { return v < s.start; });
    for (int looked = 0; it != steps_.begin() && looked < 4; ++looked) {  // overlapping steps: the last few
      --it;
      if (t < it->end) return it->step;
    }
    return std::nullopt;
  }

 private:
  struct Step {
    std::int64_t start, end, step;
  };
  std::vector<Step> steps_;
};

class PerfettoWriter {
 public:
  PerfettoWriter(const TraceReader& reader, const std::string& path)
      : reader_(reader),
        out_(path),
        packets_(reader, out_),
        pmu_(reader, "TASK_PMU"),
        compare_(reader, "COMPARE_RESULT"),
        steps_(reader) {
    result_.path = path;
  }
  PerfettoExportResult run();

 private:
  std::uint64_t process_uuid(std::int64_t pid);
  std::uint64_t track_uuid(const TrackKey& key);
  Lane& lane_of(const TrackKey& key, std::size_t lane);  // described when first asked for
  void describe_track(std::uint64_t uuid, const TrackKey& key, std::size_t lane);
  std::uint64_t new_counter_track(std::uint64_t parent, std::string_view name, CounterUnit unit);

  // Opens a slice [start, end) on the first lane of `key` it nests in, writing the ends of the
  // slices it follows; returns that lane's uuid, or 0 if it cannot be written (a negative start).
  std::uint64_t place(const TrackKey& key, std::int64_t start, std::int64_t end);
  void close_until(Lane& lane, std::int64_t t);  // writes the ends of the slices ended by t
  void close_all();                              // at the end of each table
  void write_end(std::uint64_t uuid, std::int64_t ts);

  // Streams a table through SameStartRuns into `write`, then ends every slice left open.
  template <class Row, class Write>
  void write_table(Write&& write);

  void read_communicators();
  void write_task(const TaskRow& t);
  void annotate_pmu(std::int64_t task_id);
  void annotate_compare(std::int64_t task_id);
  void write_memcpy(const MemcpyRow& c);
  void write_api(const ApiRow& a);
  void write_marker(const MarkerRow& m);
  void write_pytorch_op(const PytorchApiRow& p);
  void write_communication(const CommunicationRow& c);
  void write_memory(const MemoryRow& r);
  void write_counter(const CounterRow& r);
  void write_instant(std::uint64_t track, std::int64_t ts, std::string_view name, StringId op, std::int64_t flushed);

  const TraceReader& reader_;
  export_util::OutputFile out_;
  perfetto::Packets packets_;
  PerfettoExportResult result_;
  std::vector<DeviceInfoRow> devices_;
  // Tracks: uuids are 1 + the order they were made in; 0 is Perfetto's root.
  std::map<std::int64_t, std::uint64_t> processes_;
  std::map<TrackKey, std::vector<Lane>> tracks_;
  std::map<std::int64_t, std::pair<std::uint64_t, std::uint64_t>> memory_counters_;  // allocated, reserved
  std::map<std::pair<std::int32_t, StringId>, std::uint64_t> counters_by_name_id_;   // COUNTER rows' tracks
  std::map<std::int64_t, std::uint64_t> counter_groups_;                             // their groups, by process
  std::uint64_t next_uuid_ = 1;
  export_util::ConnectionSet copies_, launches_;
  export_util::OpFlows op_flows_;
  TaskRowsWindow<TaskPmuRow> pmu_;
  TaskRowsWindow<CompareResultRow> compare_;
  std::unordered_map<StringId, std::string> pmu_names_;  // "pmu." + the metric's name
  std::map<std::int64_t, CommunicatorRow> communicators_;
  std::unordered_map<std::int64_t, std::int32_t> communication_devices_;  // task id -> its device
  StepRanges steps_;
};

PerfettoExportResult PerfettoWriter::run() {
  devices_ = reader_.rows<DeviceInfoRow>();
  read_communicators();
  packets_.first_packet();
  // Device work first: the API pass then knows which calls launched something, the PyTorch op
  // pass how many tasks each op launched (Note [Flows from PyTorch ops]), the communication pass
  // on which device each collective ran.
  write_table<MemcpyRow>([this](const MemcpyRow& c) { write_memcpy(c); });
  write_table<TaskRow>([this](const TaskRow& t) { write_task(t); });
  write_table<ApiRow>([this](const ApiRow& a) { write_api(a); });
  write_table<MarkerRow>([this](const MarkerRow& m) { write_marker(m); });
  write_table<PytorchApiRow>([this](const PytorchApiRow& p) { write_pytorch_op(p); });
  write_table<CommunicationRow>([this](const CommunicationRow& c) { write_communication(c); });
  reader_.for_each([this](const MemoryRow& r) { write_memory(r); });
  reader_.for_each([this](const CounterRow& r) { write_counter(r); });
  out_.commit();
  result_.packets = packets_.packets();
  result_.bytes = out_.bytes_written();
  return result_;
}

template <class Row, class Write>
void PerfettoWriter::write_table(Write&& write) {
  SameStartRuns<Row> runs;
  reader_.for_each([&](const Row& row) { runs.add(row, write); });
  runs.flush(write);
  close_all();
}

// --- tracks

std::uint64_t PerfettoWriter::process_uuid(std::int64_t pid) {
  if (const auto it = processes_.find(pid); it != processes_.end()) return it->second;
  const std::uint64_t uuid = next_uuid_++;
  processes_.emplace(pid, uuid);
  std::string_view label;
  for (const DeviceInfoRow& d : devices_) {
    if (pid >= kFirstNpuPid && device_pid(d.device_id) == pid && !d.name.empty()) label = d.name;
  }
  packets_.process_track(uuid, pid, export_util::process_name(pid), label, export_util::process_rank(pid));
  ++result_.tracks;
  return uuid;
}

std::uint64_t PerfettoWriter::track_uuid(const TrackKey& key) { return lane_of(key, 0).uuid; }

Lane& PerfettoWriter::lane_of(const TrackKey& key, std::size_t lane) {
  if (const auto it = tracks_.find(key); it != tracks_.end() && lane < it->second.size()) return it->second[lane];
  process_uuid(key.pid);  // each track is described after its process
  // A host thread's API and marker tracks hang under its thread track: that one first.
  if (key.holds == Holds::kApi || key.holds == Holds::kMarkers) track_uuid({key.pid, key.lane, Holds::kThread});
  std::vector<Lane>& lanes = tracks_[key];  // std::map: other insertions leave it in place
  while (lanes.size() <= lane) {
    lanes.push_back({.uuid = next_uuid_++});
    describe_track(lanes.back().uuid, key, lanes.size() - 1);
  }
  return lanes[lane];
}

// Communicators come after the streams of their process (sibling ranks: a stream's lane·8 + its
// extra lane, below 8·10⁶), a real profile's counters after them.
constexpr std::int64_t kFirstCommunicatorRank = 8 * kLaneStride;
constexpr std::int64_t kProfileCountersRank = 9 * kLaneStride;

void PerfettoWriter::describe_track(std::uint64_t uuid, const TrackKey& key, std::size_t lane) {
  std::string base;
  if (key.holds == Holds::kCommunication) {
    const auto it = communicators_.find(key.lane);
    base = it == communicators_.end() || reader_.string(it->second.name_id).empty()
               ? "communicator " + std::to_string(key.lane)
               : reader_.string(it->second.name_id);
    if (it != communicators_.end() && it->second.size > 0) {
      base += " (rank " + std::to_string(it->second.rank) + " of " + std::to_string(it->second.size) + ")";
    }
  } else {
    const bool stream = (key.holds == Holds::kTasks || key.holds == Holds::kCopies) && key.pid >= kFirstNpuPid;
    base = (stream ? "stream " : "thread ") + std::to_string(key.lane);
  }
  std::string name = base;
  if (key.holds == Holds::kApi) name += " API";
  if (key.holds == Holds::kMarkers) name += " markers";
  if (key.holds == Holds::kCopies) name += " copies";
  if (lane > 0) name += " (" + std::to_string(lane + 1) + ")";
  const std::int64_t rank = key.holds == Holds::kCommunication
                                ? kFirstCommunicatorRank + key.lane * 8 + std::int64_t(lane)
                                : key.lane * 8 + static_cast<std::int64_t>(lane);
  if (key.holds == Holds::kThread && lane == 0) {
    packets_.thread_track(uuid, key.pid, key.pid * kLaneStride + key.lane, name, rank);
  } else {
    const bool under_thread = key.holds == Holds::kApi || key.holds == Holds::kMarkers || key.holds == Holds::kThread;
    const std::uint64_t parent =
        under_thread ? tracks_.at({key.pid, key.lane, Holds::kThread}).front().uuid : processes_.at(key.pid);
    packets_.child_track(uuid, parent, name, rank,
                         lane > 0 ? "rows of " + base + " that overlap others there without fitting inside them" : "");
  }
  ++result_.tracks;
  if (lane > 0) ++result_.extra_lanes;
}

// A counter track under `parent` (a process, or a group of counters), described now: the callers
// ask for each track once and keep its uuid.
std::uint64_t PerfettoWriter::new_counter_track(std::uint64_t parent, std::string_view name, CounterUnit unit) {
  const std::uint64_t uuid = next_uuid_++;
  packets_.counter_track(uuid, parent, name, unit);
  ++result_.tracks;
  return uuid;
}

// --- slices on lanes

std::uint64_t PerfettoWriter::place(const TrackKey& key, std::int64_t start, std::int64_t end) {
  if (start < 0) {
    ++result_.negative_times;
    return 0;
  }
  end = std::max(end, start);
  for (std::size_t i = 0;; ++i) {
    Lane& lane = lane_of(key, i);  // used before the next lane_of() may grow the vector
    close_until(lane, start);
    if (lane.open_ends.empty() || end <= lane.open_ends.back()) {
      lane.open_ends.push_back(end);
      return lane.uuid;
    }
  }
}

void PerfettoWriter::close_until(Lane& lane, std::int64_t t) {
  while (!lane.open_ends.empty() && lane.open_ends.back() <= t) {
    write_end(lane.uuid, lane.open_ends.back());
    lane.open_ends.pop_back();
  }
}

void PerfettoWriter::close_all() {
  for (auto& [key, lanes] : tracks_) {
    for (Lane& lane : lanes) {
      while (!lane.open_ends.empty()) {  // innermost first: ends in time order
        write_end(lane.uuid, lane.open_ends.back());
        lane.open_ends.pop_back();
      }
    }
  }
}

void PerfettoWriter::write_end(std::uint64_t uuid, std::int64_t ts) {
  packets_.begin_event(EventType::kSliceEnd, uuid);  // no name or category: Perfetto closes the innermost open slice
  packets_.emit(ts);
}

// --- rows

void PerfettoWriter::read_communicators() {
  for (CommunicatorRow& c : reader_.rows<CommunicatorRow>()) communicators_.emplace(c.communicator_id, c);
  // The device of a collective is its task's: found in the task pass.
  reader_.for_each([this](const CommunicationRow& c) { communication_devices_.emplace(c.task_id, -2); });
}

void PerfettoWriter::write_task(const TaskRow& t) {
  if (!communication_devices_.empty()) {
    if (const auto it = communication_devices_.find(t.task_id); it != communication_devices_.end())
      it->second = t.device_id;
  }
  // A copy recorded in both TASK and MEMCPY is drawn once, from the richer MEMCPY row.
  if (is(t.task_type, TaskType::kMemcpy) && copies_.contains(t.connection_id)) return;
  const std::int64_t pid = device_pid(t.device_id);
  // Golden kernels run inline on the host thread that called them: one lane per host thread.
  const TrackKey key{pid, wrap_lane(t.device_id >= 0 ? t.stream_id : t.thread_id), Holds::kTasks};
  const std::int64_t end = t.start_ns + duration_saturated(t.start_ns, t.end_ns);  // Note [Timestamp range]
  const std::uint64_t track = place(key, t.start_ns, end);
  if (track == 0) return;
  perfetto::Packets& p = packets_;
  p.begin_event(EventType::kSliceBegin, track, p.name_iid(t.name_id, reader_.string(t.op_type_id)),
                p.category_iid("task"));
  p.arg_string(Arg::kOpType, t.op_type_id);
  p.arg(Arg::kTaskType, task_type_name(t.task_type));
  p.arg(Arg::kBlockDim, t.block_dim);
  p.arg(Arg::kFlops, t.flops);
  p.arg(Arg::kBytes, t.bytes);
  p.arg(Arg::kOverflow, t.overflow);
  if (t.underflow != 0 || t.subnormal != 0) {  // Note [Underflow counts]: most tasks have none
    p.arg(Arg::kUnderflow, t.underflow);
    p.arg(Arg::kSubnormal, t.subnormal);
  }
  if (t.fallback != 0) p.arg(Arg::kFallback, t.fallback);
  p.arg_string(Arg::kInputShapes, t.input_shapes_id);
  p.arg_string(Arg::kInputDtypes, t.input_dtypes_id);
  p.arg_string(Arg::kInputFormats, t.input_formats_id);
  p.arg_string(Arg::kOutputShapes, t.output_shapes_id);
  p.arg_string(Arg::kOutputDtypes, t.output_dtypes_id);
  p.arg_string(Arg::kOutputFormats, t.output_formats_id);
  p.arg(Arg::kTaskId, t.task_id);
  p.arg(Arg::kStreamId, t.stream_id);
  p.arg(Arg::kConnectionId, t.connection_id);
  p.arg(Arg::kCallIndex, t.call_index);
  // Steps are host ranges: a task is in the step it was launched in (queued_ns), not the one it ran in.
  if (const auto step = steps_.at(t.queued_ns > 0 ? t.queued_ns : t.start_ns)) p.arg(Arg::kStep, *step);
  if (!pmu_.empty()) annotate_pmu(t.task_id);
  if (!compare_.empty()) annotate_compare(t.task_id);
  if (t.connection_id != 0) {
    p.flow(static_cast<std::uint64_t>(t.connection_id));
    launches_.insert(t.connection_id);
  }
  if (t.pytorch_api_id != 0) {
    p.arg(Arg::kPytorchOpId, t.pytorch_api_id);
    if (const std::uint64_t flow = op_flows_.next_task(t.pytorch_api_id); flow != 0) {
      p.flow(flow);
      ++result_.op_flows;
    } else {
      ++result_.unlinked_op_tasks;
    }
  }
  p.emit(t.start_ns);
  ++result_.tasks;
  if (t.overflow != 0) {
    write_instant(track, t.start_ns, "overflow", t.name_id, 0);
    ++result_.overflow_tasks;
  }
  if (t.underflow != 0) {
    write_instant(track, t.start_ns, "underflow", t.name_id, t.underflow);
    ++result_.underflow_tasks;
  }
}

// A real profile's hardware metrics of the task (TASK_PMU), as "pmu.<metric>".
void PerfettoWriter::annotate_pmu(std::int64_t task_id) {
  for (const TaskPmuRow& m : pmu_.rows_of(task_id)) {
    auto [it, added] = pmu_names_.try_emplace(m.name_id);
    if (added) it->second = "pmu." + (reader_.string(m.name_id).empty() ? "metric" : reader_.string(m.name_id));
    packets_.arg(it->second, m.value);
    ++result_.pmu_values;
  }
}

// `npuscope compare`'s verdict of the task (COMPARE_RESULT), decided by its outputs as the viewer
// does: fail if one fails, pass if one passes and none fails; the worst of their metrics.
void PerfettoWriter::annotate_compare(std::int64_t task_id) {
  const std::span<const CompareResultRow> rows = compare_.rows_of(task_id);
  if (rows.empty()) return;
  bool fail = false, pass = false;
  std::int32_t origin = 0;
  StringId reason = 0;
  double cosine = NAN, max_abs = NAN, max_rel = NAN;
  const auto worst = [](double& into, double v, bool lower) {
    if (std::isnan(v)) return;
    if (std::isnan(into) || (lower ? v < into : v > into)) into = v;
  };
  for (const CompareResultRow& r : rows) {
    if (!is(r.role, TensorRole::kOutput) || is(r.verdict, Verdict::kNotApplicable)) continue;
    if (is(r.verdict, Verdict::kFail) && !fail) {
      fail = true;
      origin = r.origin;
      reason = r.reason_id;
    }
    pass = pass || is(r.verdict, Verdict::kPass);
    worst(cosine, r.cosine, true);
    worst(max_abs, r.max_abs_err, false);
    worst(max_rel, r.max_rel_err, false);
  }
  const Verdict verdict = fail ? Verdict::kFail : pass ? Verdict::kPass : Verdict::kNotApplicable;
  packets_.arg(std::string_view("compare.verdict"), enum_name(verdict));
  if (fail) {
    packets_.arg(std::string_view("compare.origin"), stored_name<ErrorOrigin>(origin, "origin"));
    if (!reader_.string(reason).empty()) packets_.arg(std::string_view("compare.reason"), reader_.string(reason));
  }
  if (!std::isnan(cosine)) packets_.arg("compare.cosine", cosine);
  if (!std::isnan(max_abs)) packets_.arg("compare.max_abs_err", max_abs);
  if (!std::isnan(max_rel)) packets_.arg("compare.max_rel_err", max_rel);
  ++result_.compared_tasks;
}

// An instant inside the task it marks (at its start, written after it: nested in it).
void PerfettoWriter::write_instant(std::uint64_t track, std::int64_t ts, std::string_view name, StringId op,
                                   std::int64_t flushed) {
  packets_.begin_event(EventType::kInstant, track, packets_.literal_iid(name), packets_.category_iid(name));
  packets_.arg_string(Arg::kOp, op);
  if (flushed != 0) packets_.arg(Arg::kFlushed, flushed);
  packets_.emit(ts);
}

void PerfettoWriter::write_memcpy(const MemcpyRow& c) {
  const TrackKey key{device_pid(c.device_id), wrap_lane(c.stream_id), Holds::kCopies};
  const std::uint64_t track = place(key, c.start_ns, c.start_ns + duration_saturated(c.start_ns, c.end_ns));
  if (track == 0) return;
  const std::string kind = export_util::copy_kind_name(c.copy_kind);
  perfetto::Packets& p = packets_;
  p.begin_event(EventType::kSliceBegin, track, p.literal_iid("Memcpy " + kind), p.category_iid("memcpy"));
  p.arg(Arg::kCopyKind, kind);
  p.arg(Arg::kBytes, c.bytes);
  p.arg(Arg::kTaskId, c.task_id);
  p.arg(Arg::kStreamId, c.stream_id);
  p.arg(Arg::kConnectionId, c.connection_id);
  if (c.connection_id != 0) {
    p.flow(static_cast<std::uint64_t>(c.connection_id));
    launches_.insert(c.connection_id);
    copies_.insert(c.connection_id);
  }
  p.emit(c.start_ns);
  ++result_.memcpys;
}

void PerfettoWriter::write_api(const ApiRow& a) {
  const TrackKey key{kHostPid, wrap_lane(a.thread_id), Holds::kApi};
  const std::uint64_t track = place(key, a.start_ns, a.start_ns + duration_saturated(a.start_ns, a.end_ns));
  if (track == 0) return;
  perfetto::Packets& p = packets_;
  p.begin_event(EventType::kSliceBegin, track, p.name_iid(a.name_id, "api"), p.category_iid("api"));
  p.arg(Arg::kConnectionId, a.connection_id);
  if (const auto level = enum_from_value<ApiLevel>(a.level); level && *level != ApiLevel::kUnknown)
    p.arg(Arg::kLevel, enum_name(*level));
  if (a.connection_id != 0 && launches_.contains(a.connection_id)) {
    p.flow(static_cast<std::uint64_t>(a.connection_id));
    ++result_.flows;
  }
  p.emit(a.start_ns);
  ++result_.apis;
}

void PerfettoWriter::write_marker(const MarkerRow& m) {
  const TrackKey key{kHostPid, wrap_lane(m.thread_id), Holds::kMarkers};
  const bool step = is(m.kind, MarkerKind::kStep);
  const bool instant = m.end_ns <= m.start_ns;
  const std::uint64_t track = instant ? (m.start_ns < 0 ? 0 : track_uuid(key)) : place(key, m.start_ns, m.end_ns);
  if (track == 0) {
    if (instant) ++result_.negative_times;
    return;
  }
  std::string name = reader_.string(m.name_id);
  if (name.empty()) name = step ? "step " + std::to_string(m.step) : "marker";
  packets_.begin_event(instant ? EventType::kInstant : EventType::kSliceBegin, track, packets_.literal_iid(name),
                       packets_.category_iid(step ? "step" : "marker"));
  if (step) packets_.arg(Arg::kStep, m.step);
  packets_.emit(m.start_ns);
  ++result_.markers;
}

void PerfettoWriter::write_pytorch_op(const PytorchApiRow& op) {
  const TrackKey key{kHostPid, wrap_lane(op.thread_id), Holds::kThread};
  const std::uint64_t track = place(key, op.start_ns, op.start_ns + duration_saturated(op.start_ns, op.end_ns));
  if (track == 0) return;
  const auto kind = enum_from_value<HostOpKind>(op.kind);
  const char* category = !kind                                    ? "cpu_op"
                         : *kind == HostOpKind::kModule           ? "module"
                         : *kind == HostOpKind::kBackwardFunction ? "backward"
                         : *kind == HostOpKind::kOptimizer        ? "optimizer"
                                                                  : "cpu_op";
  perfetto::Packets& p = packets_;
  p.begin_event(EventType::kSliceBegin, track, p.name_iid(op.name_id, "op"), p.category_iid(category));
  p.arg(Arg::kPass, stored_name<ModelPass>(op.pass, "pass"));
  p.arg_string(Arg::kModule, op.module_id);
  p.arg_string(Arg::kInputShapes, op.input_shapes_id);
  p.arg_string(Arg::kInputDtypes, op.input_dtypes_id);
  p.arg(Arg::kSequenceNumber, op.sequence_number);
  p.arg(Arg::kId, op.id);
  if (const auto step = steps_.at(op.start_ns)) p.arg(Arg::kStep, *step);
  const std::uint32_t tasks = op_flows_.tasks(op.id);  // Note [Flows from PyTorch ops]
  for (std::uint32_t k = 0; k < tasks; ++k) p.flow(export_util::OpFlows::id(op.id, k));
  p.emit(op.start_ns);
  ++result_.pytorch_ops;
}

// A collective on a track of its communicator, in the process of the device its task ran on (the
// first device if its task is not in the trace).
void PerfettoWriter::write_communication(const CommunicationRow& c) {
  std::int32_t device = devices_.empty() ? 0 : devices_.front().device_id;
  if (const auto it = communication_devices_.find(c.task_id); it != communication_devices_.end() && it->second != -2)
    device = it->second;
  const TrackKey key{device_pid(device), wrap_lane(c.communicator_id), Holds::kCommunication};
  const std::uint64_t track = place(key, c.start_ns, c.start_ns + duration_saturated(c.start_ns, c.end_ns));
  if (track == 0) return;
  perfetto::Packets& p = packets_;
  p.begin_event(EventType::kSliceBegin, track, p.literal_iid(stored_name<CollectiveKind>(c.kind, "collective")),
                p.category_iid("communication"));
  if (const auto it = communicators_.find(c.communicator_id); it != communicators_.end())
    p.arg_string(Arg::kCommunicator, it->second.name_id);
  p.arg(Arg::kSequence, c.sequence);
  p.arg(Arg::kAlgorithm, stored_name<CollectiveAlgorithm>(c.algorithm, "algorithm"));
  p.arg(Arg::kReduceOp, stored_name<ReduceOp>(c.reduce_op, "reduce_op"));
  p.arg(Arg::kDtype, export_util::tensor_dtype_name(c.dtype));
  p.arg(Arg::kBytes, c.bytes);
  if (c.root_or_peer >= 0) p.arg(Arg::kPeer, c.root_or_peer);
  p.arg(Arg::kLastRank, c.last_rank);
  if (c.arrival_ns > 0 && c.arrival_ns <= c.start_ns) p.arg(Arg::kWaitNs, c.start_ns - c.arrival_ns);
  p.arg(Arg::kTaskId, c.task_id);
  p.emit(c.start_ns);
  ++result_.communications;
}

void PerfettoWriter::write_memory(const MemoryRow& r) {
  if (r.ts_ns < 0) {
    ++result_.negative_times;
    return;
  }
  const std::int64_t pid = device_pid(r.device_id);
  auto [it, added] = memory_counters_.try_emplace(pid);
  if (added) {
    const std::uint64_t process = process_uuid(pid);
    it->second = {new_counter_track(process, "memory allocated", CounterUnit::kBytes),
                  new_counter_track(process, "memory reserved", CounterUnit::kBytes)};
  }
  for (const auto& [track, value] :
       {std::pair{it->second.first, r.allocated_bytes}, std::pair{it->second.second, r.reserved_bytes}}) {
    packets_.begin_event(EventType::kCounter, track);
    packets_.counter_value(value);
    packets_.emit(r.ts_ns);
  }
  ++result_.memory_records;
}

// A real profile's counter (AI Core frequency, bandwidths, memory, an accelerator's PMU: a 910B
// profile has some 200): a track per name, in a group "profile counters" of its device (or of the
// host, for one of no device) that the UI shows folded.
void PerfettoWriter::write_counter(const CounterRow& r) {
  if (r.ts_ns < 0) {
    ++result_.negative_times;
    return;
  }
  auto [it, added] = counters_by_name_id_.try_emplace(std::pair{r.device_id, r.name_id}, 0);
  if (added) {
    const std::int64_t pid = r.device_id >= 0 ? device_pid(r.device_id) : kHostPid;
    auto [group, new_group] = counter_groups_.try_emplace(pid, 0);
    if (new_group) {
      group->second = next_uuid_++;
      packets_.child_track(group->second, process_uuid(pid), "profile counters", kProfileCountersRank);
      ++result_.tracks;
    }
    const std::string& name = reader_.string(r.name_id);
    it->second = new_counter_track(group->second, name.empty() ? "counter" : name, CounterUnit::kNone);
  }
  packets_.begin_event(EventType::kCounter, it->second);
  packets_.counter_value(r.value);
  packets_.emit(r.ts_ns);
  ++result_.counter_values;
}

}  // namespace

PerfettoExportResult export_perfetto_trace(const TraceReader& reader, const std::string& path) {
  return PerfettoWriter(reader, path).run();
}

}  // namespace npuscope::collector

// See Note [Perfetto trace layout] in export_perfetto.h and Note [Exports stream] in export_util.h.
#include "npuscope/collector/export_perfetto.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "connection_set.h"
#include "export_util.h"
#include "npuscope/collector/time_math.h"
#include "protobuf_wire.h"

namespace npuscope::collector {
namespace {

namespace wire = protobuf_wire;
using wire::Nested;

// Field numbers of collector/proto/perfetto_trace.proto (Perfetto's): the tests decode what is
// written here with that file.
namespace field {
constexpr std::uint32_t kTracePacket = 1;  // Trace.packet
namespace packet {
constexpr std::uint32_t kTimestamp = 8, kSequenceId = 10, kTrackEvent = 11, kInternedData = 12, kSequenceFlags = 13,
                        kTrackDescriptor = 60, kFirstPacketOnSequence = 87;
}
namespace event {
constexpr std::uint32_t kCategoryIids = 3, kDebugAnnotations = 4, kType = 9, kNameIid = 10, kTrackUuid = 11,
                        kCounterValue = 30, kFlowIds = 47;
}
namespace track {
constexpr std::uint32_t kUuid = 1, kName = 2, kProcess = 3, kThread = 4, kParentUuid = 5, kCounter = 8,
                        kSiblingOrderRank = 12, kDescription = 14, kSiblingMergeBehavior = 15, kProcessOrdering = 19,
                        kThreadOrdering = 20;
}
namespace process {
constexpr std::uint32_t kPid = 1, kName = 6, kLabels = 8;
}
namespace thread {
constexpr std::uint32_t kPid = 1, kTid = 2, kName = 5;
}
namespace counter {
constexpr std::uint32_t kUnit = 3;
}
namespace annotation {
constexpr std::uint32_t kNameIid = 1, kIntValue = 4, kStringValue = 6;
}
namespace interned {
constexpr std::uint32_t kCategories = 1, kEventNames = 2, kAnnotationNames = 3;
constexpr std::uint32_t kIid = 1, kName = 2;  // EventCategory, EventName, DebugAnnotationName
}  // namespace interned
}  // namespace field

// Enum values of the same file.
constexpr std::int64_t kSliceBegin = 1, kSliceEnd = 2, kInstant = 3, kCounter = 4;
constexpr std::int64_t kStateCleared = 1, kNeedsState = 2;  // TracePacket.SequenceFlags
constexpr std::int64_t kUnitBytes = 3;                      // CounterDescriptor.Unit
constexpr std::int64_t kMergeNone = 2;                      // TrackDescriptor.SiblingMergeBehavior
constexpr std::int64_t kExplicitOrdering = 1;               // process_ordering, thread_ordering
constexpr std::int64_t kSequence = 1;

using export_util::device_pid;  // pids and tids as in the Chrome export: Note [Export pids]
using export_util::kFirstNpuPid;
using export_util::kGoldenPid;
using export_util::kHostPid;
using export_util::kLaneStride;
std::int64_t wrap_lane(std::int64_t lane) { return ((lane % kLaneStride) + kLaneStride) % kLaneStride; }

// What a track holds, each kind of row its own track (Note [Perfetto trace layout]).
enum class Holds : std::uint8_t { kThread, kApi, kMarkers, kTasks, kCopies };

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

class PerfettoWriter {
 public:
  PerfettoWriter(const TraceReader& reader, const std::string& path) : reader_(reader), out_(path) {
    result_.path = path;
  }
  PerfettoExportResult run();

 private:
  // An event is built in event_ (its TrackEvent) and interned_ (the names it interns first), then
  // written as one packet: start_event() ... annotate() ... emit_event().
  void start_event(std::int64_t type, std::uint64_t track, std::uint64_t name_iid = 0, std::uint64_t category_iid = 0);
  void emit_event(std::int64_t ts);
  void annotate(std::string_view name, std::int64_t value);
  void annotate(std::string_view name, std::string_view value);
  void annotate_string_id(std::string_view name, StringId id);  // left out when id is 0

  std::uint64_t name_iid(StringId id, std::string_view fallback);
  std::uint64_t literal_iid(std::string_view name);
  std::uint64_t category_iid(std::string_view category);
  std::uint64_t annotation_iid(std::string_view name);
  void intern(std::uint32_t table, std::uint64_t iid, std::string_view name);

  void write_first_packet();
  std::uint64_t process_uuid(std::int64_t pid);
  std::uint64_t track_uuid(const TrackKey& key);
  Lane& lane_of(const TrackKey& key, std::size_t lane);  // described when first asked for
  void describe_track(std::uint64_t uuid, const TrackKey& key, std::size_t lane);
  std::uint64_t counter_uuid(std::int64_t pid, int which);

  // Opens a slice [start, end) on the first lane of `key` it nests in, writing the ends of the
  // slices it follows; returns that lane's uuid, or 0 if it cannot be written (a negative start).
  std::uint64_t place(const TrackKey& key, std::int64_t start, std::int64_t end);
  void close_until(Lane& lane, std::int64_t t);  // writes the ends of the slices ended by t
  void close_all();                              // at the end of each table
  void write_end(std::uint64_t uuid, std::int64_t ts);

  // Streams a table through SameStartRuns into `write`, then ends every slice left open.
  template <class Row, class Write>
  void write_table(Write&& write);

  void write_task(const TaskRow& t);
  void write_memcpy(const MemcpyRow& c);
  void write_api(const ApiRow& a);
  void write_marker(const MarkerRow& m);
  void write_pytorch_op(const PytorchApiRow& p);
  void write_memory(const MemoryRow& r);
  void write_instant(std::uint64_t track, std::int64_t ts, std::string_view name, StringId op, std::int64_t flushed);

  std::string& buf() { return out_.buffer(); }

  const TraceReader& reader_;
  export_util::OutputFile out_;
  PerfettoExportResult result_;
  std::vector<DeviceInfoRow> devices_;
  // Interning, each table its own iids from 1 (Note [Perfetto trace layout]).
  std::unordered_map<StringId, std::uint64_t> names_by_id_;
  std::unordered_map<std::string, std::uint64_t> literal_names_, categories_, annotation_names_;
  std::uint64_t next_name_iid_ = 1, next_category_iid_ = 1, next_annotation_iid_ = 1;
  std::string interned_;  // InternedData of the packet being written
  std::string event_;     // its TrackEvent's annotations, appended by annotate()
  // Tracks: uuids are 1 + the order they were made in; 0 is Perfetto's root.
  std::map<std::int64_t, std::uint64_t> processes_;
  std::map<TrackKey, std::vector<Lane>> tracks_;
  std::map<std::pair<std::int64_t, int>, std::uint64_t> counters_;
  std::uint64_t next_uuid_ = 1;
  export_util::ConnectionSet copies_, launches_;
};

PerfettoExportResult PerfettoWriter::run() {
  devices_ = reader_.rows<DeviceInfoRow>();
  write_first_packet();
  // Device work first: the API pass then knows which calls launched something.
  write_table<MemcpyRow>([this](const MemcpyRow& c) { write_memcpy(c); });
  write_table<TaskRow>([this](const TaskRow& t) { write_task(t); });
  write_table<ApiRow>([this](const ApiRow& a) { write_api(a); });
  write_table<MarkerRow>([this](const MarkerRow& m) { write_marker(m); });
  write_table<PytorchApiRow>([this](const PytorchApiRow& p) { write_pytorch_op(p); });
  reader_.for_each([this](const MemoryRow& r) { write_memory(r); });
  out_.commit();
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

// The sequence's first packet clears its incremental state, and orders processes and threads by
// their rank (uuid 0, Perfetto's root track).
void PerfettoWriter::write_first_packet() {
  const Nested packet = Nested::begin(buf(), field::kTracePacket);
  wire::varint_field(buf(), field::packet::kSequenceId, kSequence);
  wire::varint_field(buf(), field::packet::kSequenceFlags, kStateCleared);
  wire::varint_field(buf(), field::packet::kFirstPacketOnSequence, 1);
  const Nested track = Nested::begin(buf(), field::packet::kTrackDescriptor);
  wire::varint_field(buf(), field::track::kUuid, 0);
  wire::varint_field(buf(), field::track::kProcessOrdering, kExplicitOrdering);
  wire::varint_field(buf(), field::track::kThreadOrdering, kExplicitOrdering);
  track.end(buf());
  packet.end(buf());
  ++result_.packets;
}

std::uint64_t PerfettoWriter::process_uuid(std::int64_t pid) {
  if (const auto it = processes_.find(pid); it != processes_.end()) return it->second;
  const std::uint64_t uuid = next_uuid_++;
  processes_.emplace(pid, uuid);
  const Nested packet = Nested::begin(buf(), field::kTracePacket);
  wire::varint_field(buf(), field::packet::kSequenceId, kSequence);
  const Nested track = Nested::begin(buf(), field::packet::kTrackDescriptor);
  wire::varint_field(buf(), field::track::kUuid, static_cast<std::int64_t>(uuid));
  wire::varint_field(buf(), field::track::kSiblingOrderRank, export_util::process_rank(pid));
  const Nested process = Nested::begin(buf(), field::track::kProcess);
  wire::varint_field(buf(), field::process::kPid, pid);
  wire::string_field(buf(), field::process::kName, export_util::process_name(pid));
  for (const DeviceInfoRow& d : devices_) {
    if (pid >= kFirstNpuPid && device_pid(d.device_id) == pid && !d.name.empty())
      wire::string_field(buf(), field::process::kLabels, d.name);
  }
  process.end(buf());
  track.end(buf());
  packet.end(buf());
  ++result_.packets;
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

void PerfettoWriter::describe_track(std::uint64_t uuid, const TrackKey& key, std::size_t lane) {
  const bool stream = (key.holds == Holds::kTasks || key.holds == Holds::kCopies) && key.pid >= kFirstNpuPid;
  const std::string base = (stream ? "stream " : "thread ") + std::to_string(key.lane);
  std::string name = base;
  if (key.holds == Holds::kApi) name += " API";
  if (key.holds == Holds::kMarkers) name += " markers";
  if (key.holds == Holds::kCopies) name += " copies";
  if (lane > 0) name += " (" + std::to_string(lane + 1) + ")";
  const bool thread_root = key.holds == Holds::kThread && lane == 0;
  const bool under_thread = key.holds == Holds::kApi || key.holds == Holds::kMarkers || key.holds == Holds::kThread;
  const std::uint64_t parent =
      under_thread ? tracks_.at({key.pid, key.lane, Holds::kThread}).front().uuid : processes_.at(key.pid);
  const Nested packet = Nested::begin(buf(), field::kTracePacket);
  wire::varint_field(buf(), field::packet::kSequenceId, kSequence);
  const Nested track = Nested::begin(buf(), field::packet::kTrackDescriptor);
  wire::varint_field(buf(), field::track::kUuid, static_cast<std::int64_t>(uuid));
  wire::varint_field(buf(), field::track::kSiblingOrderRank, key.lane * 8 + static_cast<std::int64_t>(lane));
  if (thread_root) {
    const Nested thread = Nested::begin(buf(), field::track::kThread);
    wire::varint_field(buf(), field::thread::kPid, key.pid);
    wire::varint_field(buf(), field::thread::kTid, key.pid * kLaneStride + key.lane);
    wire::string_field(buf(), field::thread::kName, name);
    thread.end(buf());
  } else {
    wire::varint_field(buf(), field::track::kParentUuid, static_cast<std::int64_t>(parent));
    wire::string_field(buf(), field::track::kName, name);
    wire::varint_field(buf(), field::track::kSiblingMergeBehavior, kMergeNone);
    if (lane > 0) {
      wire::string_field(buf(), field::track::kDescription,
                         "rows of " + base + " that overlap others there without fitting inside them");
    }
  }
  track.end(buf());
  packet.end(buf());
  ++result_.packets;
  ++result_.tracks;
  if (lane > 0) ++result_.extra_lanes;
}

std::uint64_t PerfettoWriter::counter_uuid(std::int64_t pid, int which) {
  if (const auto it = counters_.find({pid, which}); it != counters_.end()) return it->second;
  const std::uint64_t process = process_uuid(pid);
  const std::uint64_t uuid = next_uuid_++;
  counters_.emplace(std::pair{pid, which}, uuid);
  const Nested packet = Nested::begin(buf(), field::kTracePacket);
  wire::varint_field(buf(), field::packet::kSequenceId, kSequence);
  const Nested track = Nested::begin(buf(), field::packet::kTrackDescriptor);
  wire::varint_field(buf(), field::track::kUuid, static_cast<std::int64_t>(uuid));
  wire::varint_field(buf(), field::track::kParentUuid, static_cast<std::int64_t>(process));
  wire::string_field(buf(), field::track::kName, which == 0 ? "memory allocated" : "memory reserved");
  wire::varint_field(buf(), field::track::kSiblingMergeBehavior, kMergeNone);
  const Nested counter = Nested::begin(buf(), field::track::kCounter);
  wire::varint_field(buf(), field::counter::kUnit, kUnitBytes);
  counter.end(buf());
  track.end(buf());
  packet.end(buf());
  ++result_.packets;
  ++result_.tracks;
  return uuid;
}

// --- interning

void PerfettoWriter::intern(std::uint32_t table, std::uint64_t iid, std::string_view name) {
  const Nested entry = Nested::begin(interned_, table);
  wire::varint_field(interned_, field::interned::kIid, static_cast<std::int64_t>(iid));
  wire::string_field(interned_, field::interned::kName, name);
  entry.end(interned_);
}

std::uint64_t PerfettoWriter::name_iid(StringId id, std::string_view fallback) {
  if (id == 0) return literal_iid(fallback);
  const auto [it, added] = names_by_id_.try_emplace(id, 0);
  if (!added) return it->second;
  const std::string& name = reader_.string(id);
  if (name.empty()) return it->second = literal_iid(fallback);
  it->second = next_name_iid_++;
  intern(field::interned::kEventNames, it->second, name);
  return it->second;
}

std::uint64_t PerfettoWriter::literal_iid(std::string_view name) {
  const auto [it, added] = literal_names_.try_emplace(std::string(name), 0);
  if (added) {
    it->second = next_name_iid_++;
    intern(field::interned::kEventNames, it->second, name);
  }
  return it->second;
}

std::uint64_t PerfettoWriter::category_iid(std::string_view category) {
  const auto [it, added] = categories_.try_emplace(std::string(category), 0);
  if (added) {
    it->second = next_category_iid_++;
    intern(field::interned::kCategories, it->second, category);
  }
  return it->second;
}

std::uint64_t PerfettoWriter::annotation_iid(std::string_view name) {
  const auto [it, added] = annotation_names_.try_emplace(std::string(name), 0);
  if (added) {
    it->second = next_annotation_iid_++;
    intern(field::interned::kAnnotationNames, it->second, name);
  }
  return it->second;
}

// --- events

void PerfettoWriter::start_event(std::int64_t type, std::uint64_t track, std::uint64_t name_iid,
                                 std::uint64_t category_iid) {
  event_.clear();
  wire::varint_field(event_, field::event::kType, type);
  wire::varint_field(event_, field::event::kTrackUuid, static_cast<std::int64_t>(track));
  if (name_iid != 0) wire::varint_field(event_, field::event::kNameIid, static_cast<std::int64_t>(name_iid));
  if (category_iid != 0)
    wire::varint_field(event_, field::event::kCategoryIids, static_cast<std::int64_t>(category_iid));
}

// The packet: its time, the sequence (whose interned names it uses), the names it interns first
// (read before its event), the event.
void PerfettoWriter::emit_event(std::int64_t ts) {
  const Nested packet = Nested::begin(buf(), field::kTracePacket);
  wire::varint_field(buf(), field::packet::kTimestamp, ts);
  wire::varint_field(buf(), field::packet::kSequenceId, kSequence);
  wire::varint_field(buf(), field::packet::kSequenceFlags, kNeedsState);
  if (!interned_.empty()) {
    wire::string_field(buf(), field::packet::kInternedData, interned_);
    interned_.clear();
  }
  wire::string_field(buf(), field::packet::kTrackEvent, event_);
  packet.end(buf());
  ++result_.packets;
  out_.maybe_flush();
}

void PerfettoWriter::annotate(std::string_view name, std::int64_t value) {
  const std::uint64_t iid = annotation_iid(name);
  const Nested a = Nested::begin(event_, field::event::kDebugAnnotations);
  wire::varint_field(event_, field::annotation::kNameIid, static_cast<std::int64_t>(iid));
  wire::varint_field(event_, field::annotation::kIntValue, value);
  a.end(event_);
}

void PerfettoWriter::annotate(std::string_view name, std::string_view value) {
  const std::uint64_t iid = annotation_iid(name);
  const Nested a = Nested::begin(event_, field::event::kDebugAnnotations);
  wire::varint_field(event_, field::annotation::kNameIid, static_cast<std::int64_t>(iid));
  wire::string_field(event_, field::annotation::kStringValue, value);
  a.end(event_);
}

void PerfettoWriter::annotate_string_id(std::string_view name, StringId id) {
  if (id != 0) annotate(name, reader_.string(id));
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
  start_event(kSliceEnd, uuid);  // no name or category: Perfetto closes the innermost open slice
  emit_event(ts);
}

// --- rows

void PerfettoWriter::write_task(const TaskRow& t) {
  // A copy recorded in both TASK and MEMCPY is drawn once, from the richer MEMCPY row.
  if (is(t.task_type, TaskType::kMemcpy) && copies_.contains(t.connection_id)) return;
  const std::int64_t pid = device_pid(t.device_id);
  // Golden kernels run inline on the host thread that called them: one lane per host thread.
  const TrackKey key{pid, wrap_lane(t.device_id >= 0 ? t.stream_id : t.thread_id), Holds::kTasks};
  const std::int64_t end = t.start_ns + duration_saturated(t.start_ns, t.end_ns);  // Note [Timestamp range]
  const std::uint64_t track = place(key, t.start_ns, end);
  if (track == 0) return;
  const std::uint64_t name = name_iid(t.name_id, reader_.string(t.op_type_id));
  start_event(kSliceBegin, track, name, category_iid("task"));
  annotate_string_id("op_type", t.op_type_id);
  annotate("task_type", task_type_name(t.task_type));
  annotate("block_dim", t.block_dim);
  annotate("flops", t.flops);
  annotate("bytes", t.bytes);
  annotate("overflow", t.overflow);
  if (t.underflow != 0 || t.subnormal != 0) {  // Note [Underflow counts]: most tasks have none
    annotate("underflow", t.underflow);
    annotate("subnormal", t.subnormal);
  }
  if (t.fallback != 0) annotate("fallback", t.fallback);
  annotate_string_id("input_shapes", t.input_shapes_id);
  annotate_string_id("input_dtypes", t.input_dtypes_id);
  annotate_string_id("input_formats", t.input_formats_id);
  annotate_string_id("output_shapes", t.output_shapes_id);
  annotate_string_id("output_dtypes", t.output_dtypes_id);
  annotate_string_id("output_formats", t.output_formats_id);
  annotate("task_id", t.task_id);
  annotate("stream_id", t.stream_id);
  annotate("connection_id", t.connection_id);
  annotate("call_index", t.call_index);
  if (t.pytorch_api_id != 0) annotate("pytorch_op_id", t.pytorch_api_id);
  if (t.connection_id != 0) {
    wire::fixed64_field(event_, field::event::kFlowIds, static_cast<std::uint64_t>(t.connection_id));
    launches_.insert(t.connection_id);
  }
  emit_event(t.start_ns);
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

// An instant inside the task it marks (at its start, written after it: nested in it).
void PerfettoWriter::write_instant(std::uint64_t track, std::int64_t ts, std::string_view name, StringId op,
                                   std::int64_t flushed) {
  const std::uint64_t iid = literal_iid(name);
  start_event(kInstant, track, iid, category_iid(name));
  annotate_string_id("op", op);
  if (flushed != 0) annotate("flushed", flushed);
  emit_event(ts);
}

void PerfettoWriter::write_memcpy(const MemcpyRow& c) {
  const TrackKey key{device_pid(c.device_id), wrap_lane(c.stream_id), Holds::kCopies};
  const std::uint64_t track = place(key, c.start_ns, c.start_ns + duration_saturated(c.start_ns, c.end_ns));
  if (track == 0) return;
  const std::string kind = export_util::copy_kind_name(c.copy_kind);
  const std::uint64_t name = literal_iid("Memcpy " + kind);
  start_event(kSliceBegin, track, name, category_iid("memcpy"));
  annotate("copy_kind", kind);
  annotate("bytes", c.bytes);
  annotate("task_id", c.task_id);
  annotate("stream_id", c.stream_id);
  annotate("connection_id", c.connection_id);
  if (c.connection_id != 0) {
    wire::fixed64_field(event_, field::event::kFlowIds, static_cast<std::uint64_t>(c.connection_id));
    launches_.insert(c.connection_id);
    copies_.insert(c.connection_id);
  }
  emit_event(c.start_ns);
  ++result_.memcpys;
}

void PerfettoWriter::write_api(const ApiRow& a) {
  const TrackKey key{kHostPid, wrap_lane(a.thread_id), Holds::kApi};
  const std::uint64_t track = place(key, a.start_ns, a.start_ns + duration_saturated(a.start_ns, a.end_ns));
  if (track == 0) return;
  const std::uint64_t name = name_iid(a.name_id, "api");
  start_event(kSliceBegin, track, name, category_iid("api"));
  annotate("connection_id", a.connection_id);
  if (const auto level = enum_from_value<ApiLevel>(a.level); level && *level != ApiLevel::kUnknown)
    annotate("level", enum_name(*level));
  if (a.connection_id != 0 && launches_.contains(a.connection_id)) {
    wire::fixed64_field(event_, field::event::kFlowIds, static_cast<std::uint64_t>(a.connection_id));
    ++result_.flows;
  }
  emit_event(a.start_ns);
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
  start_event(instant ? kInstant : kSliceBegin, track, literal_iid(name), category_iid(step ? "step" : "marker"));
  if (step) annotate("step", m.step);
  emit_event(m.start_ns);
  ++result_.markers;
}

void PerfettoWriter::write_pytorch_op(const PytorchApiRow& p) {
  const TrackKey key{kHostPid, wrap_lane(p.thread_id), Holds::kThread};
  const std::uint64_t track = place(key, p.start_ns, p.start_ns + duration_saturated(p.start_ns, p.end_ns));
  if (track == 0) return;
  const auto kind = enum_from_value<HostOpKind>(p.kind);
  const char* category = !kind                                    ? "cpu_op"
                         : *kind == HostOpKind::kModule           ? "module"
                         : *kind == HostOpKind::kBackwardFunction ? "backward"
                         : *kind == HostOpKind::kOptimizer        ? "optimizer"
                                                                  : "cpu_op";
  start_event(kSliceBegin, track, name_iid(p.name_id, "op"), category_iid(category));
  annotate("pass", stored_name<ModelPass>(p.pass, "pass"));
  annotate_string_id("module", p.module_id);
  annotate_string_id("input_shapes", p.input_shapes_id);
  annotate_string_id("input_dtypes", p.input_dtypes_id);
  annotate("sequence_number", p.sequence_number);
  annotate("id", p.id);
  emit_event(p.start_ns);
  ++result_.pytorch_ops;
}

void PerfettoWriter::write_memory(const MemoryRow& r) {
  if (r.ts_ns < 0) {
    ++result_.negative_times;
    return;
  }
  const std::int64_t pid = device_pid(r.device_id);
  for (const auto& [which, value] : {std::pair{0, r.allocated_bytes}, std::pair{1, r.reserved_bytes}}) {
    start_event(kCounter, counter_uuid(pid, which));
    wire::varint_field(event_, field::event::kCounterValue, value);
    emit_event(r.ts_ns);
  }
  ++result_.memory_records;
}

}  // namespace

PerfettoExportResult export_perfetto_trace(const TraceReader& reader, const std::string& path) {
  return PerfettoWriter(reader, path).run();
}

}  // namespace npuscope::collector

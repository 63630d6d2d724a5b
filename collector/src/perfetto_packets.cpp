// See perfetto_packets.h.
#include "perfetto_packets.h"

#include <utility>

#include "protobuf_wire.h"

namespace npuscope::collector::perfetto {
namespace {

namespace wire = protobuf_wire;
using wire::Nested;

// Field numbers of collector/proto/perfetto_trace.proto (Perfetto's).
namespace field {
constexpr std::uint32_t kTracePacket = 1;  // Trace.packet
namespace packet {
constexpr std::uint32_t kTimestamp = 8, kSequenceId = 10, kTrackEvent = 11, kInternedData = 12, kSequenceFlags = 13,
                        kTrackDescriptor = 60, kFirstPacketOnSequence = 87;
}
namespace event {
constexpr std::uint32_t kCategoryIids = 3, kDebugAnnotations = 4, kType = 9, kNameIid = 10, kTrackUuid = 11,
                        kCounterValue = 30, kDoubleCounterValue = 44, kFlowIds = 47;
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
constexpr std::uint32_t kNameIid = 1, kIntValue = 4, kDoubleValue = 5, kStringValue = 6, kStringValueIid = 17;
}
namespace interned {
constexpr std::uint32_t kCategories = 1, kEventNames = 2, kAnnotationNames = 3, kAnnotationStringValues = 29;
constexpr std::uint32_t kIid = 1, kName = 2;  // EventCategory, EventName, DebugAnnotationName, InternedString
}  // namespace interned
}  // namespace field

// Enum values of the same file.
constexpr std::int64_t kStateCleared = 1, kNeedsState = 2;  // TracePacket.SequenceFlags
constexpr std::int64_t kMergeNone = 2;                      // TrackDescriptor.SiblingMergeBehavior
constexpr std::int64_t kExplicitOrdering = 1;               // process_ordering, thread_ordering
constexpr std::int64_t kSequence = 1;                       // the one packet sequence

// Each Arg's name, in the enum's order (checked below).
constexpr std::pair<Arg, std::string_view> kArgNames[] = {
    {Arg::kOpType, "op_type"},
    {Arg::kTaskType, "task_type"},
    {Arg::kBlockDim, "block_dim"},
    {Arg::kFlops, "flops"},
    {Arg::kBytes, "bytes"},
    {Arg::kOverflow, "overflow"},
    {Arg::kUnderflow, "underflow"},
    {Arg::kSubnormal, "subnormal"},
    {Arg::kFallback, "fallback"},
    {Arg::kInputShapes, "input_shapes"},
    {Arg::kInputDtypes, "input_dtypes"},
    {Arg::kInputFormats, "input_formats"},
    {Arg::kOutputShapes, "output_shapes"},
    {Arg::kOutputDtypes, "output_dtypes"},
    {Arg::kOutputFormats, "output_formats"},
    {Arg::kTaskId, "task_id"},
    {Arg::kStreamId, "stream_id"},
    {Arg::kConnectionId, "connection_id"},
    {Arg::kCallIndex, "call_index"},
    {Arg::kPytorchOpId, "pytorch_op_id"},
    {Arg::kOp, "op"},
    {Arg::kFlushed, "flushed"},
    {Arg::kCopyKind, "copy_kind"},
    {Arg::kLevel, "level"},
    {Arg::kStep, "step"},
    {Arg::kPass, "pass"},
    {Arg::kModule, "module"},
    {Arg::kSequenceNumber, "sequence_number"},
    {Arg::kId, "id"},
    {Arg::kCommunicator, "communicator"},
    {Arg::kSequence, "sequence"},
    {Arg::kAlgorithm, "algorithm"},
    {Arg::kReduceOp, "reduce_op"},
    {Arg::kDtype, "dtype"},
    {Arg::kPeer, "root_or_peer"},
    {Arg::kLastRank, "last_rank"},
    {Arg::kWaitNs, "wait_ns"},
};
constexpr bool in_enum_order() {
  for (std::size_t i = 0; i < std::size(kArgNames); ++i)
    if (kArgNames[i].first != static_cast<Arg>(i)) return false;
  return std::size(kArgNames) == static_cast<std::size_t>(Arg::kCount);
}
static_assert(in_enum_order());

std::int64_t as_varint(std::uint64_t v) { return static_cast<std::int64_t>(v); }

}  // namespace

void Packets::first_packet() {
  std::string& b = out_.buffer();
  const Nested packet = Nested::begin(b, field::kTracePacket);
  wire::varint_field(b, field::packet::kSequenceId, kSequence);
  wire::varint_field(b, field::packet::kSequenceFlags, kStateCleared);
  wire::varint_field(b, field::packet::kFirstPacketOnSequence, 1);
  const Nested track = Nested::begin(b, field::packet::kTrackDescriptor);
  wire::varint_field(b, field::track::kUuid, 0);  // Perfetto's root track
  wire::varint_field(b, field::track::kProcessOrdering, kExplicitOrdering);
  wire::varint_field(b, field::track::kThreadOrdering, kExplicitOrdering);
  track.end(b);
  packet.end(b);
  ++packets_;
}

// --- track descriptors

template <class Body>
void Packets::track_packet(std::uint64_t uuid, Body&& body) {
  std::string& b = out_.buffer();
  const Nested packet = Nested::begin(b, field::kTracePacket);
  wire::varint_field(b, field::packet::kSequenceId, kSequence);
  const Nested track = Nested::begin(b, field::packet::kTrackDescriptor);
  wire::varint_field(b, field::track::kUuid, as_varint(uuid));
  body(b);
  track.end(b);
  packet.end(b);
  ++packets_;
}

void Packets::process_track(std::uint64_t uuid, std::int64_t pid, std::string_view name, std::string_view label,
                            std::int64_t rank) {
  track_packet(uuid, [&](std::string& b) {
    wire::varint_field(b, field::track::kSiblingOrderRank, rank);
    const Nested process = Nested::begin(b, field::track::kProcess);
    wire::varint_field(b, field::process::kPid, pid);
    wire::string_field(b, field::process::kName, name);
    if (!label.empty()) wire::string_field(b, field::process::kLabels, label);
    process.end(b);
  });
}

void Packets::thread_track(std::uint64_t uuid, std::int64_t pid, std::int64_t tid, std::string_view name,
                           std::int64_t rank) {
  track_packet(uuid, [&](std::string& b) {
    wire::varint_field(b, field::track::kSiblingOrderRank, rank);
    const Nested thread = Nested::begin(b, field::track::kThread);
    wire::varint_field(b, field::thread::kPid, pid);
    wire::varint_field(b, field::thread::kTid, tid);
    wire::string_field(b, field::thread::kName, name);
    thread.end(b);
  });
}

void Packets::child_track(std::uint64_t uuid, std::uint64_t parent, std::string_view name, std::int64_t rank,
                          std::string_view description) {
  track_packet(uuid, [&](std::string& b) {
    wire::varint_field(b, field::track::kSiblingOrderRank, rank);
    wire::varint_field(b, field::track::kParentUuid, as_varint(parent));
    wire::string_field(b, field::track::kName, name);
    wire::varint_field(b, field::track::kSiblingMergeBehavior, kMergeNone);
    if (!description.empty()) wire::string_field(b, field::track::kDescription, description);
  });
}

void Packets::counter_track(std::uint64_t uuid, std::uint64_t parent, std::string_view name, CounterUnit unit) {
  track_packet(uuid, [&](std::string& b) {
    wire::varint_field(b, field::track::kParentUuid, as_varint(parent));
    wire::string_field(b, field::track::kName, name);
    wire::varint_field(b, field::track::kSiblingMergeBehavior, kMergeNone);
    const Nested counter = Nested::begin(b, field::track::kCounter);
    if (unit != CounterUnit::kNone) wire::varint_field(b, field::counter::kUnit, static_cast<std::int64_t>(unit));
    counter.end(b);
  });
}

// --- interning: each entry goes into the InternedData of the first packet that uses it

void Packets::intern(std::uint32_t field, std::uint64_t iid, std::string_view text) {
  const Nested entry = Nested::begin(interned_, field);
  wire::varint_field(interned_, field::interned::kIid, as_varint(iid));
  wire::string_field(interned_, field::interned::kName, text);
  entry.end(interned_);
}

std::uint64_t Packets::intern_text(TextIids& table, std::uint64_t& next, std::uint32_t field, std::string_view text) {
  if (const auto it = table.find(text); it != table.end()) return it->second;
  const std::uint64_t iid = next++;
  table.emplace(std::string(text), iid);
  intern(field, iid, text);
  return iid;
}

std::uint64_t Packets::name_iid(StringId id, std::string_view fallback) {
  if (id == 0) return literal_iid(fallback);
  if (const auto it = names_by_id_.find(id); it != names_by_id_.end()) return it->second;
  const std::string& name = reader_.string(id);
  const std::uint64_t iid = name.empty() ? literal_iid(fallback) : next_name_++;
  if (!name.empty()) intern(field::interned::kEventNames, iid, name);
  names_by_id_.emplace(id, iid);
  return iid;
}

std::uint64_t Packets::literal_iid(std::string_view name) {
  return intern_text(names_, next_name_, field::interned::kEventNames, name);
}

std::uint64_t Packets::category_iid(std::string_view category) {
  return intern_text(categories_, next_category_, field::interned::kCategories, category);
}

std::uint64_t Packets::arg_name_iid(Arg name) {
  std::uint64_t& iid = arg_iids_[static_cast<std::size_t>(name)];
  if (iid == 0) iid = arg_name_iid(kArgNames[static_cast<std::size_t>(name)].second);
  return iid;
}

std::uint64_t Packets::string_value_iid(StringId id) {
  if (const auto it = values_by_id_.find(id); it != values_by_id_.end()) return it->second;
  const std::uint64_t iid =
      intern_text(values_, next_value_, field::interned::kAnnotationStringValues, reader_.string(id));
  values_by_id_.emplace(id, iid);
  return iid;
}

// --- events

void Packets::begin_event(EventType type, std::uint64_t track, std::uint64_t name_iid, std::uint64_t category_iid) {
  event_.clear();
  wire::varint_field(event_, field::event::kType, static_cast<std::int64_t>(type));
  wire::varint_field(event_, field::event::kTrackUuid, as_varint(track));
  if (name_iid != 0) wire::varint_field(event_, field::event::kNameIid, as_varint(name_iid));
  if (category_iid != 0) wire::varint_field(event_, field::event::kCategoryIids, as_varint(category_iid));
}

std::uint64_t Packets::arg_name_iid(std::string_view name) {
  return intern_text(arg_names_, next_arg_name_, field::interned::kAnnotationNames, name);
}

// One DebugAnnotation of the event: its interned name, then the value `write_value` appends.
template <class WriteValue>
void Packets::annotation(std::uint64_t name_iid, WriteValue&& write_value) {
  const Nested a = Nested::begin(event_, field::event::kDebugAnnotations);
  wire::varint_field(event_, field::annotation::kNameIid, as_varint(name_iid));
  write_value(event_);
  a.end(event_);
}

void Packets::arg(Arg name, std::int64_t value) {
  annotation(arg_name_iid(name), [&](std::string& e) { wire::varint_field(e, field::annotation::kIntValue, value); });
}

void Packets::arg_value_iid(std::uint64_t name_iid, std::uint64_t value_iid) {
  annotation(name_iid,
             [&](std::string& e) { wire::varint_field(e, field::annotation::kStringValueIid, as_varint(value_iid)); });
}

void Packets::arg(Arg name, std::string_view value) {
  const std::uint64_t name_iid = arg_name_iid(name);
  arg_value_iid(name_iid, intern_text(values_, next_value_, field::interned::kAnnotationStringValues, value));
}

void Packets::arg_string(Arg name, StringId value) {
  if (value == 0 || reader_.string(value).empty()) return;
  const std::uint64_t name_iid = arg_name_iid(name);
  arg_value_iid(name_iid, string_value_iid(value));
}

void Packets::arg(std::string_view name, double value) {
  annotation(arg_name_iid(name),
             [&](std::string& e) { wire::double_field(e, field::annotation::kDoubleValue, value); });
}

void Packets::arg(std::string_view name, std::string_view value) {
  annotation(arg_name_iid(name),
             [&](std::string& e) { wire::string_field(e, field::annotation::kStringValue, value); });
}

void Packets::flow(std::uint64_t id) { wire::fixed64_field(event_, field::event::kFlowIds, id); }

void Packets::counter_value(std::int64_t value) { wire::varint_field(event_, field::event::kCounterValue, value); }

void Packets::counter_value(double value) { wire::double_field(event_, field::event::kDoubleCounterValue, value); }

// The packet: its time, the sequence (whose interned names it uses), the names it interns first
// (read before its event), the event.
void Packets::emit(std::int64_t ts) {
  std::string& b = out_.buffer();
  const Nested packet = Nested::begin(b, field::kTracePacket);
  wire::varint_field(b, field::packet::kTimestamp, ts);
  wire::varint_field(b, field::packet::kSequenceId, kSequence);
  wire::varint_field(b, field::packet::kSequenceFlags, kNeedsState);
  if (!interned_.empty()) {
    wire::string_field(b, field::packet::kInternedData, interned_);
    interned_.clear();
  }
  wire::string_field(b, field::packet::kTrackEvent, event_);
  packet.end(b);
  ++packets_;
  out_.maybe_flush();
}

}  // namespace npuscope::collector::perfetto

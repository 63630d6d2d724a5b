// Perfetto's TracePackets, appended to an export's output: one packet sequence, interned names,
// track descriptors and track events. What the trace's rows become is export_perfetto.cpp's; this
// file knows the messages and their field numbers (collector/proto/perfetto_trace.proto, Perfetto's
// own: the tests decode what is written here with it). Note [Perfetto trace layout] in
// npuscope/collector/export_perfetto.h.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "export_util.h"
#include "npuscope/collector/trace_reader.h"

namespace npuscope::collector::perfetto {

enum class EventType : std::uint8_t { kSliceBegin = 1, kSliceEnd = 2, kInstant = 3, kCounter = 4 };
enum class CounterUnit : std::uint8_t { kNone = 0, kBytes = 3 };  // CounterDescriptor.Unit

// The argument names every row of a kind carries, interned once and found by index: a task has
// about 20 arguments, and a lookup by text would hash each of them for each of millions of rows.
// Names only some rows have (a hardware metric's, a verdict's) are looked up by text:
// Packets::arg(std::string_view, ...).
enum class Arg : std::uint8_t {
  kOpType,
  kTaskType,
  kBlockDim,
  kFlops,
  kBytes,
  kOverflow,
  kUnderflow,
  kSubnormal,
  kFallback,
  kInputShapes,
  kInputDtypes,
  kInputFormats,
  kOutputShapes,
  kOutputDtypes,
  kOutputFormats,
  kTaskId,
  kStreamId,
  kConnectionId,
  kCallIndex,
  kPytorchOpId,
  kOp,
  kFlushed,
  kCopyKind,
  kLevel,
  kStep,
  kPass,
  kModule,
  kSequenceNumber,
  kId,
  kCommunicator,
  kSequence,
  kAlgorithm,
  kReduceOp,
  kDtype,
  kPeer,
  kLastRank,
  kWaitNs,
  kCount
};

class Packets {
 public:
  // Strings of `reader` (StringIds) are interned by id.
  Packets(const TraceReader& reader, export_util::OutputFile& out) : reader_(reader), out_(out) {}

  // The sequence's first packet: clears its incremental state, orders processes and threads by rank.
  void first_packet();

  // Track descriptors, each one packet (`rank`: sibling_order_rank; every track but a thread's
  // keeps its own name: sibling merge NONE).
  void process_track(std::uint64_t uuid, std::int64_t pid, std::string_view name, std::string_view label,
                     std::int64_t rank);
  void thread_track(std::uint64_t uuid, std::int64_t pid, std::int64_t tid, std::string_view name, std::int64_t rank);
  void child_track(std::uint64_t uuid, std::uint64_t parent, std::string_view name, std::int64_t rank,
                   std::string_view description = {});
  void counter_track(std::uint64_t uuid, std::uint64_t parent, std::string_view name, CounterUnit unit);

  // Interned names: 0 is "none".
  std::uint64_t name_iid(StringId id, std::string_view fallback);  // the string, or `fallback` if it is empty
  std::uint64_t literal_iid(std::string_view name);
  std::uint64_t category_iid(std::string_view category);

  // One event: begin_event(), then its arguments, flows and value, then emit(ts) writes the packet.
  void begin_event(EventType type, std::uint64_t track, std::uint64_t name_iid = 0, std::uint64_t category_iid = 0);
  void arg(Arg name, std::int64_t value);
  void arg(Arg name, std::string_view value);     // the value interned
  void arg_string(Arg name, StringId value);      // left out when the string is empty
  void arg(std::string_view name, double value);  // names interned by text: rarer arguments
  void arg(std::string_view name, std::string_view value);
  void flow(std::uint64_t id);
  void counter_value(std::int64_t value);
  void counter_value(double value);
  void emit(std::int64_t ts);

  std::int64_t packets() const { return packets_; }

 private:
  struct TextHash {  // lookups by string_view without building a std::string
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using TextIids = std::unordered_map<std::string, std::uint64_t, TextHash, std::equal_to<>>;

  template <class Body>
  void track_packet(std::uint64_t uuid, Body&& body);
  std::uint64_t intern_text(TextIids& table, std::uint64_t& next, std::uint32_t field, std::string_view text);
  void intern(std::uint32_t field, std::uint64_t iid, std::string_view text);
  std::uint64_t arg_name_iid(Arg name);
  std::uint64_t arg_name_iid(std::string_view name);
  template <class WriteValue>
  void annotation(std::uint64_t name_iid, WriteValue&& write_value);
  std::uint64_t string_value_iid(StringId id);
  void arg_value_iid(std::uint64_t name_iid, std::uint64_t value_iid);

  const TraceReader& reader_;
  export_util::OutputFile& out_;
  std::int64_t packets_ = 0;
  std::string interned_;  // InternedData of the packet being built
  std::string event_;     // its TrackEvent
  // Each interning table numbers its entries from 1. Event names are by StringId or by text.
  std::unordered_map<StringId, std::uint64_t> names_by_id_, values_by_id_;
  TextIids names_, categories_, arg_names_, values_;
  std::array<std::uint64_t, static_cast<std::size_t>(Arg::kCount)> arg_iids_{};
  std::uint64_t next_name_ = 1, next_category_ = 1, next_arg_name_ = 1, next_value_ = 1;
};

}  // namespace npuscope::collector::perfetto

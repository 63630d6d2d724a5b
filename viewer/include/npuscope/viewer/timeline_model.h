// What the viewer holds of a trace: one compact, time-sorted array per lane row, read once through
// the collector's reader; everything else (a task's shapes, statistics, metrics) is read from the
// trace when the user selects it.
//
// Note [Timeline model]
// A lane is a host thread (its API calls, one row per nesting depth), a device stream (its tasks),
// a device's copies, its memory counter, or the markers of a host thread (one row per depth). A row
// holds items that do not overlap, sorted by start, so the items in view are found by binary search
// and a row's draw cost depends on the pixels, not the items (Note [Level of detail] in lod.h).
// An item is 24 bytes (Tracy's zones take 22): start, a 32-bit duration (ns; us from 4.3 s up), a
// label (STRING_IDS id), the low 32 bits of its id (task or connection id) and flags (overflow,
// compare verdict, copy kind, task type). A task's colour comes from its op type, looked up by its name
// (colour_key()), not stored. A trace with an API call per task thus takes 48 bytes per task, the
// viewer's budget. Nothing is indexed by task id (that would double it): a selection from a panel
// finds its item by a scan, ~10 ms for 10M tasks, once per click. The two big tables load at once:
// TASK on the constructing thread through a connection of its own, API (and MARKER) on a second
// thread through the given reader; 10M tasks with an API call each load in ~3.8 s instead of ~5.8.
// The custom kernels' blocks and findings are read on the second thread too; their instructions
// only when a kernel is selected (Note [Pipe lanes] in pipe_lanes.h).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "npuscope/collector/trace_reader.h"
#include "npuscope/viewer/kernel_index.h"

namespace npuscope::viewer {

// kPipe: a custom kernel's pipe, shown under its task while it is selected (Note [Pipe lanes] in
// pipe_lanes.h); never among the model's lanes.
enum class LaneKind : std::uint8_t { kHostThread, kStream, kMemcpy, kMemory, kMarkers, kPytorch, kPipe };

// Item flags.
inline constexpr std::uint32_t kOverflow = 1u << 0;       // TASK.overflow
inline constexpr std::uint32_t kVerdictPass = 1u << 1;    // COMPARE_RESULT of an output: pass
inline constexpr std::uint32_t kVerdictFail = 1u << 2;    // ... fail
inline constexpr std::uint32_t kIntroduced = 1u << 3;     // ... the op introduced the error
inline constexpr std::uint32_t kStep = 1u << 4;           // a step marker (MARKER.kind = 1)
inline constexpr std::uint32_t kMicros = 1u << 5;         // `duration` counts microseconds
inline constexpr std::uint32_t kKernel = 1u << 6;         // a custom kernel's task: it has KERNEL_BLOCK rows
inline constexpr std::uint32_t kKernelFinding = 1u << 7;  // ... and KERNEL_FINDING rows (sanitizer findings)
inline constexpr int kCopyKindShift = 8;                  // copies: MEMCPY.copy_kind in bits 8-15
inline constexpr int kTaskTypeShift = 8;                  // tasks: TASK.task_type in bits 8-15
inline constexpr int kHostOpKindShift = 8;                // PyTorch ops: PYTORCH_API.kind in bits 8-15
inline constexpr int kPassShift = 16;                     // ... and PYTORCH_API.pass in bits 16-23
inline constexpr std::uint32_t kUnderflow = 1u << 24;     // tasks: TASK.underflow > 0

struct TimelineItem {
  std::int64_t start_ns = 0;
  std::uint32_t duration = 0;  // ns, or us with kMicros (4.3 s and longer; cut at 71 minutes)
  std::int32_t label_id = 0;   // STRING_IDS id: op instance name, API name, marker name
  std::uint32_t id = 0;        // low 32 bits of TASK.task_id (tasks, copies), connection_id (calls),
                               // PYTORCH_API.id (PyTorch ops); a step
  std::uint32_t flags = 0;

  static TimelineItem make(std::int64_t start_ns, std::int64_t end_ns, std::int64_t label_id, std::int64_t id,
                           std::uint32_t flags);
  std::int64_t end_ns() const { return start_ns + static_cast<std::int64_t>(duration) * (flags & kMicros ? 1000 : 1); }
  bool has_id(std::int64_t full_id) const { return id == static_cast<std::uint32_t>(full_id); }
  // A task's TASK.task_type (items of stream lanes only).
  std::int32_t task_type() const { return static_cast<std::int32_t>((flags >> kTaskTypeShift) & 0xff); }
  // A PyTorch op's PYTORCH_API.kind and pass (items of PyTorch lanes only).
  std::int32_t host_op_kind() const { return static_cast<std::int32_t>((flags >> kHostOpKindShift) & 0xff); }
  std::int32_t pass() const { return static_cast<std::int32_t>((flags >> kPassShift) & 0xff); }
};
static_assert(sizeof(TimelineItem) == 24);

// One sample of a memory counter lane.
struct CounterSample {
  std::int64_t ts_ns = 0;
  std::int64_t allocated = 0, reserved = 0;
};

struct Lane {
  LaneKind kind = LaneKind::kStream;
  // "npu:0 stream 1", "thread 3", "npu:0 copies", "npu:0 memory", "thread 3 markers", "thread 0 PyTorch"
  std::string title;
  std::int32_t device_id = 0, stream_id = 0, thread_id = 0;
  std::vector<std::vector<TimelineItem>> rows;  // by nesting depth; one row for streams and copies
  std::vector<CounterSample> samples;           // kMemory only, in time order
  std::int64_t peak_reserved = 0;               // kMemory: the counter's scale
};

// Appends `item` to the first row of `lane` free at its start (items arriving in start order): the
// nesting depth for nested ranges; ranges that overlap without nesting never share a row.
void add_without_overlap(Lane& lane, const TimelineItem& item);

class TimelineModel {
 public:
  // Reads every lane of `trace`. Throws collector::TraceError (unreadable trace).
  explicit TimelineModel(const collector::TraceReader& trace);

  const collector::TraceReader& trace() const { return trace_; }
  const std::vector<Lane>& lanes() const { return lanes_; }
  const std::string& str(std::int64_t id) const { return trace_.string(id); }
  // What colours an item: the op type id of a task (by its name), the copy kind of a copy, the
  // name of anything else.
  std::int32_t colour_key(const Lane& lane, const TimelineItem& item) const;
  std::int64_t first_ns() const { return first_ns_; }
  std::int64_t last_ns() const { return last_ns_; }
  std::int64_t tasks() const { return tasks_; }
  bool has_compare_results() const { return has_compare_; }
  // The custom kernels' blocks and findings (their tasks are flagged kKernel, kKernelFinding).
  const KernelIndex& kernels() const { return kernels_; }
  // Bytes held by the lanes and the kernels' blocks (capacity, not size: what the process pays; a
  // row in huge pages pays for the pages its items touched, not its untouched growth slack).
  std::size_t memory_bytes() const;

  // The lane and row of a task, and its index there; false if the task is not in a stream lane.
  struct Location {
    std::size_t lane = 0, row = 0, index = 0;
  };
  bool find_task(std::int64_t task_id, Location& where) const;
  // The API call (lane, row, index) that launched the task with this connection id, if recorded.
  bool find_launch(std::int64_t connection_id, Location& where) const;

 private:
  void load_tasks();
  std::vector<Lane> load_apis() const;  // on a second thread: touches no member but trace_
  void load_copies_and_memory();
  std::vector<Lane> load_markers() const;
  std::vector<Lane> load_pytorch() const;  // on the second thread too
  void load_compare_results();
  void flag_kernels();
  void finish();

  const collector::TraceReader& trace_;
  std::vector<Lane> lanes_;
  std::vector<std::int32_t> type_of_name_;  // by op name id: its op type id
  std::int64_t first_ns_ = 0, last_ns_ = 0, tasks_ = 0;
  bool has_compare_ = false;
  KernelIndex kernels_;  // read on the second thread
};

}  // namespace npuscope::viewer

// Device tasks of a Kineto trace on their way to the trace: joined with their runtime call by
// correlation, and put back in start order (Note [Kineto import] in kineto_import.h).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <queue>
#include <unordered_map>
#include <vector>

#include "npuscope/collector/trace_rows.h"

namespace npuscope::importer::kineto {

// The runtime call that launched a task.
struct Launch {
  std::int64_t ts_ns = 0;
  std::int32_t thread_id = 0;
  std::int64_t external_id = -1;  // its host op's External id; -1 none
};

struct PendingTask {
  collector::TaskRow row;         // task_id, times, device, stream, name, type, connection_id, block_dim
  std::int64_t external_id = -1;  // the task's own External id; -1 none
  std::optional<Launch> launch;
  std::int32_t comm = -1;  // its own collective's CommInfo (an NCCL kernel's args); -1 none
  std::int64_t bytes = 0;  // copies and memsets
  std::int32_t copy_kind = 0;
  collector::StringId own_type = 0;                 // its op type when no host op launched it (from its name)
  std::optional<CollectiveKind> kernel_collective;  // what an NCCL kernel's name says
  ReduceOp reduce = ReduceOp::kNone;
};

class DeviceTaskQueue {
 public:
  static constexpr std::size_t kWindow = 16384;    // tasks held for start order
  static constexpr std::size_t kLaunches = 65536;  // runtime calls held for a task to come

  // A runtime call with a correlation: given to its waiting task, or kept for the task to come
  // (the oldest of kLaunches kept are let go: calls that launch nothing, cudaStreamIsCapturing...).
  void launch(std::int64_t correlation, const Launch& l);
  // A task; `emit` is called with each task that leaves the window, in start order.
  template <class Emit>
  void push(PendingTask&& t, Emit&& emit) {
    take(std::move(t));
    if (size() > kWindow) emit(pop());
  }
  template <class Emit>
  void drain(Emit&& emit) {
    while (size() > 0) emit(pop());
  }
  std::size_t size() const { return heap_.size(); }

 private:
  struct Order {
    std::int64_t start_ns;
    std::uint64_t seq;
    std::uint32_t slot;
    bool operator>(const Order& o) const { return start_ns != o.start_ns ? start_ns > o.start_ns : seq > o.seq; }
  };
  std::uint32_t take(PendingTask&& t);
  PendingTask pop();

  std::vector<PendingTask> slots_;
  std::vector<std::uint32_t> free_;
  std::priority_queue<Order, std::vector<Order>, std::greater<>> heap_;
  std::uint64_t seq_ = 0;
  std::unordered_map<std::int64_t, std::uint32_t> waiting_;  // correlation -> slot of a task without its call
  std::unordered_map<std::int64_t, Launch> launches_;        // correlation -> a call without its task yet
  std::deque<std::int64_t> launch_order_;
};

}  // namespace npuscope::importer::kineto

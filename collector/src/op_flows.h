// The flows of the Perfetto export from each PyTorch op to the tasks it launched.
//
// Note [Flows from PyTorch ops]
// Perfetto joins the events that carry one flow id in time order, each to the next, so an op that
// launched n tasks needs n ids to point at each of them (one id would chain op -> task 1 -> task 2).
// The k-th task of op P (in the order the export writes tasks) carries 2^63 | P << 20 | k, which no
// connection id (positive, below 2^63: the launch flows' ids) can be; the op, written after its
// tasks, carries the ids of all n. What that takes is a count per op: 4 bytes per op id below 2^24
// (ops are numbered 1, 2, ... per process), a hash entry for any other. An op id of 2^43 or more, or
// a task past an op's 2^20th, gets no flow, and is counted.
#pragma once

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace npuscope::collector::export_util {

class OpFlows {
 public:
  // The flow id of op `op`'s next task; 0 if it cannot have one.
  std::uint64_t next_task(std::int64_t op) {
    if (op <= 0 || op >= kMaxOp) return 0;
    std::uint32_t& n = count_of(op);
    if (n >= kMaxTasks) return 0;
    return id(op, n++);
  }
  // How many tasks op `op` launched (next_task() calls that returned an id).
  std::uint32_t tasks(std::int64_t op) const {
    if (op <= 0 || op >= kMaxOp) return 0;
    if (op < kDenseLimit) return static_cast<std::size_t>(op) < dense_.size() ? dense_[op] : 0;
    const auto it = sparse_.find(op);
    return it == sparse_.end() ? 0 : it->second;
  }
  static std::uint64_t id(std::int64_t op, std::uint32_t k) {
    return (std::uint64_t{1} << 63) | (static_cast<std::uint64_t>(op) << kTaskBits) | k;
  }

 private:
  static constexpr int kTaskBits = 20;
  static constexpr std::uint32_t kMaxTasks = std::uint32_t{1} << kTaskBits;
  static constexpr std::int64_t kMaxOp = std::int64_t{1} << (63 - kTaskBits);
  static constexpr std::int64_t kDenseLimit = std::int64_t{1} << 24;  // at most 64 MiB of counts

  std::uint32_t& count_of(std::int64_t op) {
    if (op >= kDenseLimit) return sparse_[op];
    const auto at = static_cast<std::size_t>(op);
    if (at >= dense_.size()) dense_.resize(std::max(at + 1, dense_.size() * 2));
    return dense_[at];
  }

  std::vector<std::uint32_t> dense_;
  std::unordered_map<std::int64_t, std::uint32_t> sparse_;
};

}  // namespace npuscope::collector::export_util

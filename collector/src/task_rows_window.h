// The rows a table ordered by task_id holds for one task (TASK_PMU, COMPARE_RESULT), asked for
// task after task while the tasks stream in start order.
//
// Note [Task rows by window]
// One query per task would prepare a statement for each (about 20 µs: seconds for a real profile's
// 100k tasks); reading the whole table first would hold it all (a 1M-task profile with 40 metrics a
// task is 40M rows). Task ids mostly grow with start time (an emulated trace numbers tasks as they
// are launched, an import as it reads them), a few thousand back at most where streams interleave
// (the real A100 Kineto trace: 800). So the rows of a window of task ids are read at once, the
// window placed a quarter behind the task asked for: a trace whose ids follow start time reads each
// row once, and memory holds one window (kSpan tasks' rows).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "npuscope/collector/trace_reader.h"

namespace npuscope::collector {

template <class Row>
class TaskRowsWindow {
 public:
  static constexpr std::int64_t kSpan = 16384;

  // Reads nothing if the table is empty.
  TaskRowsWindow(const TraceReader& reader, const std::string& table)
      : reader_(reader), empty_(reader.count(table) == 0) {}

  bool empty() const { return empty_; }

  std::span<const Row> rows_of(std::int64_t task_id) {
    if (empty_) return {};
    if (task_id < from_ || task_id >= to_) load(task_id);
    const auto by_task = [](const Row& r, std::int64_t id) { return r.task_id < id; };
    const auto first = std::lower_bound(rows_.begin(), rows_.end(), task_id, by_task);
    auto last = first;
    while (last != rows_.end() && last->task_id == task_id) ++last;
    return {first, last};
  }

  std::int64_t loads() const { return loads_; }

 private:
  void load(std::int64_t task_id) {
    constexpr std::int64_t kBehind = kSpan / 4, kAhead = kSpan - kSpan / 4;
    from_ = task_id >= INT64_MIN + kBehind ? task_id - kBehind : INT64_MIN;
    to_ = task_id <= INT64_MAX - kAhead ? task_id + kAhead : INT64_MAX;
    rows_.clear();
    reader_.for_each<Row>([&](Row& r) { rows_.push_back(std::move(r)); }, {.task_ids = std::pair{from_, to_}});
    ++loads_;
  }

  const TraceReader& reader_;
  bool empty_;
  std::vector<Row> rows_;  // in task_id order (the table's)
  std::int64_t from_ = 0, to_ = 0, loads_ = 0;
};

}  // namespace npuscope::collector

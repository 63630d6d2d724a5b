// msprof's op_statistic, defined once: per device, op type and core type, the count and the total,
// average, min and max duration of the kernels, and their share of the device's kernel time.
// `npuscope export --csv` (op_statistic.csv), `npuscope analyze` (op_statistics) and the viewer's
// op statistics panel all render these rows; none of them counts on its own.
//
// Note [What op_statistic counts]
// - Which tasks: kernels (AI_CORE, AI_VECTOR_CORE, AI_CPU) on an NPU device (device_id >= 0).
//   Copies, event records and waits, host work and the cpu golden backend's tasks are not ops of
//   the device: msprof leaves them out of op_statistic too.
// - Duration: end - start, never negative.
// - Rows: one per (device, op type, core type); ratio = the row's total / its device's kernel time,
//   in %, as msprof computes it per device.
// - Order: by device, then most total time first, then op type and core type (a stable order for
//   equal totals).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "npuscope/collector/time_math.h"
#include "npuscope/collector/trace_reader.h"
#include "npuscope/collector/trace_rows.h"

namespace npuscope::collector {

struct OpStatisticRow {
  std::int32_t device_id = 0;
  std::string op_type;
  TaskType task_type = TaskType::kAiCore;  // msprof's "Core Type"
  std::int64_t count = 0, total_ns = 0, min_ns = 0, max_ns = 0;
  double avg_ns = 0, ratio_pct = 0;  // ratio: share of the device's kernel time
};

// See Note [What op_statistic counts].
inline bool counts_in_op_statistic(std::int32_t device_id, std::int32_t task_type) {
  return device_id >= 0 && is_device_kernel(task_type);
}
inline std::int64_t op_statistic_duration(std::int64_t start_ns, std::int64_t end_ns) {
  return duration_saturated(start_ns, end_ns);  // Note [Timestamp range]
}

// Takes tasks one at a time, in any order; yields the rows. Op types are STRING_IDS ids (the
// reader's, or the 32-bit compact ones of the analyzer and the viewer: the same numbers).
class OpStatisticAccumulator {
 public:
  // Tasks the rule does not count are ignored. Runs of one key (common) cost no map lookup.
  void add(std::int32_t device_id, StringId op_type_id, std::int32_t task_type, std::int64_t start_ns,
           std::int64_t end_ns);
  void add(const TaskRow& t) { add(t.device_id, t.op_type_id, t.task_type, t.start_ns, t.end_ns); }
  // The rows, op types named through `strings`, in the order of the Note.
  std::vector<OpStatisticRow> rows(const TraceReader& strings) const;

 private:
  struct Durations {
    std::int64_t count = 0, total = 0, min = 0, max = 0;
  };
  using Key = std::tuple<std::int32_t, StringId, std::int32_t>;  // device, op type, task type
  std::map<Key, Durations> groups_;
  Key last_key_{-1, 0, -1};
  Durations* last_ = nullptr;
};

// Reads TASK once. Throws TraceError for an unreadable trace.
std::vector<OpStatisticRow> op_statistic(const TraceReader& reader);

}  // namespace npuscope::collector

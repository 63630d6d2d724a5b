// Note [Step time] (npuscope/analyzer/step_time.h) as a builder that takes the tasks one at a time:
// `npuscope analyze` feeds it the kernels it holds, step_times() and the cluster analysis the rows
// they stream.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "interval_union.h"
#include "npuscope/analyzer/step_time.h"
#include "npuscope/collector/trace_rows.h"

namespace npuscope::analyzer {

class StepTimeBuilder {
 public:
  // `markers`: every MARKER row (those of kind step are the steps; a step number marked twice, by
  // two threads, is its first marker). `first_framework_op_ns`: the first PYTORCH_API start (the
  // whole trace's Preparing), none without framework ops.
  StepTimeBuilder(const std::vector<collector::MarkerRow>& markers, const StepTimeOptions& options,
                  std::optional<std::int64_t> first_framework_op_ns);

  // A device kernel (is_device_kernel), best in start order.
  void add_kernel(std::int32_t device_id, std::int64_t launch_ns, std::int64_t start_ns, std::int64_t end_ns);
  // A communication op (TASK type HCCL), in any order; `receive`: a pipeline's receive (hcom_receive*).
  void add_collective(std::int32_t device_id, std::int64_t start_ns, std::int64_t end_ns, bool receive);
  // Says every collective was added: the kernels of a device without any then keep only their
  // totals, not a span each (which a 10M-task trace would hold in 160 MB). add_kernel must then
  // come in start order per device, and add_collective not again.
  void collectives_complete() { collectives_complete_ = true; }
  // Whether an op name is a receive op (Bubble): msprof's hcom_receive*.
  static bool is_receive(std::string_view op_name) { return op_name.starts_with("hcom_receive"); }

  std::vector<StepTime> finish() const;

 private:
  struct Step {
    std::optional<std::int64_t> number;
    std::int64_t host_start = 0, host_end = 0;
  };
  struct Kernels {  // one device's kernels in one step
    std::int64_t count = 0;
    IntervalUnion spans;
  };
  struct Collective {
    std::int64_t start = 0, end = 0;
    bool receive = false;
  };
  struct Device {
    std::vector<Kernels> steps;  // by step index
    std::vector<Collective> collectives;
  };
  Device& device(std::int32_t id);
  // `collectives`: d's, sorted by start.
  StepTime step_of(const Device& d, const std::vector<Collective>& collectives, std::int32_t device_id,
                   std::size_t step, std::vector<bool>& taken) const;

  bool by_device_;
  std::optional<std::int64_t> first_framework_op_ns_;
  std::vector<Step> steps_;  // in host order; one without markers (the whole trace)
  bool whole_trace_ = false;
  bool collectives_complete_ = false;
  std::map<std::int32_t, Device> devices_;  // few
  std::int32_t last_device_id_ = 0;
  Device* last_device_ = nullptr;
};

}  // namespace npuscope::analyzer

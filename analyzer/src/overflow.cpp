// Overflows in execution order, the first one, and the NaN/Inf origin.
//
// Note [NaN/Inf origin]
// msprobe's rule: the origin is the first compute op whose inputs are finite and whose outputs are
// not. With a stats dump (TENSOR rows) we apply it as written, in execution (start time) order.
// Without one, or when no task matches (in saturation mode outputs are clamped to finite values and
// only the hardware flag tells), the origin is the first task with the overflow flag.
#include <algorithm>
#include <map>

#include "analyses.h"

namespace npuscope::analyzer {
namespace {

constexpr std::size_t kMaxItems = 1000;

OverflowTask overflow_task(const TraceData& data, const Task& t) {
  return {t.task_id, data.str(t.name_id), data.str(t.op_type_id), t.device_id, t.start_ns};
}

struct TensorFlags {
  bool dumped = false, input_nonfinite = false, output_nonfinite = false;
  std::string detail;
};

std::optional<NanInfOrigin> origin_from_stats(const TraceData& data) {
  std::map<std::int64_t, TensorFlags> by_task;
  data.reader.for_each_tensor(false, [&](const collector::TensorRow& r) {
    TensorFlags& f = by_task[r.task_id];
    f.dumped = true;
    const bool nonfinite = r.nan_count > 0 || r.inf_count > 0;
    if (is(r.role, TensorRole::kInput)) f.input_nonfinite |= nonfinite;
    if (is(r.role, TensorRole::kOutput) && nonfinite) {
      f.output_nonfinite = true;
      if (f.detail.empty()) {
        f.detail = "output " + std::to_string(r.idx) + ": " + std::to_string(r.nan_count) + " NaN, " +
                   std::to_string(r.inf_count) + " Inf of " + std::to_string(r.numel);
      }
    }
  });
  if (by_task.empty()) return std::nullopt;
  for (const Task& t : data.kernels) {  // execution order
    const auto it = by_task.find(t.task_id);
    if (it == by_task.end() || it->second.input_nonfinite || !it->second.output_nonfinite) continue;
    return NanInfOrigin{overflow_task(data, t), "stats", it->second.detail + " (inputs finite)"};
  }
  return std::nullopt;
}

}  // namespace

OverflowReport overflows(const TraceData& data) {
  OverflowReport r;
  for (const Task& t : data.kernels) {
    if (!t.overflow) continue;
    ++r.count;
    if (r.items.size() < kMaxItems) r.items.push_back(overflow_task(data, t));
  }
  if (!r.items.empty()) {
    r.first = r.items.front();
    if (const DeviceInfoRow* d = data.device(r.first->device_id)) r.overflow_mode = d->overflow_mode;
  }
  r.origin = origin_from_stats(data);
  if (!r.origin && r.first) r.origin = NanInfOrigin{*r.first, "overflow_flag", "the first task that raised the overflow flag"};
  return r;
}

}  // namespace npuscope::analyzer

// Note [Step time] (npuscope/analyzer/step_time.h): the builder, and step_times() over a trace.
#include "npuscope/analyzer/step_time.h"

#include <algorithm>
#include <limits>

#include "launch_times.h"
#include "step_time_builder.h"

namespace npuscope::analyzer {
namespace {

constexpr std::int64_t kNoEnd = std::numeric_limits<std::int64_t>::max();

}  // namespace

StepTimeBuilder::StepTimeBuilder(const std::vector<collector::MarkerRow>& markers, const StepTimeOptions& options,
                                 std::optional<std::int64_t> first_framework_op_ns)
    : by_device_(options.by_device), first_framework_op_ns_(first_framework_op_ns) {
  for (const collector::MarkerRow& m : markers) {
    if (!is(m.kind, MarkerKind::kStep)) continue;
    const bool seen = std::any_of(steps_.begin(), steps_.end(), [&](const Step& s) { return s.number == m.step; });
    if (!seen) steps_.push_back({m.step, m.start_ns, std::max(m.start_ns, m.end_ns)});
  }
  std::stable_sort(steps_.begin(), steps_.end(),
                   [](const Step& a, const Step& b) { return a.host_start < b.host_start; });
  whole_trace_ = steps_.empty();
  if (whole_trace_) steps_.push_back({std::nullopt, std::numeric_limits<std::int64_t>::min(), kNoEnd});
}

StepTimeBuilder::Device& StepTimeBuilder::device(std::int32_t id) {
  if (!by_device_) id = -1;
  if (last_device_ == nullptr || id != last_device_id_) {
    last_device_ = &devices_[id];
    last_device_id_ = id;
    if (last_device_->steps.empty()) {
      last_device_->steps.resize(steps_.size());
      if (collectives_complete_ && last_device_->collectives.empty()) {
        for (Kernels& k : last_device_->steps) k.spans = IntervalUnion(IntervalUnion::kTotalsOnly);
      }
    }
  }
  return *last_device_;
}

void StepTimeBuilder::add_kernel(std::int32_t device_id, std::int64_t launch_ns, std::int64_t start_ns,
                                 std::int64_t end_ns) {
  Device& d = device(device_id);
  std::size_t step = 0;
  if (!whole_trace_) {
    const auto after = std::upper_bound(steps_.begin(), steps_.end(), launch_ns,
                                        [](std::int64_t t, const Step& s) { return t < s.host_start; });
    if (after == steps_.begin() || launch_ns > std::prev(after)->host_end) return;  // launched between steps
    step = static_cast<std::size_t>(std::prev(after) - steps_.begin());
  }
  Kernels& k = d.steps[step];
  ++k.count;
  k.spans.add(start_ns, std::max(start_ns, end_ns));
}

void StepTimeBuilder::add_collective(std::int32_t device_id, std::int64_t start_ns, std::int64_t end_ns, bool receive) {
  device(device_id).collectives.push_back({start_ns, std::max(start_ns, end_ns), receive});
}

StepTime StepTimeBuilder::step_of(const Device& d, const std::vector<Collective>& collectives, std::int32_t device_id,
                                  std::size_t index, std::vector<bool>& taken) const {
  const Step& step = steps_[index];
  const Kernels& k = d.steps[index];
  StepTime t;
  t.device_id = device_id;
  t.step = step.number;
  t.kernels = k.count;
  // The window: from the first kernel (the host's start without one) to the later of the last
  // kernel's end and the host's end; the whole trace without steps.
  const std::int64_t start = whole_trace_ || k.spans.empty() ? step.host_start : k.spans.first();
  const std::int64_t end = std::max(k.spans.empty() ? step.host_end : k.spans.last(), step.host_end);
  IntervalUnion communication, receive;
  const auto first = std::lower_bound(collectives.begin(), collectives.end(), start,
                                      [](const Collective& c, std::int64_t at) { return c.start < at; });
  for (auto c = first; c != collectives.end() && c->start < end; ++c) {
    const auto at = static_cast<std::size_t>(c - collectives.begin());
    if (taken[at]) continue;  // counted in an earlier step's window
    taken[at] = true;
    ++t.collectives;
    communication.add(c->start, c->end);
    if (c->receive) receive.add(c->start, c->end);
  }
  t.computing_ns = k.spans.total();
  t.communication_ns = communication.total();
  t.overlapped_ns = intersection_ns(k.spans, communication);
  t.bubble_ns = receive.total();
  const bool busy = !k.spans.empty() || !communication.empty();
  std::int64_t first_busy = 0, last_busy = 0;
  if (busy) {
    first_busy = k.spans.empty()         ? communication.first()
                 : communication.empty() ? k.spans.first()
                                         : std::min(k.spans.first(), communication.first());
    last_busy = std::max(k.spans.empty() ? communication.last() : k.spans.last(),
                         communication.empty() ? k.spans.last() : communication.last());
    const std::int64_t span = last_busy - first_busy;
    t.free_ns = span - (t.computing_ns + t.communication_ns - t.overlapped_ns);
    t.stage_ns = span - t.bubble_ns;
    if (!whole_trace_) {
      t.preparing_ns = first_busy - step.host_start;
    } else if (first_framework_op_ns_) {
      t.preparing_ns = first_busy - *first_framework_op_ns_;
    }
  }
  if (whole_trace_) {  // the trace's own range: what ran
    t.host_start_ns = t.start_ns = first_busy;
    t.host_end_ns = t.end_ns = last_busy;
  } else {
    t.host_start_ns = step.host_start;
    t.host_end_ns = step.host_end;
    t.start_ns = start;
    t.end_ns = end;
  }
  return t;
}

std::vector<StepTime> StepTimeBuilder::finish() const {
  std::vector<StepTime> out;
  for (const auto& [id, d] : devices_) {
    // The collectives sorted: a copy of them alone (a device's kernel spans can be 160 MB).
    std::vector<Collective> collectives = d.collectives;
    std::stable_sort(collectives.begin(), collectives.end(),
                     [](const Collective& a, const Collective& b) { return a.start < b.start; });
    std::vector<bool> taken(collectives.size(), false);
    for (std::size_t s = 0; s < steps_.size(); ++s) out.push_back(step_of(d, collectives, id, s, taken));
  }
  return out;
}

std::vector<StepTime> step_times(const collector::TraceReader& trace, const StepTimeOptions& options) {
  const LaunchTimes launch(trace);
  std::optional<std::int64_t> first_op;
  if (const auto op = trace.first<collector::PytorchApiRow>({})) first_op = op->start_ns;
  StepTimeBuilder builder(trace.rows<collector::MarkerRow>(), options, first_op);
  trace.for_each([&](const collector::TaskRow& t) {
    if (t.device_id < 0) return;  // the cpu golden backend
    if (is_device_kernel(t.task_type)) {
      builder.add_kernel(t.device_id, launch.of(t), t.start_ns, t.end_ns);
    } else if (is(t.task_type, TaskType::kCommunication)) {
      builder.add_collective(t.device_id, t.start_ns, t.end_ns, StepTimeBuilder::is_receive(trace.string(t.name_id)));
    }
  });
  return builder.finish();
}

}  // namespace npuscope::analyzer

// See kineto_device_tasks.h.
#include "kineto_device_tasks.h"

namespace npuscope::importer::kineto {

void DeviceTaskQueue::launch(std::int64_t correlation, const Launch& l) {
  // Every task waiting for it (an accelerator's one copy call can be several DMA requests), and
  // the tasks of it still to come.
  const auto [first, last] = waiting_.equal_range(correlation);
  for (auto w = first; w != last; ++w) slots_[w->second].launch = l;
  waiting_.erase(first, last);
  launches_[slot_of(correlation)] = {correlation, l};
}

std::uint32_t DeviceTaskQueue::take(PendingTask&& t) {
  const std::int64_t correlation = t.row.connection_id;
  if (correlation != 0) {
    if (const KeptLaunch& l = launches_[slot_of(correlation)]; l.correlation == correlation) t.launch = l.launch;
  }
  std::uint32_t slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
    slots_[slot] = std::move(t);
  } else {
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.push_back(std::move(t));
  }
  const PendingTask& p = slots_[slot];
  if (correlation != 0 && !p.launch) waiting_.emplace(correlation, slot);
  heap_.push({p.row.start_ns, seq_++, slot});
  return slot;
}

PendingTask DeviceTaskQueue::pop() {
  const Order o = heap_.top();
  heap_.pop();
  PendingTask t = std::move(slots_[o.slot]);
  free_.push_back(o.slot);
  if (t.row.connection_id != 0 && !t.launch) {
    const auto [first, last] = waiting_.equal_range(t.row.connection_id);
    for (auto w = first; w != last; ++w) {
      if (w->second == o.slot) {
        waiting_.erase(w);
        break;
      }
    }
  }
  return t;
}

}  // namespace npuscope::importer::kineto

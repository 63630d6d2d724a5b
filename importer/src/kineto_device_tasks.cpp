// See kineto_device_tasks.h.
#include "kineto_device_tasks.h"

namespace npuscope::importer::kineto {

void DeviceTaskQueue::launch(std::int64_t correlation, const Launch& l) {
  if (const auto w = waiting_.find(correlation); w != waiting_.end()) {
    slots_[w->second].launch = l;
    waiting_.erase(w);
    return;
  }
  if (launches_.insert_or_assign(correlation, l).second) launch_order_.push_back(correlation);
  while (launch_order_.size() > kLaunches) {
    launches_.erase(launch_order_.front());
    launch_order_.pop_front();
  }
}

std::uint32_t DeviceTaskQueue::take(PendingTask&& t) {
  const std::int64_t correlation = t.row.connection_id;
  if (correlation != 0) {
    if (const auto l = launches_.find(correlation); l != launches_.end()) {
      t.launch = l->second;
      launches_.erase(l);  // its launch_order_ entry goes when it comes round (erasing an absent key)
    }
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
  if (correlation != 0 && !p.launch) waiting_[correlation] = slot;
  heap_.push({p.row.start_ns, seq_++, slot});
  return slot;
}

PendingTask DeviceTaskQueue::pop() {
  const Order o = heap_.top();
  heap_.pop();
  PendingTask t = std::move(slots_[o.slot]);
  free_.push_back(o.slot);
  if (t.row.connection_id != 0 && !t.launch) {
    const auto w = waiting_.find(t.row.connection_id);
    if (w != waiting_.end() && w->second == o.slot) waiting_.erase(w);
  }
  return t;
}

}  // namespace npuscope::importer::kineto

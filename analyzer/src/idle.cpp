// Device idle time split as Holistic Trace Analysis does it, over each device's span.
//
// Note [Idle gaps]
// The gaps are the holes in the union of a device's kernel intervals (nsys' "GPU gaps": the k-th
// end to the (k+1)-th start in time order). Each gap is charged by the task that ends it:
//   host_wait  it was launched (TASK.queued_ns) after the gap began: the device had nothing queued
//              and waited for the host to launch;
//   sync_wait  the same, but the launching thread spent the gap's start blocked in a synchronizing
//              call (aclrtSynchronize*, a blocking aclrtMemcpy): the host waited for the device,
//              then the device for the host;
//   other      it was already queued: launch latency, cross-stream event waits, copies.
#include <algorithm>
#include <map>

#include "analyses.h"

namespace npuscope::analyzer {
namespace {

bool synchronizes(const std::string& api) {
  return api.starts_with("aclrtSynchronize") || api == "aclrtMemcpy";
}

// API calls per host thread, in start order.
using ApisByThread = std::map<std::int32_t, std::vector<const ApiRow*>>;

// What `thread` did during [a, b): the API calls overlapping it, longest overlap first.
std::string host_activity(const TraceData& data, const ApisByThread& apis, std::int32_t thread, std::int64_t a,
                          std::int64_t b) {
  const auto it = apis.find(thread);
  std::map<std::string, std::int64_t> overlap;
  if (it != apis.end()) {
    const auto& calls = it->second;
    // Calls are sorted by start; nesting is shallow, so look back a little from the first start >= b.
    auto hi = std::lower_bound(calls.begin(), calls.end(), b, [](const ApiRow* r, std::int64_t t) { return r->start_ns < t; });
    for (auto c = hi; c != calls.begin();) {
      --c;
      const std::int64_t o = std::min(b, (*c)->end_ns) - std::max(a, (*c)->start_ns);
      if (o > 0) overlap[data.str((*c)->name_id)] += o;
      if ((*c)->end_ns < a && hi - c > 64) break;
    }
  }
  if (overlap.empty()) return "host code outside the runtime API";
  std::vector<std::pair<std::int64_t, std::string>> order;
  for (const auto& [name, ns] : overlap) order.emplace_back(-ns, name);
  std::sort(order.begin(), order.end());
  std::string out;
  for (std::size_t i = 0; i < std::min<std::size_t>(order.size(), 3); ++i) {
    out += (i ? ", " : "") + order[i].second + " " + std::to_string(-order[i].first / 1000) + " us";
  }
  return out;
}

// True if `thread` was inside a synchronizing call at time t.
bool syncing_at(const TraceData& data, const ApisByThread& apis, std::int32_t thread, std::int64_t t) {
  const auto it = apis.find(thread);
  if (it == apis.end()) return false;
  const auto& calls = it->second;
  auto hi = std::upper_bound(calls.begin(), calls.end(), t, [](std::int64_t v, const ApiRow* r) { return v < r->start_ns; });
  for (int looked = 0; hi != calls.begin() && looked < 64; ++looked) {
    --hi;
    if ((*hi)->start_ns <= t && (*hi)->end_ns >= t && synchronizes(data.str((*hi)->name_id))) return true;
  }
  return false;
}

}  // namespace

const char* gap_kind_name(GapKind k) {
  switch (k) {
    case GapKind::kHostWait: return "host_wait";
    case GapKind::kSyncWait: return "sync_wait";
    case GapKind::kOther: return "other";
  }
  return "?";
}

IdleReport idle_time(const TraceData& data, int top) {
  ApisByThread apis;
  for (const ApiRow& a : data.apis) apis[a.thread_id].push_back(&a);
  std::map<std::int32_t, std::vector<const TaskRow*>> by_device;
  for (const TaskRow& t : data.kernels) by_device[t.device_id].push_back(&t);

  IdleReport report;
  std::vector<Gap> gaps;
  for (const auto& [device, tasks] : by_device) {
    DeviceIdle idle;
    idle.device_id = device;
    std::int64_t busy_end = tasks.front()->start_ns;
    for (const TaskRow* t : tasks) {
      if (t->start_ns > busy_end) {  // a gap [busy_end, start), ended by t
        Gap g{device, t->thread_id, busy_end, t->start_ns, GapKind::kOther, data.str(t->name_id), ""};
        if (t->queued_ns >= busy_end) {
          g.kind = syncing_at(data, apis, t->thread_id, busy_end) ? GapKind::kSyncWait : GapKind::kHostWait;
        }
        const std::int64_t len = g.end_ns - g.start_ns;
        idle.idle_ns += len;
        ++idle.gaps;
        (g.kind == GapKind::kHostWait ? idle.host_wait_ns
         : g.kind == GapKind::kSyncWait ? idle.sync_wait_ns
                                        : idle.other_ns) += len;
        gaps.push_back(std::move(g));
      }
      busy_end = std::max(busy_end, t->end_ns);
    }
    idle.span_ns = busy_end - tasks.front()->start_ns;
    report.devices.push_back(idle);
  }
  const auto n = std::min<std::size_t>(gaps.size(), static_cast<std::size_t>(std::max(top, 0)));
  std::partial_sort(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(n), gaps.end(),
                    [](const Gap& a, const Gap& b) { return a.end_ns - a.start_ns > b.end_ns - b.start_ns; });
  gaps.resize(n);
  for (Gap& g : gaps) {
    g.host_activity = host_activity(data, apis, g.thread_id, g.start_ns, g.end_ns);  // the longest only
  }
  report.longest = std::move(gaps);
  return report;
}

}  // namespace npuscope::analyzer

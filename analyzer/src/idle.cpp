// Device idle time split as Holistic Trace Analysis does it, over each device's span.
//
// Note [Idle gaps]
// The gaps are the holes in the union of a device's kernel and communication-op intervals (nsys'
// "GPU gaps": the k-th end to the (k+1)-th start in time order; a device inside a collective is not
// idle: its wait is the collective's, step_time's Communication). Each gap is charged by the task
// that ends it (its launch: Note [Launch time] in launch_times.h):
//   host_wait  it was launched (TASK.queued_ns) after the gap began: the device had nothing queued
//              and waited for the host to launch;
//   sync_wait  the same, but the launching thread spent the gap's start blocked in a synchronizing
//              call (aclrtSynchronize*, a blocking aclrtMemcpy): the host waited for the device,
//              then the device for the host;
//   other      it was already queued: launch latency, cross-stream event waits, copies.
#include <algorithm>
#include <map>

#include "analyses.h"
#include "rules.h"

namespace npuscope::analyzer {
namespace {

// API calls per host thread, in start order.
using ApisByThread = std::map<std::int32_t, std::vector<const Api*>>;

// What `thread` did during [a, b): the API calls overlapping it, longest overlap first. All calls
// are in start order; nesting is shallow, so look back a little of the thread's calls from the
// first start >= b (the longest gaps only: no per-thread copy of 10M calls).
std::string host_activity(const TraceData& data, std::int32_t thread, std::int64_t a, std::int64_t b) {
  std::map<std::string, std::int64_t> overlap;
  const auto& calls = data.apis;
  const auto hi =
      std::lower_bound(calls.begin(), calls.end(), b, [](const Api& r, std::int64_t t) { return r.start_ns < t; });
  std::size_t looked = 0;
  for (auto c = hi; c != calls.begin();) {
    --c;
    if (c->thread_id != thread) continue;
    ++looked;
    const std::int64_t o = std::min(b, c->end_ns) - std::max(a, c->start_ns);
    if (o > 0) {
      std::int64_t& sum = overlap[data.str(c->name_id)];
      sum = add_ns(sum, o);
    }
    if (c->end_ns < a && looked > 64) break;
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

// The calls that block the host on the device (aclrtSynchronize*, a blocking aclrtMemcpy), per thread
// in start order: few, so every gap can ask whether its thread was in one.
ApisByThread blocking_calls(const TraceData& data) {
  ApisByThread out;
  for (const Api& a : data.apis) {
    if (data.is_blocking_api(a)) out[a.thread_id].push_back(&a);
  }
  return out;
}

// True if `thread` was inside a blocking call at time t.
bool blocked_at(const ApisByThread& blocking, std::int32_t thread, std::int64_t t) {
  const auto it = blocking.find(thread);
  if (it == blocking.end()) return false;
  const auto& calls = it->second;
  auto hi =
      std::upper_bound(calls.begin(), calls.end(), t, [](std::int64_t v, const Api* r) { return v < r->start_ns; });
  for (int looked = 0; hi != calls.begin() && looked < 64; ++looked) {  // blocking calls hardly nest
    --hi;
    if ((*hi)->end_ns >= t) return true;
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
  const ApisByThread blocking = blocking_calls(data);
  // Per device: where its busy time ends so far, and its report (devices are few).
  struct Device {
    std::int64_t busy_end = 0, first_start = 0;
    DeviceIdle idle;
  };
  std::map<std::int32_t, Device> devices;
  // Only the `top` longest gaps keep their details: a min-heap on length.
  const auto longer = [](const Gap& a, const Gap& b) { return a.end_ns - a.start_ns > b.end_ns - b.start_ns; };
  std::vector<Gap> gaps;
  const auto keep = static_cast<std::size_t>(std::max(top, 0));
  Device* d = nullptr;
  // The kernels and the collectives, both in start order, merged.
  std::size_t k = 0, c = 0;
  const auto next = [&]() -> const Task* {
    const bool kernel = k < data.kernels.size() &&
                        (c >= data.collectives.size() || data.kernels[k].start_ns <= data.collectives[c].start_ns);
    if (kernel) return &data.kernels[k++];
    return c < data.collectives.size() ? &data.collectives[c++] : nullptr;
  };
  for (const Task* task = next(); task != nullptr; task = next()) {
    const Task& t = *task;
    if (!d || d->idle.device_id != t.device_id) {
      const auto [it, added] = devices.try_emplace(t.device_id);
      d = &it->second;
      if (added) {
        d->idle.device_id = t.device_id;
        d->busy_end = d->first_start = t.start_ns;
      }
    }
    if (t.start_ns > d->busy_end) {  // a gap [busy_end, start), ended by t
      GapKind kind = GapKind::kOther;
      if (t.queued_ns >= d->busy_end) {
        kind = blocked_at(blocking, t.thread_id, d->busy_end) ? GapKind::kSyncWait : GapKind::kHostWait;
      }
      const std::int64_t len = t.start_ns - d->busy_end;
      d->idle.idle_ns = add_ns(d->idle.idle_ns, len);
      ++d->idle.gaps;
      (kind == GapKind::kHostWait   ? d->idle.host_wait_ns
       : kind == GapKind::kSyncWait ? d->idle.sync_wait_ns
                                    : d->idle.other_ns) += len;
      if (keep > 0 && (gaps.size() < keep || len > gaps.front().end_ns - gaps.front().start_ns)) {
        if (gaps.size() == keep) {
          std::pop_heap(gaps.begin(), gaps.end(), longer);
          gaps.pop_back();
        }
        gaps.push_back({t.device_id, t.thread_id, d->busy_end, t.start_ns, kind, data.str(t.name_id), ""});
        std::push_heap(gaps.begin(), gaps.end(), longer);
      }
    }
    d->busy_end = std::max(d->busy_end, t.end_ns);
  }
  IdleReport report;
  for (auto& [id, dev] : devices) {
    dev.idle.span_ns = dev.busy_end - dev.first_start;
    report.devices.push_back(dev.idle);
  }
  std::sort_heap(gaps.begin(), gaps.end(), longer);
  for (Gap& g : gaps) g.host_activity = host_activity(data, g.thread_id, g.start_ns, g.end_ns);
  report.longest = std::move(gaps);
  return report;
}

namespace {

constexpr Column kIdleColumns[] = {
    {"device_id", Unit::kId, "the NPU device", "device"},
    {"span_ns", Unit::kNs, "its first task's start to its last task's end (kernels and communication ops)"},
    {"idle_ns", Unit::kNs, "the span less the union of its kernels' and communication ops' intervals"},
    {"idle_pct", Unit::kPercent, "idle / span", "%"},
    {"host_wait_ns", Unit::kNs, "gaps ended by a task launched after the device went idle"},
    {"host_wait_pct", Unit::kPercent, "host wait / span", "%"},
    {"sync_wait_ns", Unit::kNs, "host waits while the launching thread was blocked in a synchronizing call"},
    {"sync_wait_pct", Unit::kPercent, "sync wait / span", "%"},
    {"other_ns", Unit::kNs, "gaps ended by a task already queued (launch latency, event waits)"},
    {"other_pct", Unit::kPercent, "other / span", "%"},
    {"gaps", Unit::kCount, "the number of gaps"},
};
constexpr Column kGapColumns[] = {
    {"device_id", Unit::kId, "the NPU device", "device", true},
    {"start_ns", Unit::kNs, "the gap's start", "at"},
    {"end_ns", Unit::kNs, "its end", "", true},
    {"duration_ns", Unit::kNs, "end - start", "length"},
    {"kind", Unit::kText, "host_wait, sync_wait or other (Note [Idle gaps])"},
    {"next_op", Unit::kOpName, "the task that ended the gap", "next op"},
    {"thread_id", Unit::kId, "the host thread that launched it", "thread", true},
    {"host_activity", Unit::kText, "the API calls of that thread overlapping the gap", "host thread was in"},
};

}  // namespace

constexpr TableSpec kIdleTable{"idle", "Device idle time",
                               "Per device, the gaps between its kernels, charged by the task that ends each "
                               "(Holistic Trace Analysis' breakdown).",
                               kIdleColumns};
constexpr TableSpec kIdleGapsTable{"idle_gaps", "Longest gaps", "The longest device gaps (--top), longest first.",
                                   kGapColumns};

namespace {

double pct_of(std::int64_t part, std::int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0;
}

void run_idle(RuleContext& c) {
  const IdleReport idle = idle_time(c.data, c.top);
  for (const DeviceIdle& d : idle.devices) {
    c.add(kIdleTable, {std::int64_t{d.device_id}, d.span_ns, d.idle_ns, pct_of(d.idle_ns, d.span_ns), d.host_wait_ns,
                       pct_of(d.host_wait_ns, d.span_ns), d.sync_wait_ns, pct_of(d.sync_wait_ns, d.span_ns), d.other_ns,
                       pct_of(d.other_ns, d.span_ns), d.gaps});
  }
  for (const Gap& g : idle.longest) {
    c.add(kIdleGapsTable, {std::int64_t{g.device_id}, g.start_ns, g.end_ns, g.end_ns - g.start_ns,
                           std::string(gap_kind_name(g.kind)), g.next_op, std::int64_t{g.thread_id}, g.host_activity});
  }
}

constexpr const TableSpec* kIdleTables[] = {&kIdleTable, &kIdleGapsTable};

}  // namespace

extern const Rule kIdleRule{"idle", "device idle time: host wait, sync wait, other", run_idle, kIdleTables};

}  // namespace npuscope::analyzer

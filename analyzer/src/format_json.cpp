// The JSON form of a report: stable keys (docs/analyze.md lists them).
#include <nlohmann/json.hpp>

#include "npuscope/analyzer/format.h"

namespace npuscope::analyzer {
namespace {

using nlohmann::json;

json task_json(const OverflowTask& t) {
  return {{"task_id", t.task_id}, {"op_name", t.op_name}, {"op_type", t.op_type}, {"device_id", t.device_id},
          {"start_ns", t.start_ns}};
}

json summary_json(const Report& r) {
  const Summary& s = r.summary;
  json devices = json::array(), streams = json::array(), bounds = json::object();
  for (const DeviceUse& d : s.devices) {
    devices.push_back({{"device_id", d.device_id}, {"name", d.name}, {"tasks", d.tasks}, {"first_ns", d.first_ns},
                       {"last_ns", d.last_ns}, {"busy_ns", d.busy_ns}, {"busy_pct", d.busy_pct}});
  }
  for (const StreamUse& u : s.streams) {
    streams.push_back({{"device_id", u.device_id}, {"stream_id", u.stream_id}, {"tasks", u.tasks},
                       {"busy_ns", u.busy_ns}, {"utilisation", u.utilisation}});
  }
  for (const BoundShare& b : r.bounds) bounds[bound_name(b.bound)] = {{"tasks", b.tasks}, {"total_ns", b.total_ns}};
  return {{"complete", s.complete}, {"command", s.command}, {"tasks", s.tasks}, {"span_ns", s.span_ns},
          {"devices", devices}, {"streams", streams}, {"api_calls", s.api_calls}, {"host_api_ns", s.host_api_ns},
          {"dropped_records", s.dropped_records}, {"time_by_bound", bounds}};
}

}  // namespace

std::string to_json(const Report& r) {
  json j;
  j["rules"] = r.rules;
  j["notes"] = r.notes;
  j["summary"] = summary_json(r);
  j["op_statistics"] = json::array();
  for (const OpStat& s : r.op_statistics) {
    j["op_statistics"].push_back({{"op_type", s.op_type}, {"core_type", s.task_type}, {"count", s.count},
                                  {"total_ns", s.total_ns}, {"avg_ns", s.avg_ns}, {"min_ns", s.min_ns},
                                  {"max_ns", s.max_ns}, {"ratio_pct", s.ratio_pct}});
  }
  j["top_ops"] = json::array();
  for (const TaskPerf& p : r.top_ops) {
    j["top_ops"].push_back({{"task_id", p.task_id}, {"op_name", p.op_name}, {"op_type", p.op_type},
                            {"task_type", p.task_type}, {"device_id", p.device_id}, {"stream_id", p.stream_id},
                            {"start_ns", p.start_ns}, {"duration_ns", p.duration_ns}, {"block_dim", p.block_dim},
                            {"flops", p.flops}, {"bytes", p.bytes}, {"bound", bound_name(p.bound)},
                            {"achieved_flops_per_s", p.flops_per_s}, {"achieved_bytes_per_s", p.bytes_per_s},
                            {"compute_pct_of_peak", p.compute_pct}, {"memory_pct_of_peak", p.memory_pct}});
  }
  json idle_devices = json::array(), gaps = json::array();
  for (const DeviceIdle& d : r.idle.devices) {
    idle_devices.push_back({{"device_id", d.device_id}, {"span_ns", d.span_ns}, {"idle_ns", d.idle_ns},
                            {"host_wait_ns", d.host_wait_ns}, {"sync_wait_ns", d.sync_wait_ns},
                            {"other_ns", d.other_ns}, {"gaps", d.gaps}});
  }
  for (const Gap& g : r.idle.longest) {
    gaps.push_back({{"device_id", g.device_id}, {"start_ns", g.start_ns}, {"end_ns", g.end_ns},
                    {"duration_ns", g.end_ns - g.start_ns}, {"kind", gap_kind_name(g.kind)}, {"next_op", g.next_op},
                    {"thread_id", g.thread_id}, {"host_activity", g.host_activity}});
  }
  j["idle"] = {{"devices", idle_devices}, {"longest_gaps", gaps}};
  j["fallback_ops"] = json::array();
  for (const FallbackOp& f : r.fallback_ops) {
    j["fallback_ops"].push_back({{"op_type", f.op_type}, {"example_op_name", f.example_op_name}, {"count", f.count},
                                 {"total_ns", f.total_ns}, {"avg_ns", f.avg_ns}, {"max_ns", f.max_ns},
                                 {"fallback", f.fallback}});
  }
  const OverflowReport& o = r.overflows;
  json items = json::array();
  for (const OverflowTask& t : o.items) items.push_back(task_json(t));
  j["overflows"] = {{"count", o.count}, {"first", o.first ? task_json(*o.first) : json(nullptr)}, {"items", items},
                    {"overflow_mode", o.overflow_mode}};
  j["overflows"]["origin"] = o.origin ? json{{"task", task_json(o.origin->task)}, {"method", o.origin->method},
                                             {"detail", o.origin->detail}}
                                      : json(nullptr);
  json mem_devices = json::array();
  for (const DeviceMemory& d : r.memory.devices) {
    json leaks = json::array();
    for (const Leak& l : d.largest_leaks) leaks.push_back({{"address", l.address}, {"bytes", l.bytes}, {"ts_ns", l.ts_ns}});
    mem_devices.push_back({{"device_id", d.device_id}, {"peak_allocated_bytes", d.peak_allocated_bytes},
                           {"peak_allocated_ns", d.peak_allocated_ns}, {"peak_reserved_bytes", d.peak_reserved_bytes},
                           {"peak_reserved_ns", d.peak_reserved_ns}, {"fragmentation_at_peak", d.fragmentation_at_peak},
                           {"allocations", d.allocations}, {"leaked_count", d.leaked_count},
                           {"leaked_bytes", d.leaked_bytes}, {"largest_leaks", leaks}});
  }
  j["memory"] = {{"peak_allocated_bytes", r.memory.peak_allocated_bytes},
                 {"peak_reserved_bytes", r.memory.peak_reserved_bytes},
                 {"leaked_bytes", r.memory.leaked_bytes}, {"devices", mem_devices}};
  j["advice"] = json::array();
  for (const Advice& a : r.advice) {
    j["advice"].push_back({{"rule", a.rule}, {"title", a.title}, {"detail", a.detail}, {"action", a.action},
                           {"ops", a.ops}, {"impact_ns", a.impact_ns}});
  }
  return j.dump(2) + "\n";
}

}  // namespace npuscope::analyzer

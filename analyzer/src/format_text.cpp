// The terminal report: most important first (overflows, then advice by time at stake), aligned
// tables that fit the width, colour on a terminal.
#include <algorithm>
#include <sstream>

#include "npuscope/analyzer/format.h"
#include "npuscope/collector/text_table.h"

namespace npuscope::analyzer {

using collector::TextReport;
using collector::TextTable;
using collector::format_ns;
using collector::format_bytes;
using collector::format_pct;
using collector::format_rate;
using collector::format_count;
namespace {

void summary(TextReport& w, const Report& r) {
  const Summary& s = r.summary;
  w.heading("Summary");
  if (!s.command.empty()) w.line("command: " + s.command);
  w.line(format_count(s.tasks) + " kernel tasks over " + format_ns(static_cast<double>(s.span_ns)) + "; host: " +
         format_count(s.api_calls) + " API calls, " + format_ns(static_cast<double>(s.host_api_ns)) + " inside them (all threads)");
  for (const std::string& note : r.notes) w.line(w.yellow("note: " + note));
  TextTable devices({{"device"}, {"spec"}, {"tasks", true}, {"span", true}, {"busy", true}, {"busy %", true}});
  for (const DeviceUse& d : s.devices) {
    devices.add({"npu:" + std::to_string(d.device_id), d.name, format_count(d.tasks),
                 format_ns(static_cast<double>(d.last_ns - d.first_ns)), format_ns(static_cast<double>(d.busy_ns)),
                 format_pct(d.busy_pct)});
  }
  if (!devices.empty()) w.table(devices);
  TextTable streams({{"stream"}, {"tasks", true}, {"busy", true}, {"utilisation", true}});
  for (const StreamUse& u : s.streams) {
    streams.add({"npu:" + std::to_string(u.device_id) + " stream " + std::to_string(u.stream_id), format_count(u.tasks),
                 format_ns(static_cast<double>(u.busy_ns)), format_pct(100 * u.utilisation)});
  }
  if (s.streams.size() > 1) w.table(streams);
  if (!r.bounds.empty()) {
    std::string by_bound = "kernel time by bound:";
    for (const BoundShare& b : r.bounds) {
      by_bound += std::string(" ") + bound_name(b.bound) + " " + format_ns(static_cast<double>(b.total_ns)) + " (" +
                  format_count(b.tasks) + " tasks)";
    }
    w.line(by_bound);
  }
}

void overflow_section(TextReport& w, const OverflowReport& o) {
  if (o.count == 0) return;
  w.heading(w.red("Overflows: " + format_count(o.count) + (o.count == 1 ? " task" : " tasks")) +
            (o.overflow_mode.empty() ? "" : " (" + o.overflow_mode + " mode)"));
  w.line("first overflowing op: " + w.red(o.first->op_name) + " (" + o.first->op_type + ", task " +
         std::to_string(o.first->task_id) + ", at " + format_ns(static_cast<double>(o.first->start_ns)) + ")");
  if (o.origin) {
    w.line("NaN/Inf origin: " + o.origin->task.op_name + " (" + o.origin->task.op_type + "), by " + o.origin->method +
           ": " + o.origin->detail);
  }
  TextTable t({{"#", true}, {"op name"}, {"op type"}, {"task", true}, {"start", true}});
  for (std::size_t i = 0; i < std::min<std::size_t>(o.items.size(), 10); ++i) {
    const OverflowTask& x = o.items[i];
    t.add({std::to_string(i + 1), x.op_name, x.op_type, std::to_string(x.task_id), format_ns(static_cast<double>(x.start_ns))});
  }
  w.table(t);
  w.line("advice: check the first op's inputs and its output dtype range (f16 max 65504); keep it in f32 "
         "(precision mode) or scale the values");
}

void advice_section(TextReport& w, const std::vector<Advice>& advice) {
  if (advice.empty()) return;
  w.heading("Advice (most time at stake first)");
  for (const Advice& a : advice) {
    w.line(w.yellow("[" + a.rule + "] ") + a.title);
    w.line(a.detail, "      ");
    w.line("-> " + a.action, "      ");
  }
}

void top_ops_section(TextReport& w, const std::vector<TaskPerf>& top) {
  if (top.empty()) return;
  w.heading("Top ops by duration");
  TextTable t({{"op name"}, {"op type"}, {"duration", true}, {"bound"}, {"FLOP/s", true}, {"% peak", true},
               {"bytes/s", true}, {"% BW", true}});
  for (const TaskPerf& p : top) {
    t.add({p.op_name, p.op_type, format_ns(static_cast<double>(p.duration_ns)), bound_name(p.bound),
           format_rate(p.flops_per_s, "FLOP/s"), format_pct(p.compute_pct), format_rate(p.bytes_per_s, "B/s"),
           format_pct(p.memory_pct)});
  }
  w.table(t);
}

void idle_section(TextReport& w, const IdleReport& idle) {
  if (idle.devices.empty()) return;
  w.heading("Device idle time");
  TextTable t({{"device"}, {"span", true}, {"idle", true}, {"host wait", true}, {"sync wait", true}, {"other", true},
               {"gaps", true}});
  for (const DeviceIdle& d : idle.devices) {
    const auto pct = [&](std::int64_t ns) {
      return format_ns(static_cast<double>(ns)) + " (" +
             format_pct(d.span_ns ? 100.0 * static_cast<double>(ns) / static_cast<double>(d.span_ns) : 0) + ")";
    };
    t.add({"npu:" + std::to_string(d.device_id), format_ns(static_cast<double>(d.span_ns)), pct(d.idle_ns),
           pct(d.host_wait_ns), pct(d.sync_wait_ns), pct(d.other_ns), format_count(d.gaps)});
  }
  w.table(t);
  if (idle.longest.empty()) return;
  w.line("longest gaps:");
  TextTable g({{"length", true}, {"kind"}, {"at", true}, {"next op"}, {"host thread was in"}});
  for (const Gap& gap : idle.longest) {
    g.add({format_ns(static_cast<double>(gap.end_ns - gap.start_ns)), gap_kind_name(gap.kind),
           format_ns(static_cast<double>(gap.start_ns)), gap.next_op, gap.host_activity});
  }
  w.table(g);
}

void fallback_section(TextReport& w, const std::vector<FallbackOp>& ops) {
  if (ops.empty()) return;
  w.heading("AI CPU ops and fallbacks");
  TextTable t({{"op type"}, {"why"}, {"count", true}, {"total", true}, {"avg", true}, {"max", true}, {"example"}});
  for (const FallbackOp& f : ops) {
    t.add({f.op_type, f.fallback ? "no NPU kernel" : "AI CPU op", format_count(f.count),
           format_ns(static_cast<double>(f.total_ns)), format_ns(f.avg_ns), format_ns(static_cast<double>(f.max_ns)),
           f.example_op_name});
  }
  w.table(t);
  w.line("advice: an AI CPU task costs tens of us and serialises the stream; replace the op with one the NPU "
         "runs, or change its dtype to one its NPU kernel supports");
}

void memory_section(TextReport& w, const MemoryReport& m) {
  if (m.devices.empty()) return;
  w.heading("Device memory");
  TextTable t({{"device"}, {"peak allocated", true}, {"at", true}, {"peak reserved", true}, {"fragmentation", true},
               {"allocations", true}, {"never freed", true}});
  for (const DeviceMemory& d : m.devices) {
    t.add({"npu:" + std::to_string(d.device_id), format_bytes(static_cast<double>(d.peak_allocated_bytes)),
           format_ns(static_cast<double>(d.peak_allocated_ns)), format_bytes(static_cast<double>(d.peak_reserved_bytes)),
           format_pct(100 * d.fragmentation_at_peak), format_count(d.allocations),
           format_count(d.leaked_count) + " / " + format_bytes(static_cast<double>(d.leaked_bytes))});
  }
  w.table(t);
  for (const DeviceMemory& d : m.devices) {
    if (d.leaked_count == 0) continue;
    w.line(w.yellow("npu:" + std::to_string(d.device_id) + ": " + format_count(d.leaked_count) +
                    " allocations never freed (" + format_bytes(static_cast<double>(d.leaked_bytes)) + ")") +
           "; largest: " + format_bytes(static_cast<double>(d.largest_leaks.front().bytes)) + " allocated at " +
           format_ns(static_cast<double>(d.largest_leaks.front().ts_ns)));
    w.line("advice: release tensors you no longer need (a growing cache or list keeps them alive)");
  }
}

void op_statistics_section(TextReport& w, const std::vector<OpStat>& stats) {
  if (stats.empty()) return;
  w.heading("Op statistics (by total time)");
  TextTable t({{"op type"}, {"core type"}, {"count", true}, {"total", true}, {"avg", true}, {"min", true},
               {"max", true}, {"ratio", true}});
  for (const OpStat& s : stats) {
    t.add({s.op_type, s.task_type, format_count(s.count), format_ns(static_cast<double>(s.total_ns)), format_ns(s.avg_ns),
           format_ns(static_cast<double>(s.min_ns)), format_ns(static_cast<double>(s.max_ns)), format_pct(s.ratio_pct)});
  }
  w.table(t);
}

}  // namespace

void write_text(const Report& r, std::ostream& out, const TextStyle& style) {
  TextReport w(out, style);
  summary(w, r);
  overflow_section(w, r.overflows);
  advice_section(w, r.advice);
  top_ops_section(w, r.top_ops);
  idle_section(w, r.idle);
  fallback_section(w, r.fallback_ops);
  memory_section(w, r.memory);
  op_statistics_section(w, r.op_statistics);
}

}  // namespace npuscope::analyzer

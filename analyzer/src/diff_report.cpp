// The summary tables of a diff (runs, overall, memory, matching) and the notes; the per-op tables
// are in diff_op_tables.cpp.
#include "diff_report.h"

#include "diff_op_tables.h"
#include "diff_tables.h"

namespace npuscope::analyzer {
namespace {

Table runs_table(const DiffSide& b, const DiffSide& n) {
  Table t{&kDiffRunsTable, {}};
  const auto step = [](const DiffSide& s) { return s.step ? std::to_string(*s.step) : std::string("all"); };
  const auto add = [&](const char* setting, const std::string& base, const std::string& next) {
    t.add({std::string(setting), base, next, base != next});
  };
  add("trace", b.path, n.path);
  add("step", step(b), step(n));
  add("command", b.command, n.command);
  add("device", b.device, n.device);
  add("precision mode", b.precision_mode, n.precision_mode);
  add("overflow mode", b.overflow_mode, n.overflow_mode);
  add("npuscope version", b.version, n.version);
  add("status", b.status, n.status);
  return t;
}

double share_pct(std::int64_t ns, std::int64_t e2e) {
  return e2e > 0 ? 100.0 * static_cast<double>(ns) / static_cast<double>(e2e) : 0.0;
}

Table overall_table(const TimeSplit& b, const TimeSplit& n) {
  Table t{&kDiffOverallTable, {}};
  // `always`: shown when 0 on both sides too.
  const auto add = [&](const char* metric, std::int64_t TimeSplit::*ns, std::int64_t TimeSplit::*count, bool always) {
    if (!always && b.*ns == 0 && n.*ns == 0) return;
    const auto tasks = [&](const TimeSplit& s) { return count ? Value(s.*count) : Value(); };
    t.add({std::string(metric), b.*ns, share_pct(b.*ns, b.e2e_ns), tasks(b), n.*ns, share_pct(n.*ns, n.e2e_ns),
           tasks(n), n.*ns - b.*ns, diff_ratio(b.*ns, n.*ns)});
  };
  add("Computing", &TimeSplit::computing_ns, nullptr, true);
  add("  Cube (AI Core)", &TimeSplit::cube_ns, &TimeSplit::cube_count, false);
  add("  Vector (AI Vector)", &TimeSplit::vector_ns, &TimeSplit::vector_count, false);
  add("  AI CPU (fallback)", &TimeSplit::ai_cpu_ns, &TimeSplit::ai_cpu_count, false);
  add("  Host CPU (golden)", &TimeSplit::host_cpu_ns, &TimeSplit::host_cpu_count, false);
  add("  GEMM (GPU)", &TimeSplit::gemm_ns, &TimeSplit::gemm_count, false);
  add("  Elementwise (GPU)", &TimeSplit::elementwise_ns, &TimeSplit::elementwise_count, false);
  add("  Other kernels (GPU)", &TimeSplit::other_kernel_ns, &TimeSplit::other_kernel_count, false);
  add("  Copies (SDMA)", &TimeSplit::copy_ns, &TimeSplit::copy_count, false);
  add("Communication (not overlapped)", &TimeSplit::uncovered_communication_ns, nullptr, false);
  add("  Communication (all)", &TimeSplit::communication_ns, &TimeSplit::communication_count, false);
  add("Free", &TimeSplit::free_ns, nullptr, true);
  add("E2E", &TimeSplit::e2e_ns, nullptr, true);
  return t;
}

Table memory_table(const MemoryTotals& b, const MemoryTotals& n) {
  Table t{&kDiffMemoryTable, {}};
  if (!b.recorded && !n.recorded) return t;  // no allocator records in either run: no rows of zeros
  const auto add = [&](const char* metric, std::int64_t base, std::int64_t next, Value base_count, Value new_count) {
    t.add({std::string(metric), base, next, next - base, diff_ratio(base, next), std::move(base_count),
           std::move(new_count)});
  };
  add("peak allocated", b.peak_allocated, n.peak_allocated, {}, {});
  add("peak reserved", b.peak_reserved, n.peak_reserved, {}, {});
  add("allocated in all", b.allocations.total, n.allocations.total, b.allocations.count, n.allocations.count);
  add("largest allocation", b.allocations.max, n.allocations.max, {}, {});
  add("freed in all", b.frees.total, n.frees.total, b.frees.count, n.frees.count);
  return t;
}

Table matching_table(const DiffInputs& in, const OpRowCounts& rows) {
  std::int64_t by[std::size(enum_values<PairingStage>())] = {};
  for (const OpPair& m : in.pairing.pairs) ++by[static_cast<int>(m.how)];
  const auto count = [](std::size_t n) { return static_cast<std::int64_t>(n); };
  Table t{&kDiffMatchingTable, {}};
  t.add({count(in.base.ops.size()), count(in.next.ops.size()), by[static_cast<int>(PairingStage::kName)],
         by[static_cast<int>(PairingStage::kNameMap)], by[static_cast<int>(PairingStage::kTypeShape)],
         count(in.pairing.subject_only.size()), count(in.pairing.reference_only.size()), rows.slower, rows.faster,
         rows.unchanged});
  return t;
}

std::vector<std::string> notes(const DiffInputs& in) {
  std::vector<std::string> out;
  const DiffSide& b = in.base;
  const DiffSide& n = in.next;
  const auto differs = [&](const char* what, const std::string& base, const std::string& next) {
    if (base != next) out.push_back(std::string("the runs differ in ") + what + ": " + base + " -> " + next);
  };
  differs("device", b.device, n.device);
  differs("precision mode", b.precision_mode, n.precision_mode);
  differs("overflow mode", b.overflow_mode, n.overflow_mode);
  for (const DiffSide* s : {&b, &n}) {
    if (s->status != "complete")
      out.push_back(s->path + " is incomplete (the workload did not exit cleanly): it may lack its last ops");
    if (s->ops.empty()) out.push_back(s->path + " has no ops in the compared range");
  }
  return out;
}

}  // namespace

Report diff_report(const DiffInputs& in) {
  Report r;
  r.rules = {"diff"};
  OpRowCounts counts;
  Table ops = diff_ops_table(in, counts);
  r.tables.push_back(runs_table(in.base, in.next));
  r.tables.push_back(overall_table(in.base.time, in.next.time));
  r.tables.push_back(memory_table(in.base.memory, in.next.memory));
  r.tables.push_back(matching_table(in, counts));
  r.tables.push_back(std::move(ops));
  r.tables.push_back(diff_op_types_table(in));
  r.tables.push_back(diff_kernels_table(in));
  r.tables.push_back(diff_apis_table(in));
  r.notes = notes(in);
  return r;
}

}  // namespace npuscope::analyzer

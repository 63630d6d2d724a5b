// The summary tables of a diff (runs, overall, memory, matching) and the notes; the per-op tables
// are in diff_op_tables.cpp.
#include "diff_report.h"

#include <map>

#include "diff_model_error.h"
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

// The Computing rows (Note [Kernel classes]): a parent is the sum of consecutive leaves, shown above
// them; a leaf without a parent is a row of its own.
struct ComputeRows {
  const char* parent;  // null: the leaves are rows of their own
  ComputeClass first, last;
};
constexpr ComputeRows kComputeRows[] = {
    {nullptr, ComputeClass::kMc2, ComputeClass::kMc2},
    {"Flash Attention (Forward)", ComputeClass::kFlashAttentionForwardCube, ComputeClass::kFlashAttentionForwardVector},
    {"Flash Attention (Backward)", ComputeClass::kFlashAttentionBackwardCube,
     ComputeClass::kFlashAttentionBackwardVector},
    {"Conv (Forward)", ComputeClass::kConvForwardCube, ComputeClass::kConvForwardVector},
    {"Conv (Backward)", ComputeClass::kConvBackwardCube, ComputeClass::kConvBackwardVector},
    {"Matmul", ComputeClass::kMatmulCube, ComputeClass::kMatmulVector},
    {nullptr, ComputeClass::kPagedAttention, ComputeClass::kPagedAttention},
    {"Vector", ComputeClass::kVectorTrans, ComputeClass::kVectorNoTrans},
    {nullptr, ComputeClass::kCube, ComputeClass::kSdmaTensorMove},
    {nullptr, ComputeClass::kOther, ComputeClass::kOther},
};

// Every class in one row group, in order (a new class needs its row).
constexpr bool rows_cover_classes() {
  int next = 0;
  for (const ComputeRows& r : kComputeRows) {
    if (static_cast<int>(r.first) != next || r.last < r.first) return false;
    next = static_cast<int>(r.last) + 1;
  }
  return next == kComputeClasses;
}
static_assert(rows_cover_classes(), "kComputeRows: each ComputeClass once, in order");

class OverallRows {
 public:
  OverallRows(const TimeSplit& b, const TimeSplit& n) : b_(b), n_(n) {}
  // A row, left out when 0 on both sides unless `always`; counts none when negative.
  void add(const std::string& metric, std::int64_t base, std::int64_t next, std::int64_t base_count,
           std::int64_t new_count, bool always = false) {
    if (!always && base == 0 && next == 0) return;
    const auto count = [](std::int64_t c) { return c >= 0 ? Value(c) : Value(); };
    t_.add({metric, base, share_pct(base, b_.e2e_ns), count(base_count), next, share_pct(next, n_.e2e_ns),
            count(new_count), next - base, diff_ratio(base, next)});
  }
  void computing() {
    add("Computing Time", b_.computing_ns, n_.computing_ns, b_.computing_count, n_.computing_count, true);
    for (const ComputeRows& r : kComputeRows) {
      if (r.parent != nullptr)
        add(std::string("  ") + r.parent, sum(b_, r, &ClassTime::ns), sum(n_, r, &ClassTime::ns),
            sum(b_, r, &ClassTime::count), sum(n_, r, &ClassTime::count));
      const std::string indent = r.parent != nullptr ? "    " : "  ";
      for (int c = static_cast<int>(r.first); c <= static_cast<int>(r.last); ++c) {
        const ClassTime& x = b_.classes[static_cast<std::size_t>(c)];
        const ClassTime& y = n_.classes[static_cast<std::size_t>(c)];
        add(indent + std::string(compute_class_label(static_cast<ComputeClass>(c))), x.ns, y.ns, x.count, y.count);
      }
    }
  }
  void communication() {
    add("Uncovered Communication Time", b_.uncovered_communication_ns, n_.uncovered_communication_ns,
        b_.communication_count, n_.communication_count);
    std::map<std::string, std::pair<GroupTime, GroupTime>> groups;  // by name: BASE's, NEW's
    for (const GroupTime& g : b_.groups) add_to(groups[g.name].first, g);
    for (const GroupTime& g : n_.groups) add_to(groups[g.name].second, g);
    for (const auto& [name, g] : groups) {
      const auto& [x, y] = g;
      add("  " + (name.empty() ? std::string("(no communicator)") : name), x.uncovered_ns, y.uncovered_ns, x.count,
          y.count);
      add("    Wait", x.wait_ns, y.wait_ns, -1, -1);
      add("    Transmit", x.uncovered_ns - x.wait_ns, y.uncovered_ns - y.wait_ns, -1, -1);
    }
    add("  Uncovered Communication Overlapped", b_.group_overlap_ns, n_.group_overlap_ns, -1, -1);
  }
  void free() {
    add("Free Time", b_.free_ns, n_.free_ns, -1, -1, true);
    add("  SDMA", b_.sdma_ns, n_.sdma_ns, b_.sdma_count, n_.sdma_count);
    add("  Free", b_.free_ns - b_.sdma_ns, n_.free_ns - n_.sdma_ns, -1, -1);
    add("E2E Time", b_.e2e_ns, n_.e2e_ns, -1, -1, true);
  }
  Table take() { return std::move(t_); }

 private:
  static std::int64_t sum(const TimeSplit& s, const ComputeRows& r, std::int64_t ClassTime::*what) {
    std::int64_t out = 0;
    for (int c = static_cast<int>(r.first); c <= static_cast<int>(r.last); ++c)
      out += s.classes[static_cast<std::size_t>(c)].*what;
    return out;
  }
  static void add_to(GroupTime& to, const GroupTime& g) {  // two communicators of one name: one row
    to.uncovered_ns += g.uncovered_ns;
    to.wait_ns += g.wait_ns;
    to.count += g.count;
  }
  const TimeSplit& b_;
  const TimeSplit& n_;
  Table t_{&kDiffOverallTable, {}};
};

Table overall_table(const TimeSplit& b, const TimeSplit& n) {
  OverallRows rows(b, n);
  rows.computing();
  rows.communication();
  rows.free();
  return rows.take();
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
  if (in.emulated_vs_real) r.tables.push_back(diff_model_error_table(in));
  r.tables.push_back(std::move(ops));
  r.tables.push_back(diff_op_types_table(in));
  r.tables.push_back(diff_kernels_table(in));
  r.tables.push_back(diff_apis_table(in));
  r.notes = notes(in);
  if (in.emulated_vs_real) {
    for (std::string& n : model_error_notes(in)) r.notes.push_back(std::move(n));
  }
  return r;
}

}  // namespace npuscope::analyzer

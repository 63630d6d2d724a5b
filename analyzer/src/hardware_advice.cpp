// msprof-analyze advisor's computation rules on what real hardware measured: ops bound by their PMU
// ratios (TASK_PMU), long AI CPU tasks. Format conversions (TransData): format_conversion.cpp.
//
// Note [PMU bound]
// A real profile's PMU columns (TASK_PMU_INFO, kernel_details: aic_mac_ratio, aiv_vec_ratio,
// aic_mte2_ratio, ...; msprof's op_summary without the aic_/aiv_ prefix) give each pipe's busy share
// of the task. As msprof-analyze's OperatorBoundChecker: a task of at least 20 us is bound by a pipe
// whose ratio is above its operator_bound_ratio, 0.8; a task with ratios but none above it is "no
// bound": every unit mostly idle, the op worth tuning (AOE). A pipe's ratio is the larger of its
// cube-side (aic_) and vector-side (aiv_) ones: a mix op runs on both. op_bound averages each
// ratio over an op type's tasks weighted by their time.
#include <algorithm>
#include <array>
#include <map>
#include <unordered_map>

#include "analyses.h"
#include "npuscope/analyzer/text_table.h"
#include "rules.h"

namespace npuscope::analyzer {

using analyzer::format_ns;
namespace {

constexpr std::int64_t kMinBoundNs = 20'000;   // OperatorBoundChecker._MIN_TASK_DURATION
constexpr double kBoundRatio = 0.8;            // config.ini operator_bound_ratio
constexpr std::int64_t kLongAiCpuNs = 20'000;  // AI CPU ops flagged over 20 us (REFERENCE.md)

// The pipes of Note [PMU bound], in OperatorBoundChecker's order.
constexpr std::array<std::string_view, 6> kPipes = {"vec", "mac", "scalar", "mte1", "mte2", "mte3"};
constexpr std::size_t kNoPipe = kPipes.size();

using Ratios = std::array<double, kPipes.size()>;  // -1: not measured

// "aic_mte2_ratio", "aiv_mte2_ratio", "mte2_ratio" -> the index of mte2; kNoPipe for another metric.
std::size_t pipe_of(std::string_view metric) {
  if (!metric.ends_with("_ratio")) return kNoPipe;
  metric.remove_suffix(6);
  if (metric.starts_with("aic_") || metric.starts_with("aiv_")) metric.remove_prefix(4);
  if (metric == "cube") metric = "mac";  // the cube's busy share under its other name
  for (std::size_t i = 0; i < kPipes.size(); ++i) {
    if (metric == kPipes[i]) return i;
  }
  return kNoPipe;
}

// The ratios of every task that has any, by task id.
std::unordered_map<std::int64_t, Ratios> task_ratios(const TraceData& data) {
  std::unordered_map<collector::StringId, std::size_t> pipe_of_name;
  std::unordered_map<std::int64_t, Ratios> out;
  data.reader.for_each([&](const collector::TaskPmuRow& p) {
    auto [it, added] = pipe_of_name.try_emplace(p.name_id, kNoPipe);
    if (added) it->second = pipe_of(data.str(p.name_id));
    if (it->second == kNoPipe) return;
    auto [r, fresh] = out.try_emplace(p.task_id);
    if (fresh) r->second.fill(-1);
    r->second[it->second] = std::max(r->second[it->second], p.value);
  });
  return out;
}

std::size_t busiest(const Ratios& r) {
  return static_cast<std::size_t>(std::max_element(r.begin(), r.end()) - r.begin());
}

struct OpBound {
  std::int32_t op_type_id = 0;
  std::int8_t task_type = 0;
  std::int64_t count = 0, total_ns = 0, measured_ns = 0;
  Ratios weighted{};  // ratio x duration, summed
  std::int64_t no_bound = 0, no_bound_ns = 0;
  std::array<std::int64_t, kPipes.size() + 1> bound_ns{};  // by pipe; kNoPipe: none
};

constexpr Column kOpBoundColumns[] = {
    {"op_type", Unit::kText, "the op type"},
    {"task_type", Unit::kText, "its core type"},
    {"count", Unit::kCount, "its tasks with PMU ratios"},
    {"total_ns", Unit::kNs, "their time"},
    {"vec_ratio", Unit::kRatio, "vector pipe busy share, time-weighted (Note [PMU bound])", "vec"},
    {"mac_ratio", Unit::kRatio, "cube (MAC) pipe", "mac"},
    {"scalar_ratio", Unit::kRatio, "scalar pipe", "scalar"},
    {"mte1_ratio", Unit::kRatio, "L1 to L0 moves", "mte1"},
    {"mte2_ratio", Unit::kRatio, "global memory to L1/UB moves", "mte2"},
    {"mte3_ratio", Unit::kRatio, "UB to global memory moves", "mte3"},
    {"bound", Unit::kText, "the pipe most of its time was bound by (a ratio above 0.8); none: no bound"},
    {"no_bound_count", Unit::kCount, "its tasks of at least 20 us with no ratio above 0.8", "no bound"},
};

}  // namespace

constexpr TableSpec kOpBoundTable{
    "op_bound", "Op types by PMU bound",
    "Per op type with PMU ratios (a real profile's TASK_PMU): each pipe's time-weighted busy share and the "
    "pipe bounding it, as msprof-analyze's operator bound check (Note [PMU bound]); most time first.",
    kOpBoundColumns};

namespace {

std::vector<OpBound> op_bounds(const TraceData& data, const std::unordered_map<std::int64_t, Ratios>& ratios) {
  std::map<std::pair<std::int32_t, std::int8_t>, OpBound> by_type;
  for (const Task& t : data.kernels) {
    const auto it = ratios.find(t.task_id);
    if (it == ratios.end()) continue;
    const Ratios& r = it->second;
    OpBound& b = by_type[{t.op_type_id, t.task_type}];
    b.op_type_id = t.op_type_id;
    b.task_type = t.task_type;
    ++b.count;
    const std::int64_t ns = duration(t);
    b.total_ns = add_ns(b.total_ns, ns);
    for (std::size_t i = 0; i < kPipes.size(); ++i) b.weighted[i] += std::max(r[i], 0.0) * static_cast<double>(ns);
    const std::size_t top = busiest(r);
    const bool bound = r[top] > kBoundRatio;
    std::int64_t& by = b.bound_ns[bound ? top : kNoPipe];
    by = add_ns(by, ns);
    if (!bound && ns >= kMinBoundNs) {
      ++b.no_bound;
      b.no_bound_ns = add_ns(b.no_bound_ns, ns);
    }
  }
  std::vector<OpBound> out;
  for (auto& [key, b] : by_type) out.push_back(b);
  std::stable_sort(out.begin(), out.end(), [](const OpBound& a, const OpBound& b) { return a.total_ns > b.total_ns; });
  return out;
}

void run_operator_bound(RuleContext& c) {
  const auto ratios = task_ratios(c.data);
  if (ratios.empty()) {
    // The emulator's own pipe ratios: kernel_pipes; a GPU's kernels have no AI Core PMU.
    const bool ascend = std::any_of(c.data.kernels.begin(), c.data.kernels.end(), [](const Task& t) {
      return is(t.task_type, TaskType::kAiCore) || is(t.task_type, TaskType::kAiVectorCore) ||
             is(t.task_type, TaskType::kMixAiCore) || is(t.task_type, TaskType::kMixAiVector);
    });
    if (!c.data.imported() || !ascend) return;
    c.note(
        "operator_bound needs PMU ratios (TASK_PMU): a real Ascend profile collected with aic_metrics "
        "PipeUtilization has them");
    return;
  }
  std::vector<Advice> advice;
  for (const OpBound& b : op_bounds(c.data, ratios)) {
    Row row{c.data.str(b.op_type_id), std::string(collector::task_type_name(b.task_type)), b.count, b.total_ns};
    Ratios avg{};
    for (std::size_t i = 0; i < kPipes.size(); ++i) {
      avg[i] = b.total_ns > 0 ? b.weighted[i] / static_cast<double>(b.total_ns) : 0;
      row.emplace_back(avg[i]);
    }
    const auto most =
        static_cast<std::size_t>(std::max_element(b.bound_ns.begin(), b.bound_ns.end()) - b.bound_ns.begin());
    row.emplace_back(most == kNoPipe ? std::string("none") : std::string(kPipes[most]));
    row.emplace_back(b.no_bound);
    c.add(kOpBoundTable, std::move(row));
    if (b.no_bound == 0) continue;
    const std::size_t top = busiest(avg);
    Advice a;
    a.rule = "operator_bound";
    a.title = c.data.str(b.op_type_id) + ": no pipe busier than 80 % (busiest " + std::string(kPipes[top]) + " at " +
              std::to_string(static_cast<int>(100 * avg[top] + 0.5)) + " %)";
    a.detail = std::to_string(b.no_bound) + " tasks of at least " + format_ns(static_cast<double>(kMinBoundNs)) + ", " +
               format_ns(static_cast<double>(b.no_bound_ns)) +
               " in all, with every unit mostly idle (latency, synchronization or a poor tiling)";
    a.action = "tune the op (AOE operator tuning) or change its shapes; check its block dim";
    a.ops = {c.data.str(b.op_type_id)};
    a.impact_ns = static_cast<std::int64_t>(static_cast<double>(b.no_bound_ns) * (1 - std::min(avg[top], 1.0)));
    advice.push_back(std::move(a));
  }
  std::stable_sort(advice.begin(), advice.end(),
                   [](const Advice& a, const Advice& b) { return a.impact_ns > b.impact_ns; });
  if (advice.size() > static_cast<std::size_t>(c.top)) advice.resize(static_cast<std::size_t>(c.top));
  add_advice(c, advice);
}

// msprof-analyze's AI CPU check: AI CPU tasks over 20 us, per op type.
void run_aicpu(RuleContext& c) {
  struct Long {
    std::int64_t count = 0, ns = 0, max_ns = 0;
  };
  std::map<std::int32_t, Long> by_type;
  for (const Task& t : c.data.kernels) {
    if (!is(t.task_type, TaskType::kAiCpu) || duration(t) <= kLongAiCpuNs) continue;
    Long& l = by_type[t.op_type_id];
    ++l.count;
    l.ns = add_ns(l.ns, duration(t));
    l.max_ns = std::max(l.max_ns, duration(t));
  }
  std::vector<Advice> advice;
  for (const auto& [type, l] : by_type) {
    Advice a;
    a.rule = "aicpu";
    a.title = c.data.str(type) + ": " + std::to_string(l.count) + " AI CPU tasks over " +
              format_ns(static_cast<double>(kLongAiCpuNs));
    a.detail = format_ns(static_cast<double>(l.ns)) + " in all, the longest " +
               format_ns(static_cast<double>(l.max_ns)) + "; an AI CPU task serialises its stream";
    a.action =
        "run it on the AI cores: another dtype (int64 and float64 often fall back to AI CPU) or an "
        "equivalent op the NPU has a kernel for";
    a.ops = {c.data.str(type)};
    a.impact_ns = l.ns;
    advice.push_back(std::move(a));
  }
  std::stable_sort(advice.begin(), advice.end(),
                   [](const Advice& a, const Advice& b) { return a.impact_ns > b.impact_ns; });
  if (advice.size() > static_cast<std::size_t>(c.top)) advice.resize(static_cast<std::size_t>(c.top));
  add_advice(c, advice);
}

constexpr const TableSpec* kOperatorBoundTables[] = {&kOpBoundTable, &kAdviceTable};
constexpr const TableSpec* kHardwareAdviceTables[] = {&kAdviceTable};

}  // namespace

extern const Rule kOperatorBoundRule{"operator_bound", "ops bound by their PMU ratios, and ops with no bound",
                                     run_operator_bound, kOperatorBoundTables};
extern const Rule kAiCpuRule{"aicpu", "AI CPU tasks over 20 us", run_aicpu, kHardwareAdviceTables};

}  // namespace npuscope::analyzer

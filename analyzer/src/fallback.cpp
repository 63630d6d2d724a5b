// AI CPU tasks and fallbacks (ops with no NPU kernel that ran their CPU kernel as an AI CPU task),
// grouped by op type, costliest first.
#include <algorithm>
#include <cmath>
#include <map>

#include "analyses.h"
#include "rules.h"

namespace npuscope::analyzer {

std::vector<FallbackOp> fallback_ops(const TraceData& data) {
  std::map<std::pair<std::string, bool>, FallbackOp> by_type;
  for (const Task& t : data.kernels) {
    if (!is(t.task_type, TaskType::kAiCpu) && !t.fallback) continue;
    FallbackOp& f = by_type[{data.str(t.op_type_id), t.fallback != 0}];
    if (f.count == 0) f.example_op_name = data.str(t.name_id);
    ++f.count;
    f.total_ns = add_ns(f.total_ns, duration(t));
    f.max_ns = std::max(f.max_ns, duration(t));
  }
  std::vector<FallbackOp> out;
  for (auto& [key, f] : by_type) {
    f.op_type = key.first;
    f.fallback = key.second;
    f.avg_ns = static_cast<double>(f.total_ns) / static_cast<double>(f.count);
    out.push_back(std::move(f));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const FallbackOp& a, const FallbackOp& b) { return a.total_ns > b.total_ns; });
  return out;
}

namespace {

constexpr Column kFallbackColumns[] = {
    {"op_type", Unit::kText, "the op type"},
    {"fallback", Unit::kFlag,
     "true: no NPU kernel for its dtypes, its CPU kernel ran; false: an AI CPU op by design; null for an imported "
     "profile, which does not say"},
    {"count", Unit::kCount, "its AI CPU tasks"},
    {"total_ns", Unit::kNs, "their time"},
    {"avg_ns", Unit::kNs, "total / count"},
    {"max_ns", Unit::kNs, "the longest"},
    {"example_op_name", Unit::kOpName, "one of its op instances", "example"},
};

}  // namespace

constexpr TableSpec kFallbackTable{
    "fallback_ops",
    "AI CPU ops and fallbacks",
    "AI CPU tasks per op type, costliest first.",
    kFallbackColumns,
    Layout::kRows,
    Section::kDetail,
    "an AI CPU task costs tens of us and serialises the stream; replace the op with one the NPU runs, or change "
    "its dtype to one its NPU kernel supports"};

namespace {

void run_fallback(RuleContext& c) {
  for (const FallbackOp& f : fallback_ops(c.data)) {
    // Whether an op fell back is the emulator's knowledge (Note [Emulated-only rules]).
    c.add(kFallbackTable, {f.op_type, c.data.imported() ? Value() : Value(f.fallback), f.count, f.total_ns,
                           static_cast<std::int64_t>(std::llround(f.avg_ns)), f.max_ns, f.example_op_name});
  }
}

constexpr const TableSpec* kFallbackTables[] = {&kFallbackTable};

}  // namespace

extern const Rule kFallbackRule{"fallback", "AI CPU ops and ops without an NPU kernel", run_fallback, kFallbackTables};

}  // namespace npuscope::analyzer

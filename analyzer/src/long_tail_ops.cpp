// Long-tail ops (msprof-analyze's "operators with large fluctuations"): op types whose slowest call
// is far above their average. The average hides them; the step that contains one waits for it.
#include <algorithm>
#include <cmath>
#include <map>

#include "analyses.h"
#include "rules.h"

namespace npuscope::analyzer {
namespace {

constexpr std::int64_t kMinCalls = 5;          // fewer calls say little about an average
constexpr double kMaxOverAvg = 3;              // the slowest call at least 3x the average ...
constexpr std::int64_t kMinExcessNs = 10'000;  // ... and at least 10 us above it

constexpr Column kLongTailColumns[] = {
    {"op_type", Unit::kText, "the op type"},
    {"core_type", Unit::kText, "AI_CORE, AI_VECTOR_CORE or AI_CPU"},
    {"count", Unit::kCount, "its kernel tasks (at least 5)"},
    {"avg_ns", Unit::kNs, "their average duration, to the nearest ns"},
    {"max_ns", Unit::kNs, "the slowest call's duration"},
    {"max_over_avg", Unit::kFactor, "max / avg (at least 3)", "max/avg"},
    {"excess_ns", Unit::kNs, "max - avg (at least 10 us): the time at stake in the slowest call", "excess"},
    {"slowest_op", Unit::kOpName, "the slowest call's op", "slowest op"},
    {"slowest_task_id", Unit::kTaskId, "its TASK.task_id", "task", true},
};

}  // namespace

constexpr TableSpec kLongTailOpsTable{
    "long_tail_ops",
    "Long-tail ops (slowest call far above the average)",
    "Op types of 5 or more calls whose slowest call took at least 3x their average and 10 us more (--top), most "
    "excess first.",
    kLongTailColumns,
    Layout::kRows,
    Section::kAdvice,
    "compare the slowest call with the others (its shapes, its inputs, what else ran on its stream): a first-call "
    "warm-up, an odd shape or contention makes one call pay for the step",
    "excess_ns"};

namespace {

struct Calls {
  std::int64_t count = 0, total_ns = 0, max_ns = -1;
  const Task* slowest = nullptr;
};

void run_long_tail_ops(RuleContext& c) {
  std::map<std::pair<std::int32_t, std::int32_t>, Calls> by_type;  // (op type id, task type): few keys
  for (const Task& t : c.data.kernels) {
    Calls& k = by_type[{t.op_type_id, t.task_type}];
    ++k.count;
    k.total_ns = add_ns(k.total_ns, duration(t));
    if (duration(t) > k.max_ns) {
      k.max_ns = duration(t);
      k.slowest = &t;
    }
  }
  std::vector<Row> rows;
  for (const auto& [key, k] : by_type) {
    const double avg = static_cast<double>(k.total_ns) / static_cast<double>(k.count);
    const auto excess = static_cast<std::int64_t>(std::llround(static_cast<double>(k.max_ns) - avg));
    if (k.count < kMinCalls || static_cast<double>(k.max_ns) < kMaxOverAvg * avg || excess < kMinExcessNs) continue;
    rows.push_back({c.data.str(key.first), std::string(collector::task_type_name(key.second)), k.count,
                    static_cast<std::int64_t>(std::llround(avg)), k.max_ns, static_cast<double>(k.max_ns) / avg, excess,
                    c.data.str(k.slowest->name_id), k.slowest->task_id});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return std::get<std::int64_t>(a[6]) > std::get<std::int64_t>(b[6]);
  });
  rows.resize(std::min(rows.size(), static_cast<std::size_t>(c.top)));
  for (Row& r : rows) c.add(kLongTailOpsTable, std::move(r));
}

constexpr const TableSpec* kLongTailTables[] = {&kLongTailOpsTable};

}  // namespace

extern const Rule kLongTailOpsRule{"long_tail_ops", "op types whose slowest call is far above their average",
                                   run_long_tail_ops, kLongTailTables};

}  // namespace npuscope::analyzer

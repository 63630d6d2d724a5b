// The online op check (`npuscope run --check-ops`, OP_CHECK; Note [Online op check] in
// emulator/src/op_check.h): how many kernel outputs met msprobe's API precision standards, and the
// ops that did not, each with its worst case.
#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "rules.h"

namespace npuscope::analyzer {
namespace {

constexpr Column kCheckSummaryColumns[] = {
    {"outputs", Unit::kCount, "kernel outputs checked"},
    {"tasks", Unit::kCount, "kernel tasks checked"},
    {"passed", Unit::kCount, "outputs within their standard"},
    {"warnings", Unit::kCount, "outputs past the warning bound"},
    {"errors", Unit::kCount, "outputs beyond their standard"},
    {"failing_ops", Unit::kCount, "op names with at least one failing output", "failing ops"},
    {"unchecked_tasks", Unit::kCount,
     "NPU kernel tasks left unchecked: no CPU golden for the op, or its golden refused f64 or failed", "unchecked"},
    {"unchecked_op_types", Unit::kText, "the op types of those tasks, most tasks first (at most 5); null if none",
     "unchecked op types"},
};

constexpr Column kFailingOpColumns[] = {
    {"op_name", Unit::kOpName, "the op (its worst call is the one shown)"},
    {"op_type", Unit::kText, "its op type"},
    {"pass", Unit::kText, "forward, backward or optimizer (PyTorch scripts; else null)"},
    {"standard", Unit::kText, "how it is judged: binary, absolute_threshold, ulp, thousandth or benchmark"},
    {"status", Unit::kText, "error or warning (its worst call)"},
    {"failing_calls", Unit::kCount, "its calls with a failing output", "failing calls"},
    {"calls", Unit::kCount, "its calls checked"},
    {"failing_ratio", Unit::kNumber, "the worst call's share of failing elements (0 to 1)", "failing share"},
    {"max_rel_err", Unit::kNumber, "the worst call's largest relative error", "max rel err"},
    {"rmse", Unit::kNumber, "the worst call's RMSE", "RMSE", true},
    {"small_value_err_ratio", Unit::kNumber, "the worst call's small-value error ratio", "small-value err", true},
    {"error_balance", Unit::kNumber, "the worst call's error balance (reported, not judged)", "balance", true},
    {"worst_index", Unit::kCount, "the element with the largest error in the worst call", "worst element"},
    {"npu_value", Unit::kNumber, "the NPU's value there", "npu"},
    {"golden_value", Unit::kNumber, "the f64 golden there", "golden"},
    {"task_id", Unit::kTaskId, "the worst call's TASK.task_id", "task", true},
};

}  // namespace

constexpr TableSpec kOpCheckSummaryTable{"op_check",
                                         "Online op check",
                                         "`npuscope run --check-ops`: kernel outputs judged against their CPU golden "
                                         "run in f64 (msprobe's API precision standards); null without a check.",
                                         kCheckSummaryColumns,
                                         Layout::kRecord,
                                         Section::kAlert};
constexpr TableSpec kFailingOpsTable{
    "op_check_failures",
    "Ops failing the online check",
    "Ops with an output beyond its standard, errors first, then by failing share (--top), each with its worst call "
    "and element.",
    kFailingOpColumns,
    Layout::kRows,
    Section::kAlert,
    "compare the op's inputs and its compute dtype (precision mode) with what the model needs; an op that fails "
    "in must_keep_origin_dtype has a kernel error: report it with the worst element"};

namespace {

struct OpChecks {
  std::int64_t calls = 0, failing_calls = 0;
  std::int64_t last_task = -1;
  bool last_failed = false;
  collector::OpCheckRow worst;
  bool has_worst = false;
};

// Errors before warnings, then the larger failing share.
bool worse(const collector::OpCheckRow& a, const collector::OpCheckRow& b) {
  if (a.status != b.status) return a.status > b.status;
  return a.failing_ratio > b.failing_ratio;
}

std::string name_of(std::int64_t value, bool standard) {
  if (standard) {
    const auto s = enum_from_value<OpCheckStandard>(value);
    return s ? std::string(enum_name(*s)) : "?";
  }
  const auto s = enum_from_value<CheckStatus>(value);
  return s ? std::string(enum_name(*s)) : "?";
}

void run_op_checks(RuleContext& c) {
  const std::vector<collector::OpCheckRow> checks = c.data.reader.rows<collector::OpCheckRow>();
  if (checks.empty()) return;
  std::unordered_map<std::int64_t, const Task*> tasks;
  for (const Task& t : c.data.kernels) tasks.emplace(t.task_id, &t);
  std::map<std::int32_t, OpChecks> by_name;  // op name id
  std::int64_t passed = 0, warnings = 0, errors = 0, task_count = 0, last_task = -1;
  for (const collector::OpCheckRow& r : checks) {
    const bool failed = !is(r.status, CheckStatus::kPass);
    passed += is(r.status, CheckStatus::kPass);
    warnings += is(r.status, CheckStatus::kWarning);
    errors += is(r.status, CheckStatus::kError);
    task_count += r.task_id != last_task;
    last_task = r.task_id;
    const auto t = tasks.find(r.task_id);
    if (t == tasks.end()) continue;
    OpChecks& o = by_name[t->second->name_id];
    if (o.last_task != r.task_id) {  // a call's first output
      ++o.calls;
      o.last_task = r.task_id;
      o.last_failed = false;
    }
    if (failed && !o.last_failed) {
      ++o.failing_calls;
      o.last_failed = true;
    }
    if (failed && (!o.has_worst || worse(r, o.worst))) {
      o.worst = r;
      o.has_worst = true;
    }
  }
  // Tasks the check should have judged (Note [Online op check]: an NPU kernel, not a fallback) and did not.
  std::unordered_set<std::int64_t> checked;
  for (const collector::OpCheckRow& r : checks) checked.insert(r.task_id);
  std::map<std::int32_t, std::int64_t> unchecked_by_type;
  std::int64_t unchecked = 0;
  for (const Task& t : c.data.kernels) {
    if (t.device_id < 0 || t.fallback != 0 || checked.count(t.task_id) > 0) continue;
    ++unchecked;
    ++unchecked_by_type[t.op_type_id];
  }
  std::vector<std::pair<std::int64_t, std::int32_t>> by_count;
  for (const auto& [type, n] : unchecked_by_type) by_count.emplace_back(-n, type);
  std::sort(by_count.begin(), by_count.end());
  std::string unchecked_types;
  for (std::size_t i = 0; i < by_count.size() && i < 5; ++i) {
    if (i > 0) unchecked_types += ", ";
    unchecked_types += c.data.str(by_count[i].second) + " x" + std::to_string(-by_count[i].first);
  }
  std::vector<std::pair<std::int32_t, const OpChecks*>> failing;
  for (const auto& [name, o] : by_name) {
    if (o.has_worst) failing.emplace_back(name, &o);
  }
  std::stable_sort(failing.begin(), failing.end(),
                   [](const auto& a, const auto& b) { return worse(a.second->worst, b.second->worst); });
  c.add(kOpCheckSummaryTable, {static_cast<std::int64_t>(checks.size()), task_count, passed, warnings, errors,
                               static_cast<std::int64_t>(failing.size()), unchecked,
                               unchecked_types.empty() ? Value() : Value(std::move(unchecked_types))});
  for (std::size_t i = 0; i < failing.size() && static_cast<int>(i) < std::max(c.top, 20); ++i) {
    const OpChecks& o = *failing[i].second;
    const collector::OpCheckRow& w = o.worst;
    const Task& task = *tasks.at(w.task_id);
    const std::string_view pass = c.data.pass_of(task);
    c.add(
        kFailingOpsTable,
        {c.data.str(failing[i].first), c.data.str(task.op_type_id), pass.empty() ? Value() : Value(std::string(pass)),
         name_of(w.standard, true), name_of(w.status, false), o.failing_calls, o.calls, w.failing_ratio, w.max_rel_err,
         w.rmse, w.small_value_err_ratio, w.error_balance, w.worst_index, w.npu_value, w.golden_value, w.task_id});
  }
}

constexpr const TableSpec* kOpCheckTables[] = {&kOpCheckSummaryTable, &kFailingOpsTable};

}  // namespace

extern const Rule kOpChecksRule{"op_checks",   "the online op check's failing ops (--check-ops)",
                                run_op_checks, kOpCheckTables,
                                false,         "the online op check of `npuscope run --check-ops`"};

}  // namespace npuscope::analyzer

// Training health: the dynamic loss scaler's skipped steps, with the op that overflowed first in
// each (LOSS_SCALE), and exploding or vanishing gradients with the layer where they start (GRADIENT,
// msprobe's grad_probe).
//
// Note [Gradient health]
// A step's gradients arrive in backward order: from the output layer towards the input. Each is
// judged unscaled (norm / loss_scale) against the other parameters of its step:
//  - vanishing: norm below 1e-5 of the step's largest, or every element exactly 0: the signal no
//    longer reaches the layers before it (a deep sigmoid stack loses ~4x per layer);
//  - exploding: norm at least 1000x the step's median and at least 1;
//  - non-finite: any NaN or Inf element (with loss scaling, the scaler skips such a step).
// Where it starts is the first parameter in backward order with the issue: the layers after it in
// that order (towards the input) are where the training stops learning. Consecutive steps with the
// same issue starting at the same parameter are one row.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "rules.h"

namespace npuscope::analyzer {
namespace {

constexpr double kVanishingRatio = 1e-5;
constexpr double kExplodingOverMedian = 1000;
constexpr double kExplodingFloor = 1;

// ---- loss scaling -------------------------------------------------------------------------------

constexpr Column kLossScaleSummaryColumns[] = {
    {"steps", Unit::kCount, "steps the loss scaler decided on"},
    {"skipped", Unit::kCount, "steps it skipped because the gradients overflowed"},
    {"first_scale", Unit::kFactor, "the scale of the first step", "first scale"},
    {"final_scale", Unit::kFactor, "the scale the run ended with", "final scale"},
};

constexpr Column kSkippedStepColumns[] = {
    {"step", Unit::kCount, "the skipped step"},
    {"scale", Unit::kFactor, "the loss scale it ran with"},
    {"next_scale", Unit::kFactor, "the scale after backing off", "next scale"},
    {"trigger_op", Unit::kOpName, "the first overflowing task of the step: the op that triggered the skip",
     "triggered by"},
    {"trigger_pass", Unit::kText, "the pass it ran in (forward, backward, optimizer)", "pass"},
    {"trigger_task_id", Unit::kTaskId, "its TASK.task_id", "task", true},
};

}  // namespace

constexpr TableSpec kLossScaleSummaryTable{"loss_scale",
                                           "Loss scaling",
                                           "The dynamic loss scaler's decisions (npuscope.torch.amp.GradScaler); "
                                           "null without loss scaling.",
                                           kLossScaleSummaryColumns,
                                           Layout::kRecord,
                                           Section::kAlert};
constexpr TableSpec kSkippedStepsTable{
    "skipped_steps",
    "Steps skipped by the loss scaler",
    "Each step whose gradients overflowed, with the op that overflowed first in it (the first 1000).",
    kSkippedStepColumns,
    Layout::kRows,
    Section::kAlert,
    "a few skipped steps at the start are the scaler finding its scale; many mean the scale is too large for the "
    "dtype (f16 max 65504): lower init_scale, or keep the triggering op in f32",
    {},
    10};

namespace {

const Task* first_overflow_in(const TraceData& data, const collector::MarkerRow& step) {
  for (const Task& t : data.kernels) {  // execution order
    if (t.overflow && t.queued_ns >= step.start_ns && t.queued_ns <= step.end_ns) return &t;
  }
  return nullptr;
}

void run_loss_scale(RuleContext& c) {
  const std::vector<collector::LossScaleRow> decisions = c.data.reader.rows<collector::LossScaleRow>();
  if (decisions.empty()) return;
  std::int64_t skipped = 0;
  for (const auto& d : decisions) {
    if (!d.skipped) continue;
    if (++skipped > 1000) continue;
    const auto step = std::find_if(c.data.steps.begin(), c.data.steps.end(),
                                   [&](const collector::MarkerRow& s) { return s.step == d.step; });
    const Task* trigger = step == c.data.steps.end() ? nullptr : first_overflow_in(c.data, *step);
    Row row = {d.step, d.scale, d.next_scale, Value(), Value(), Value()};
    if (trigger != nullptr) {
      row[3] = c.data.str(trigger->name_id);
      if (const std::string_view pass = c.data.pass_of(*trigger); !pass.empty()) row[4] = std::string(pass);
      row[5] = trigger->task_id;
    }
    c.add(kSkippedStepsTable, std::move(row));
  }
  c.add(kLossScaleSummaryTable,
        {static_cast<std::int64_t>(decisions.size()), skipped, decisions.front().scale, decisions.back().next_scale});
}

constexpr const TableSpec* kLossScaleTables[] = {&kLossScaleSummaryTable, &kSkippedStepsTable};

// ---- gradients ----------------------------------------------------------------------------------

constexpr Column kGradientColumns[] = {
    {"first_step", Unit::kCount, "the first step with the issue starting at this parameter", "from step"},
    {"last_step", Unit::kCount, "the last such step in a row", "to step"},
    {"issue", Unit::kText, "vanishing, exploding or non_finite (Note [Gradient health])"},
    {"param", Unit::kText, "where it starts: the first parameter with it in backward order (output to input)",
     "starts at"},
    {"norm", Unit::kNumber, "that parameter's unscaled gradient norm (first step)"},
    {"vs_step", Unit::kNumber,
     "its norm / the step's largest (vanishing) or median (exploding) norm, in the first step", "vs step"},
    {"affected", Unit::kCount, "parameters with the issue in the first step", "params affected"},
    {"params", Unit::kCount, "parameters probed in that step"},
};

}  // namespace

constexpr TableSpec kGradientIssuesTable{
    "gradient_issues",
    "Gradient issues (grad probe)",
    "Vanishing, exploding and non-finite gradients from `npuscope run --grad-probe`, with the parameter where each "
    "starts in backward order (Note [Gradient health] in analyzer/src/training.cpp).",
    kGradientColumns,
    Layout::kRows,
    Section::kAlert,
    "vanishing: the layers from there to the input barely learn (saturating activations such as sigmoid, too deep a "
    "stack, bad initialisation: try ReLU/GELU, residual connections, normalisation); exploding: clip the gradients "
    "or lower the learning rate"};

namespace {

struct Probe {
  std::int32_t param = 0;
  double norm = 0;  // unscaled
  bool dead = false, non_finite = false;
};

struct Issue {
  std::int64_t first_step = 0, last_step = 0;
  std::string issue;
  std::int32_t param = 0;
  double norm = 0, vs_step = 0;
  std::int64_t affected = 0, params = 0;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// The issues of one step's gradients, in backward order.
std::vector<Issue> step_issues(std::int64_t step, const std::vector<Probe>& probes) {
  double largest = 0;
  std::vector<double> norms;
  for (const Probe& p : probes) {
    if (p.non_finite) continue;
    largest = std::max(largest, p.norm);
    norms.push_back(p.norm);
  }
  const double mid = median(norms);
  std::vector<Issue> out;
  const auto judge = [&](const char* name, auto has, auto vs) {
    Issue issue{step, step, name, 0, 0, 0, 0, static_cast<std::int64_t>(probes.size())};
    for (const Probe& p : probes) {
      if (!has(p)) continue;
      if (issue.affected++ == 0) {
        issue.param = p.param;
        issue.norm = p.norm;
        issue.vs_step = vs(p);
      }
    }
    if (issue.affected > 0) out.push_back(issue);
  };
  judge(
      "non_finite", [](const Probe& p) { return p.non_finite; }, [](const Probe&) { return 0.0; });
  judge(
      "vanishing", [&](const Probe& p) { return !p.non_finite && (p.dead || p.norm < kVanishingRatio * largest); },
      [&](const Probe& p) { return largest > 0 ? p.norm / largest : 0.0; });
  judge(
      "exploding",
      [&](const Probe& p) {
        return !p.non_finite && p.norm >= kExplodingFloor && p.norm >= kExplodingOverMedian * mid;
      },
      [&](const Probe& p) { return mid > 0 ? p.norm / mid : 0.0; });
  return out;
}

void run_gradients(RuleContext& c) {
  std::map<std::int64_t, std::vector<Probe>> by_step;  // in arrival (backward) order within a step
  c.data.reader.for_each([&](const collector::GradientRow& g) {
    const double scale = g.loss_scale > 0 ? g.loss_scale : 1;
    by_step[g.step].push_back({collector::compact_string_id(g.param_id), g.norm / scale,
                               g.numel > 0 && g.zero_ratio >= 1.0, g.nan_count > 0 || g.inf_count > 0});
  });
  std::vector<Issue> rows;
  for (const auto& [step_key, probes] : by_step) {
    const std::int64_t step =
        step_key;  // a variable the lambda below can capture (clang < 16 cannot capture a binding)
    for (const Issue& issue : step_issues(step, probes)) {
      const auto same = std::find_if(rows.rbegin(), rows.rend(), [&](const Issue& r) {
        return r.issue == issue.issue && r.param == issue.param && r.last_step + 1 == step;
      });
      if (same != rows.rend()) {
        same->last_step = step;
      } else {
        rows.push_back(issue);
      }
    }
  }
  for (const Issue& r : rows) {
    c.add(kGradientIssuesTable,
          {r.first_step, r.last_step, r.issue, c.data.str(r.param), r.norm, r.vs_step, r.affected, r.params});
  }
}

constexpr const TableSpec* kGradientTables[] = {&kGradientIssuesTable};

}  // namespace

extern const Rule kLossScaleRule{"loss_scale",   "the loss scaler's skipped steps and the op that triggered each",
                                 run_loss_scale, kLossScaleTables,
                                 false,          "the loss scaler's decisions of `npuscope run`"};
extern const Rule kGradientsRule{"gradients",   "vanishing, exploding and non-finite gradients (grad probe)",
                                 run_gradients, kGradientTables,
                                 false,         "the grad probe of `npuscope run`"};

}  // namespace npuscope::analyzer

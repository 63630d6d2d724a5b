// The model's view of the device time, for PyTorch scripts (PYTORCH_API, Note [PyTorch observers] in
// pytorch/src/profiler_observers.cpp): per step (msprof-analyze's step_trace), per pass (forward,
// backward, optimizer), per module and per aten op. A task counts for the framework op that launched
// it: its pass, its module (the innermost module call it ran in) and the innermost aten op around it.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>

#include "rules.h"

namespace npuscope::analyzer {
namespace {

using collector::MarkerRow;

constexpr int kNumPasses = static_cast<int>(std::size(enum_values<ModelPass>()));

double percent(std::int64_t part, std::int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

// "Module.layer1.0.conv1.Conv2d.forward.3" -> "layer1.0.conv1.Conv2d": the module, whatever the call.
std::string module_of_entry(std::string_view entry) {
  if (entry.starts_with("Module.")) entry.remove_prefix(7);
  for (const std::string_view pass : {".forward.", ".backward."}) {
    const std::size_t at = entry.rfind(pass);
    if (at != std::string_view::npos) return std::string(entry.substr(0, at));
  }
  return std::string(entry);
}

// What a task is attributed to, through its framework op.
struct Attribution {
  int pass = -1;             // ModelPass value; -1: launched outside any framework op
  std::int32_t module = 0;   // the module entry's string id (0: none)
  std::int32_t aten_op = 0;  // the innermost aten op's name id (0: none)
};

Attribution attribute(const TraceData& data, const Task& t) {
  Attribution a;
  const HostOp* op = data.host_op(t.pytorch_api_id);
  if (op == nullptr) return a;
  a.pass = op->pass;
  a.module = op->module_id;
  for (int depth = 0; op != nullptr && depth < 64; ++depth, op = data.host_op(op->parent_id)) {
    if (is(op->kind, HostOpKind::kAtenOp)) {
      a.aten_op = op->name_id;
      break;
    }
  }
  return a;
}

// ---- steps ------------------------------------------------------------------------------------------

constexpr Column kStepColumns[] = {
    {"step", Unit::kCount,
     "the step number (npuscope.torch.step() or optimizer.step() boundaries, or the "
     "workload's own step markers)"},
    {"duration_ns", Unit::kNs, "host time from the step's start to its end", "duration"},
    {"tasks", Unit::kCount, "kernel tasks launched in the step"},
    {"computing_ns", Unit::kNs, "their device time (msprof-analyze's Computing)", "computing"},
    {"free_ns", Unit::kNs, "duration - computing, at least 0 (msprof-analyze's Free)", "free"},
    {"forward_ns", Unit::kNs, "device time of the forward pass", "forward"},
    {"backward_ns", Unit::kNs, "device time of the backward pass", "backward"},
    {"optimizer_ns", Unit::kNs, "device time of the optimizer", "optimizer"},
    {"vs_median", Unit::kFactor, "duration / the median step's duration", "vs median"},
};

}  // namespace

constexpr TableSpec kStepsTable{
    "steps", "Steps",
    "One row per step (msprof-analyze's step_trace): its host duration, the device time of the kernels launched "
    "in it, split by pass for PyTorch scripts. A step much slower than the median (vs median) is worth a look.",
    kStepColumns};

namespace {

void run_steps(RuleContext& c) {
  const std::vector<MarkerRow>& steps = c.data.steps;
  if (steps.empty()) return;
  struct Figures {
    std::int64_t tasks = 0, computing = 0;
    std::int64_t by_pass[kNumPasses] = {};
  };
  std::vector<Figures> figures(steps.size());
  for (const Task& t : c.data.kernels) {
    // The step it was launched in: the last one starting at or before its launch, if still open then.
    const auto after = std::upper_bound(steps.begin(), steps.end(), t.queued_ns,
                                        [](std::int64_t ns, const MarkerRow& s) { return ns < s.start_ns; });
    if (after == steps.begin()) continue;
    const auto step = std::prev(after);
    if (t.queued_ns > step->end_ns) continue;
    Figures& f = figures[static_cast<std::size_t>(step - steps.begin())];
    ++f.tasks;
    f.computing = add_ns(f.computing, duration(t));
    const int pass = attribute(c.data, t).pass;
    if (pass >= 0 && pass < kNumPasses) f.by_pass[pass] = add_ns(f.by_pass[pass], duration(t));
  }
  std::vector<std::int64_t> durations;
  for (const MarkerRow& s : steps) durations.push_back(s.end_ns - s.start_ns);
  std::vector<std::int64_t> sorted = durations;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2), sorted.end());
  const std::int64_t median = sorted[sorted.size() / 2];
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Figures& f = figures[i];
    const auto pass_ns = [&](ModelPass p) { return f.by_pass[static_cast<int>(p)]; };
    c.add(kStepsTable,
          {steps[i].step, durations[i], f.tasks, f.computing, std::max<std::int64_t>(0, durations[i] - f.computing),
           pass_ns(ModelPass::kForward), pass_ns(ModelPass::kBackward), pass_ns(ModelPass::kOptimizer),
           median > 0 ? Value(static_cast<double>(durations[i]) / static_cast<double>(median)) : Value()});
  }
}

constexpr const TableSpec* kStepsTables[] = {&kStepsTable};

// ---- passes, modules, aten ops -----------------------------------------------------------------------

constexpr Column kPassColumns[] = {
    {"pass", Unit::kText, "forward, backward, optimizer, or none (kernels launched outside any PyTorch op)"},
    {"tasks", Unit::kCount, "kernel tasks"},
    {"device_ns", Unit::kNs, "their device time", "device time"},
    {"ratio_pct", Unit::kPercent, "of all kernel time", "ratio"},
};

constexpr Column kModuleColumns[] = {
    {"module", Unit::kText, "the module: its attribute path and class, as msprobe names it (`layer1.0.conv1.Conv2d`)"},
    {"forward_ns", Unit::kNs, "device time of the kernels its forward calls launched themselves", "forward"},
    {"backward_ns", Unit::kNs, "device time of the kernels of its backward (autograd's functions of its ops)",
     "backward"},
    {"total_ns", Unit::kNs, "forward + backward", "total"},
    {"tasks", Unit::kCount, "kernel tasks"},
    {"ratio_pct", Unit::kPercent, "total / all kernel time", "ratio"},
    {"example_op", Unit::kOpName, "its costliest kernel's op", "costliest op"},
};

constexpr Column kAtenOpColumns[] = {
    {"aten_op", Unit::kText, "the aten op (the innermost one the kernels ran in)"},
    {"pass", Unit::kText, "forward, backward or optimizer"},
    {"calls", Unit::kCount, "its calls that launched kernels"},
    {"tasks", Unit::kCount, "their kernel tasks"},
    {"device_ns", Unit::kNs, "their device time", "device time"},
    {"avg_ns", Unit::kNs, "device time per call, to the nearest ns", "per call"},
    {"ratio_pct", Unit::kPercent, "of all kernel time", "ratio"},
};

}  // namespace

constexpr TableSpec kPassTable{"passes", "Time by pass (PyTorch)",
                               "Kernel time of a PyTorch script by the pass that launched it.", kPassColumns};
constexpr TableSpec kTopModulesTable{
    "top_modules",
    "Top modules (PyTorch, self time)",
    "Modules by the device time of the kernels launched in their own forward and backward (not their children's), "
    "costliest first (--top).",
    kModuleColumns,
    Layout::kRows,
    Section::kDetail,
    {},
    {},
    0};
constexpr TableSpec kAtenOpsTable{
    "aten_ops", "Aten op statistics (PyTorch)",
    "Device time per aten op and pass (the innermost aten op around each kernel: PyTorch profiler's self device "
    "time), costliest first (--top).",
    kAtenOpColumns};

namespace {

struct ModuleTime {
  std::int64_t by_pass[kNumPasses] = {};
  std::int64_t tasks = 0, longest = -1;
  std::int32_t example = 0;
};

struct AtenTime {
  std::int64_t tasks = 0, device = 0;
  std::unordered_map<std::int64_t, bool> calls;  // the host ops that launched its kernels
};

void run_model(RuleContext& c) {
  if (c.data.host_ops.empty()) return;  // not a PyTorch script (or profiled without the observers)
  std::int64_t total = 0, none_tasks = 0, none_ns = 0;
  std::int64_t pass_tasks[kNumPasses] = {}, pass_ns[kNumPasses] = {};
  std::map<std::string, ModuleTime> modules;
  std::map<std::pair<std::int32_t, int>, AtenTime> aten;
  std::unordered_map<std::int32_t, std::string> module_names;  // entry id -> module
  for (const Task& t : c.data.kernels) {
    const std::int64_t d = duration(t);
    total = add_ns(total, d);
    const Attribution a = attribute(c.data, t);
    if (a.pass < 0 || a.pass >= kNumPasses) {
      ++none_tasks;
      none_ns = add_ns(none_ns, d);
      continue;
    }
    ++pass_tasks[a.pass];
    pass_ns[a.pass] = add_ns(pass_ns[a.pass], d);
    if (a.module != 0) {
      auto [name, added] = module_names.try_emplace(a.module);
      if (added) name->second = module_of_entry(c.data.str(a.module));
      ModuleTime& m = modules[name->second];
      m.by_pass[a.pass] = add_ns(m.by_pass[a.pass], d);
      ++m.tasks;
      if (d > m.longest) {
        m.longest = d;
        m.example = t.name_id;
      }
    }
    if (a.aten_op != 0) {
      AtenTime& o = aten[{a.aten_op, a.pass}];
      ++o.tasks;
      o.device = add_ns(o.device, d);
      o.calls.emplace(t.pytorch_api_id, true);
    }
  }
  for (const auto& v : enum_values<ModelPass>()) {
    const int p = static_cast<int>(v.value);
    if (pass_tasks[p] > 0)
      c.add(kPassTable, {std::string(v.name), pass_tasks[p], pass_ns[p], percent(pass_ns[p], total)});
  }
  if (none_tasks > 0) c.add(kPassTable, {std::string("none"), none_tasks, none_ns, percent(none_ns, total)});

  std::vector<std::pair<std::string, ModuleTime>> by_time(modules.begin(), modules.end());
  const auto module_total = [](const ModuleTime& m) {
    return add_ns(m.by_pass[static_cast<int>(ModelPass::kForward)], m.by_pass[static_cast<int>(ModelPass::kBackward)]);
  };
  std::stable_sort(by_time.begin(), by_time.end(),
                   [&](const auto& a, const auto& b) { return module_total(a.second) > module_total(b.second); });
  for (std::size_t i = 0; i < by_time.size() && static_cast<int>(i) < c.top; ++i) {
    const ModuleTime& m = by_time[i].second;
    c.add(kTopModulesTable, {by_time[i].first, m.by_pass[static_cast<int>(ModelPass::kForward)],
                             m.by_pass[static_cast<int>(ModelPass::kBackward)], module_total(m), m.tasks,
                             percent(module_total(m), total), c.data.str(m.example)});
  }

  std::vector<std::pair<std::pair<std::int32_t, int>, const AtenTime*>> ops;
  for (const auto& [key, o] : aten) ops.emplace_back(key, &o);
  std::stable_sort(ops.begin(), ops.end(),
                   [](const auto& a, const auto& b) { return a.second->device > b.second->device; });
  for (std::size_t i = 0; i < ops.size() && static_cast<int>(i) < c.top; ++i) {
    const AtenTime& o = *ops[i].second;
    const auto calls = static_cast<std::int64_t>(o.calls.size());
    c.add(kAtenOpsTable,
          {c.data.str(ops[i].first.first), std::string(enum_name(static_cast<ModelPass>(ops[i].first.second))), calls,
           o.tasks, o.device,
           static_cast<std::int64_t>(std::llround(static_cast<double>(o.device) / static_cast<double>(calls))),
           percent(o.device, total)});
  }
}

constexpr const TableSpec* kModelTables[] = {&kPassTable, &kTopModulesTable, &kAtenOpsTable};

}  // namespace

extern const Rule kStepsRule{"steps", "per-step time (msprof-analyze's step_trace), by pass", run_steps, kStepsTables};
extern const Rule kModelRule{"model", "PyTorch scripts: device time by pass, module and aten op", run_model,
                             kModelTables};

}  // namespace npuscope::analyzer

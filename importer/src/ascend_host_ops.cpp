// See Note [Host op nesting] in ascend_host_ops.h.
#include "ascend_host_ops.h"

#include <algorithm>
#include <numeric>
#include <unordered_set>

#include "chrome_events.h"

namespace npuscope::importer {

HostOpKind host_op_kind(std::string_view cat, std::string_view name, bool has_module_id) {
  if (cat == "python_function") {
    return has_module_id || name.starts_with("nn.Module:") ? HostOpKind::kModule : HostOpKind::kPythonFunction;
  }
  if (name.starts_with("autograd::engine::evaluate_function")) return HostOpKind::kBackwardFunction;
  if (name.starts_with("Optimizer.")) return HostOpKind::kOptimizer;
  if (cat == "user_annotation" || name.find('#') != std::string_view::npos ||
      (name.find("::") == std::string_view::npos && name.find(' ') != std::string_view::npos)) {
    return HostOpKind::kUserScope;
  }
  return HostOpKind::kAtenOp;
}

std::int64_t step_number(std::string_view name) {
  constexpr std::string_view kStep = "ProfilerStep#";
  if (!name.starts_with(kStep)) return -1;
  const auto n = parse_int(name.substr(kStep.size()));
  return n && *n >= 0 ? *n : -1;
}

void HostOps::write(ImportSink& sink, std::int64_t offset_ns) {
  // Ids in start order over every thread (the longer op first on a tie: the parent).
  std::vector<std::uint32_t> order(ops_.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    const HostOp& x = ops_[a];
    const HostOp& y = ops_[b];
    return x.start_ns != y.start_ns ? x.start_ns < y.start_ns : x.end_ns > y.end_ns;
  });
  std::unordered_set<std::int32_t> autograd_threads;
  for (const HostOp& op : ops_) {
    if (op.kind == HostOpKind::kBackwardFunction) autograd_threads.insert(op.tid);
  }
  struct Derived {
    collector::StringId module_id;
    ModelPass pass;
  };
  std::vector<Derived> derived(ops_.size());
  struct OpenOp {
    std::uint32_t pos;     // in `order`
    std::int32_t in_list;  // in the thread's list
  };
  std::unordered_map<std::int32_t, std::vector<OpenOp>> stacks;  // the ops open on each thread
  threads_.clear();
  for (std::uint32_t pos = 0; pos < order.size(); ++pos) {
    const HostOp& op = ops_[order[pos]];
    auto& stack = stacks[op.tid];
    auto& list = threads_[op.tid];
    while (!stack.empty() && ops_[order[stack.back().pos]].end_ns <= op.start_ns) stack.pop_back();
    const std::int64_t parent_pos = stack.empty() ? std::int64_t{-1} : std::int64_t{stack.back().pos};
    const std::int32_t parent_in_list = stack.empty() ? -1 : stack.back().in_list;
    Derived d{0, autograd_threads.contains(op.tid) ? ModelPass::kBackward : ModelPass::kForward};
    if (parent_pos >= 0) d = derived[static_cast<std::size_t>(parent_pos)];
    const collector::StringId enclosing_module = d.module_id;
    if (op.kind == HostOpKind::kBackwardFunction) d.pass = ModelPass::kBackward;
    if (op.kind == HostOpKind::kOptimizer) d.pass = ModelPass::kOptimizer;
    if (op.kind == HostOpKind::kModule) d.module_id = op.name_id;
    derived[pos] = d;
    const std::int64_t id = static_cast<std::int64_t>(pos) + 1;
    stack.push_back({pos, static_cast<std::int32_t>(list.size())});
    list.push_back({op.start_ns, op.end_ns, id, parent_in_list});
    sink.add(collector::PytorchApiRow{.id = id,
                                      .start_ns = op.start_ns + offset_ns,
                                      .end_ns = op.end_ns + offset_ns,
                                      .thread_id = op.tid,
                                      .name_id = op.name_id,
                                      .kind = static_cast<std::int32_t>(op.kind),
                                      .pass = static_cast<std::int32_t>(d.pass),
                                      .module_id = enclosing_module,
                                      .sequence_number = op.sequence_number,
                                      .fwd_thread_id = op.fwd_tid != 0 ? op.fwd_tid : op.tid,
                                      .input_shapes_id = op.shapes_id,
                                      .input_dtypes_id = op.dtypes_id,
                                      .parent_id = parent_pos + 1,
                                      .stack_id = op.stack_id});
  }
  ops_.clear();
  ops_.shrink_to_fit();
}

std::int64_t HostOps::innermost(std::int32_t tid, std::int64_t ts_ns) const {
  const auto it = threads_.find(tid);
  if (it == threads_.end()) return 0;
  const std::vector<Open>& list = it->second;
  auto at =
      std::upper_bound(list.begin(), list.end(), ts_ns, [](std::int64_t t, const Open& o) { return t < o.start_ns; });
  if (at == list.begin()) return 0;
  std::int32_t i = static_cast<std::int32_t>(at - list.begin()) - 1;
  while (i >= 0) {
    const Open& o = list[static_cast<std::size_t>(i)];
    if (o.end_ns >= ts_ns) return o.id;
    i = o.parent;
  }
  return 0;
}

}  // namespace npuscope::importer

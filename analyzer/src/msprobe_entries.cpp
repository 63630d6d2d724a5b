// msprobe's entries from a trace without msprobe fragments: see Note [msprobe entries] in
// msprobe_entries.h.
#include "msprobe_groups.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace npuscope::analyzer::msprobe {
namespace {

using collector::PytorchApiRow;
using collector::TaskRow;
using collector::TensorRow;
using collector::TraceReader;
// One entry, its tensors as indexes into Entries::tensors.
struct Entry {
  std::string name;    // "Aten.addmm.0.forward", "Module.fc.Linear.backward.0"
  std::string parent;  // the module entry it ran in (construct.json); empty if none
  std::int64_t step = 0;
  bool is_module = false;
  std::int64_t first_task = 0;  // its first task: entries are in this order
  std::vector<std::size_t> inputs, outputs;
  std::vector<std::size_t> parameters;  // module forward entries: the parameters it read
};

struct Entries {
  std::vector<TensorRow> tensors;  // every TENSOR row, in the reader's order, without data
  std::vector<Entry> entries;      // ordered by step, then first task
  std::int64_t unattributed_tasks = 0;
  bool has_pytorch_ops = false;
};

constexpr std::int64_t kNone = -1;

bool is_output(const TensorRow& t) { return t.role == static_cast<std::int32_t>(TensorRole::kOutput); }

// "aten::addmm" -> "addmm"; another namespace keeps its name ("torchvision::nms" -> "torchvision_nms").
std::string api_name(const std::string& op) {
  if (op.rfind("aten::", 0) == 0) return op.substr(6);
  std::string out;
  std::size_t from = 0;
  for (std::size_t at = op.find("::"); at != std::string::npos; from = at + 2, at = op.find("::", from)) {
    out.append(op, from, at - from).push_back('_');
  }
  return out.append(op, from);
}

// "autograd::engine::evaluate_function: AddmmBackward0" -> "AddmmBackward0".
std::string node_name(const std::string& op) {
  const std::size_t colon = op.rfind(": ");
  return colon == std::string::npos ? op : op.substr(colon + 2);
}

struct TaskRef {
  std::int64_t task_id;
  std::size_t first_tensor, end_tensor;  // its TENSOR rows
};

struct Group {
  Entry entry;
  std::vector<TaskRef> tasks;
  std::int64_t forward_group = kNone;  // backward groups: the forward group whose saved tensors to leave out
  int depth = 0;                       // modules: how many module calls it ran in
};

class Builder {
 public:
  explicit Builder(const TraceReader& reader) : reader_(reader), steps_(reader) {}
  Entries build();

 private:
  void read_ops();
  void read_tensors();
  void number_roots();
  void match_nodes();
  void assign_task(const TaskRef& task, std::size_t op, std::int64_t step);
  void add_to(std::int64_t& group, const TaskRef& task, auto&& init);
  std::int64_t module_backward_group(std::int64_t step, const std::string& entry, std::int64_t forward_op);
  void resolve_tensors(Group& g);
  // Where the forward group's tensors live: address -> tensor.
  using AddressIndex = std::unordered_multimap<std::int64_t, std::size_t>;
  AddressIndex index_addresses(const Group& g) const;
  bool saved_by(const AddressIndex& forward, std::size_t tensor) const;
  bool next_read_in_backward(const TensorRow& written) const;
  bool is_parameter(const TensorRow& read) const;
  std::int64_t step_at(std::int64_t ns) const { return steps_.at(ns); }
  const std::string& name(std::size_t op) const { return reader_.string(ops_[op].name_id); }
  // The module call around op `op` (kNone if none): for a module call, the one it ran in.
  std::int64_t enclosing_module(std::int64_t op) const {
    const std::int64_t parent = parent_[static_cast<std::size_t>(op)];
    return parent == kNone ? kNone : module_[static_cast<std::size_t>(parent)];
  }
  // A forward module call's entry in the backward pass: "Module.fc.Linear.backward.0".
  std::string backward_entry(std::int64_t module) const {
    return other_pass(name(static_cast<std::size_t>(module)), ".forward.", ".backward.");
  }
  // How many module calls `module` ran in.
  int module_depth(std::int64_t module) const {
    int depth = 0;
    for (std::int64_t m = enclosing_module(module); m != kNone; m = enclosing_module(m)) ++depth;
    return depth;
  }

  const TraceReader& reader_;
  Entries out_;
  std::vector<PytorchApiRow> ops_;  // in start order
  std::unordered_map<std::int64_t, std::size_t> op_index_;
  // Per op: its parent op, the outermost aten op it is part of, the autograd node it ran in, the
  // innermost module call it ran in (kNone where there is none).
  std::vector<std::int64_t> parent_, root_, node_, module_;
  std::vector<std::int64_t> root_number_;  // roots: n of "Aten.{op}.{n}"
  std::vector<std::int64_t> node_root_;    // autograd nodes: the forward root that made it
  // Autograd nodes: the sequence number, forward thread and module entry of the node, taken from the
  // node's own range where the engine's evaluate_function range around it lacks them.
  std::vector<PytorchApiRow> node_info_;
  Steps steps_;
  // Tasks touching each buffer, by address: (task, a flag), sorted by task.
  using AccessIndex = std::unordered_map<std::int64_t, std::vector<std::pair<std::int64_t, bool>>>;
  // The flag of the first task after `task` in address's list (false if none).
  static bool next_flag(const AccessIndex& index, std::int64_t address, std::int64_t task);
  AccessIndex writers_;  // flag: the optimizer updating the buffer in place
  AccessIndex readers_;  // flag: the task ran in the backward pass
  std::unordered_map<std::int64_t, std::pair<std::size_t, std::size_t>> tensors_of_task_;
  // Groups, and the group of each op (roots: forward API; roots and nodes: backward API; modules).
  std::vector<Group> groups_;
  std::vector<std::int64_t> api_group_, backward_group_, module_group_;
  std::map<std::pair<std::int64_t, std::string>, std::int64_t> module_backward_;  // (step, name) -> group
  std::map<std::pair<std::int64_t, std::string>, std::size_t> module_call_;       // (step, forward name) -> op
};

void Builder::read_ops() {
  ops_ = reader_.rows<collector::PytorchApiRow>();
  out_.has_pytorch_ops = !ops_.empty();
  for (std::size_t i = 0; i < ops_.size(); ++i) op_index_.emplace(ops_[i].id, i);
  const std::size_t n = ops_.size();
  parent_.assign(n, kNone);
  root_.assign(n, kNone);
  node_.assign(n, kNone);
  module_.assign(n, kNone);
  for (std::size_t i = 0; i < n; ++i) {
    const auto p = op_index_.find(ops_[i].parent_id);
    if (p != op_index_.end() && p->second != i) parent_[i] = static_cast<std::int64_t>(p->second);
  }
  // Resolved parent first; a chain that loops (a damaged trace) is cut where it returns.
  std::vector<std::uint8_t> state(n, 0);  // 0 new, 1 resolving, 2 done
  std::vector<std::size_t> chain;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t at = i; state[at] == 0;) {
      state[at] = 1;
      chain.push_back(at);
      const std::int64_t p = parent_[at];
      if (p == kNone || state[static_cast<std::size_t>(p)] != 0) break;
      at = static_cast<std::size_t>(p);
    }
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const std::size_t at = *it;
      std::int64_t p = parent_[at];
      if (p != kNone && state[static_cast<std::size_t>(p)] != 2) p = parent_[at] = kNone;  // a loop
      const PytorchApiRow& op = ops_[at];
      const auto self = static_cast<std::int64_t>(at);
      const bool parent_is_aten = p != kNone && is(ops_[static_cast<std::size_t>(p)].kind, HostOpKind::kAtenOp);
      root_[at] =
          is(op.kind, HostOpKind::kAtenOp) ? (parent_is_aten ? root_[static_cast<std::size_t>(p)] : self) : kNone;
      node_[at] = is(op.kind, HostOpKind::kBackwardFunction) ? self
                  : p == kNone                               ? kNone
                                                             : node_[static_cast<std::size_t>(p)];
      module_[at] = is(op.kind, HostOpKind::kModule) ? self : p == kNone ? kNone : module_[static_cast<std::size_t>(p)];
      state[at] = 2;
    }
    chain.clear();
  }
  // The engine's "autograd::engine::evaluate_function: X" has no sequence number; the node's own
  // range "X" inside it has, and the tasks the engine runs around the node (summing the gradients it
  // passes on) belong to the same node.
  node_info_ = ops_;
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t p = parent_[i];
    if (!is(ops_[i].kind, HostOpKind::kBackwardFunction) || ops_[i].sequence_number < 0 || p == kNone) continue;
    PytorchApiRow& outer = node_info_[static_cast<std::size_t>(p)];
    if (!is(outer.kind, HostOpKind::kBackwardFunction) || outer.sequence_number >= 0) continue;
    outer.sequence_number = ops_[i].sequence_number;
    outer.fwd_thread_id = ops_[i].fwd_thread_id;
    if (outer.module_id == 0) outer.module_id = ops_[i].module_id;
  }
}

void Builder::read_tensors() {
  reader_.for_each([&](const TensorRow& t) {
    const std::size_t at = out_.tensors.size();
    out_.tensors.push_back(t);
    auto [it, added] = tensors_of_task_.try_emplace(t.task_id, at, at + 1);
    if (!added) it->second.second = at + 1;  // the reader returns a task's rows together
  });
}

// n of every outermost aten op: its calls of that name in its step, in start order, counted
// separately for the ops the backward pass ran outside any node.
void Builder::number_roots() {
  root_number_.assign(ops_.size(), 0);
  std::map<std::tuple<std::int64_t, bool, std::string>, std::int64_t> calls;
  for (std::size_t i = 0; i < ops_.size(); ++i) {
    if (root_[i] != static_cast<std::int64_t>(i) || node_[i] != kNone) continue;
    const bool backward = is(ops_[i].pass, ModelPass::kBackward);
    root_number_[i] = calls[{step_at(ops_[i].start_ns), backward, name(i)}]++;
  }
}

void Builder::match_nodes() {
  // Per forward thread, the outermost forward ops by (sequence number, start).
  std::unordered_map<std::int32_t, std::vector<std::tuple<std::int64_t, std::int64_t, std::size_t>>> roots;
  for (std::size_t i = 0; i < ops_.size(); ++i) {
    const PytorchApiRow& op = ops_[i];
    if (root_[i] == static_cast<std::int64_t>(i) && node_[i] == kNone && is(op.pass, ModelPass::kForward) &&
        op.sequence_number >= 0) {
      roots[op.thread_id].emplace_back(op.sequence_number, op.start_ns, i);
    }
  }
  for (auto& [thread, list] : roots) std::sort(list.begin(), list.end());
  node_root_.assign(ops_.size(), kNone);
  for (std::size_t i = 0; i < ops_.size(); ++i) {
    const PytorchApiRow& node = node_info_[i];
    if (!is(node.kind, HostOpKind::kBackwardFunction) || node.sequence_number < 0) continue;
    const auto list = roots.find(node.fwd_thread_id);
    if (list == roots.end()) continue;
    const auto after = std::upper_bound(list->second.begin(), list->second.end(),
                                        std::tuple{node.sequence_number, INT64_MAX, SIZE_MAX});
    if (after == list->second.begin()) continue;
    const std::size_t root = std::get<2>(*std::prev(after));
    if (ops_[root].start_ns <= node.start_ns) node_root_[i] = static_cast<std::int64_t>(root);
  }
}

void Builder::add_to(std::int64_t& group, const TaskRef& task, auto&& init) {
  if (group == kNone) {
    group = static_cast<std::int64_t>(groups_.size());
    groups_.emplace_back();
    init(groups_.back());
  }
  groups_[static_cast<std::size_t>(group)].tasks.push_back(task);
}

std::int64_t Builder::module_backward_group(std::int64_t step, const std::string& entry, std::int64_t forward_op) {
  auto [it, added] = module_backward_.try_emplace({step, entry}, kNone);
  if (added) {
    it->second = static_cast<std::int64_t>(groups_.size());
    Group& g = groups_.emplace_back();
    g.entry.name = entry;
    g.entry.step = step;
    g.entry.is_module = true;
    if (forward_op != kNone) {
      g.forward_group = module_group_[static_cast<std::size_t>(forward_op)];
      const std::int64_t up = enclosing_module(forward_op);
      if (up != kNone) g.entry.parent = backward_entry(up);
      g.depth = module_depth(forward_op);
    }
  }
  return it->second;
}

void Builder::assign_task(const TaskRef& task, std::size_t op, std::int64_t step) {
  const std::int64_t node = node_[op];
  if (node == kNone) {
    if (const std::int64_t root = root_[op]; root != kNone) {
      const auto r = static_cast<std::size_t>(root);
      add_to(api_group_[r], task, [&](Group& g) {
        const bool backward = is(ops_[r].pass, ModelPass::kBackward);
        g.entry.name =
            "Aten." + api_name(name(r)) + "." + std::to_string(root_number_[r]) + (backward ? ".backward" : ".forward");
        g.entry.step = step_at(ops_[r].start_ns);
        if (module_[r] != kNone) g.entry.parent = name(static_cast<std::size_t>(module_[r]));
      });
    }
    for (std::int64_t m = module_[op]; m != kNone;) {
      const auto mi = static_cast<std::size_t>(m);
      const std::int64_t up = enclosing_module(m);
      add_to(module_group_[mi], task, [&](Group& g) {
        g.entry.name = name(mi);
        g.entry.step = step_at(ops_[mi].start_ns);
        g.entry.is_module = true;
        if (up != kNone) g.entry.parent = name(static_cast<std::size_t>(up));
      });
      m = up;
    }
    return;
  }
  const auto n = static_cast<std::size_t>(node);
  const std::int64_t root = node_root_[n];
  if (root != kNone) {
    const auto r = static_cast<std::size_t>(root);
    add_to(backward_group_[r], task, [&](Group& g) {
      g.entry.name = "Aten." + api_name(name(r)) + "." + std::to_string(root_number_[r]) + ".backward";
      g.entry.step = step_at(ops_[r].start_ns);
      g.forward_group = api_group_[r];
      if (module_[r] != kNone) g.entry.parent = backward_entry(module_[r]);
    });
  } else {
    add_to(backward_group_[n], task, [&](Group& g) {
      g.entry.name = "Autograd." + node_name(name(n));  // numbered once every node is known
      g.entry.step = step;
      g.entry.parent = reader_.string(node_info_[n].module_id);
    });
  }
  // The node's module call and every module around it, in the backward pass.
  const std::string& module = reader_.string(node_info_[n].module_id);
  if (module.empty()) return;
  const auto call = module_call_.find({step, other_pass(module, ".backward.", ".forward.")});
  const std::int64_t forward = call == module_call_.end() ? kNone : static_cast<std::int64_t>(call->second);
  groups_[static_cast<std::size_t>(module_backward_group(step, module, forward))].tasks.push_back(task);
  if (forward == kNone) return;
  for (std::int64_t up = enclosing_module(forward); up != kNone; up = enclosing_module(up)) {
    groups_[static_cast<std::size_t>(module_backward_group(step, backward_entry(up), up))].tasks.push_back(task);
  }
}

Builder::AddressIndex Builder::index_addresses(const Group& g) const {
  AddressIndex index;
  for (const TaskRef& task : g.tasks) {
    for (std::size_t i = task.first_tensor; i < task.end_tensor; ++i) {
      if (out_.tensors[i].address != 0) index.emplace(out_.tensors[i].address, i);
    }
  }
  return index;
}

// A tensor of a backward group that its forward group had too, unchanged: a tensor autograd saved.
bool Builder::saved_by(const AddressIndex& forward, std::size_t tensor) const {
  const TensorRow& t = out_.tensors[tensor];
  const auto [first, last] = forward.equal_range(t.address);
  return std::any_of(first, last, [&](const auto& at) {
    const TensorRow& f = out_.tensors[at.second];
    return f.dtype == t.dtype && f.numel == t.numel && f.shape == t.shape && f.min == t.min && f.max == t.max &&
           f.mean == t.mean && f.l2norm == t.l2norm;
  });
}

// Whether the first task after the writer that reads `written`'s buffer ran in the backward pass: a
// tensor kept for the gradients (BatchNorm's saved mean, max pooling's indices), not a result the
// forward pass goes on with.
bool Builder::next_read_in_backward(const TensorRow& written) const {
  return next_flag(readers_, written.address, written.task_id);
}

// Whether the next write to the buffer `read` was read from is the optimizer updating it in place: a
// parameter. Not any buffer the optimizer ever wrote: after the backward pass an activation's freed
// buffer may be reused by one of the optimizer's temporaries.
bool Builder::is_parameter(const TensorRow& read) const { return next_flag(writers_, read.address, read.task_id); }

bool Builder::next_flag(const AccessIndex& index, std::int64_t address, std::int64_t task) {
  const auto list = index.find(address);
  if (list == index.end()) return false;
  const auto next = std::upper_bound(list->second.begin(), list->second.end(), std::pair{task, true});
  return next != list->second.end() && next->second;
}

void Builder::resolve_tensors(Group& g) {
  std::sort(g.tasks.begin(), g.tasks.end(), [](const TaskRef& a, const TaskRef& b) { return a.task_id < b.task_id; });
  g.tasks.erase(std::unique(g.tasks.begin(), g.tasks.end(),
                            [](const TaskRef& a, const TaskRef& b) { return a.task_id == b.task_id; }),
                g.tasks.end());
  Entry& e = g.entry;
  e.first_task = g.tasks.empty() ? 0 : g.tasks.front().task_id;
  const bool backward = g.forward_group != kNone;
  const AddressIndex forward =
      backward ? index_addresses(groups_[static_cast<std::size_t>(g.forward_group)]) : AddressIndex{};
  const bool module_forward = e.is_module && e.name.find(".forward.") != std::string::npos;
  struct Written {
    std::size_t tensor;
    bool read_after = false;
  };
  std::vector<Written> written;
  std::unordered_map<std::int64_t, std::size_t> last_write;  // address -> index in written
  std::unordered_set<std::int64_t> read;                     // addresses already taken as inputs
  for (const TaskRef& task : g.tasks) {
    for (std::size_t i = task.first_tensor; i < task.end_tensor; ++i) {
      const TensorRow& t = out_.tensors[i];
      if (is_output(t)) {
        if (t.address != 0) {
          auto [it, added] = last_write.try_emplace(t.address, written.size());
          if (!added) {
            written[it->second].read_after = true;  // overwritten: the group's result is the later write
            it->second = written.size();
          }
        }
        written.push_back({i});
        continue;
      }
      if (t.address != 0) {
        if (const auto w = last_write.find(t.address); w != last_write.end()) {
          written[w->second].read_after = true;
          continue;
        }
        if (!read.insert(t.address).second) continue;
      }
      if (backward && t.address != 0 && saved_by(forward, i)) continue;
      if (module_forward && t.address != 0 && is_parameter(t)) {
        e.parameters.push_back(i);
      } else {
        e.inputs.push_back(i);
      }
    }
  }
  for (const Written& w : written) {
    if (!w.read_after) e.outputs.push_back(w.tensor);
  }
  // A forward call's results, where it has any besides: not the buffers it updated in place
  // (BatchNorm's running statistics), not the tensors only its backward reads.
  if (backward || e.name.find(".forward") == std::string::npos) return;
  std::vector<std::size_t> results;
  for (const std::size_t i : e.outputs) {
    const TensorRow& t = out_.tensors[i];
    if (t.address == 0 || (read.count(t.address) == 0 && !next_read_in_backward(t))) results.push_back(i);
  }
  if (results.empty()) return;  // an in-place call (ReLU(inplace=True)): its result is its argument
  e.outputs = std::move(results);
  if (!e.is_module) return;
  // A module's buffers (what it updates in place and does not return) are not its arguments.
  std::erase_if(e.inputs, [&](std::size_t i) { return last_write.count(out_.tensors[i].address) > 0; });
}

Entries Builder::build() {
  read_ops();
  if (ops_.empty()) return std::move(out_);
  read_tensors();
  number_roots();
  match_nodes();
  for (std::size_t i = 0; i < ops_.size(); ++i) {
    if (is(ops_[i].kind, HostOpKind::kModule)) module_call_[{step_at(ops_[i].start_ns), name(i)}] = i;
  }
  api_group_.assign(ops_.size(), kNone);
  backward_group_.assign(ops_.size(), kNone);
  module_group_.assign(ops_.size(), kNone);
  std::vector<std::pair<TaskRef, std::size_t>> tasks;
  reader_.for_each([&](const TaskRow& t) {
    const auto tensors = tensors_of_task_.find(t.task_id);
    if (tensors == tensors_of_task_.end()) return;
    const auto op = op_index_.find(t.pytorch_api_id);
    if (op == op_index_.end()) {
      ++out_.unattributed_tasks;
      return;
    }
    tasks.emplace_back(TaskRef{t.task_id, tensors->second.first, tensors->second.second}, op->second);
  });
  for (const auto& [task, op] : tasks) {
    const bool optimizer = is(ops_[op].pass, ModelPass::kOptimizer);
    for (std::size_t i = task.first_tensor; i < task.end_tensor; ++i) {
      const TensorRow& row = out_.tensors[i];
      if (row.address == 0) continue;
      if (!is_output(row)) {
        readers_[row.address].emplace_back(task.task_id, node_[op] != kNone);
        continue;
      }
      const bool in_place =
          optimizer && std::any_of(out_.tensors.begin() + static_cast<std::ptrdiff_t>(task.first_tensor),
                                   out_.tensors.begin() + static_cast<std::ptrdiff_t>(i),
                                   [&](const TensorRow& in) { return in.address == row.address; });
      writers_[row.address].emplace_back(task.task_id, in_place);
    }
  }
  for (auto* index : {&readers_, &writers_}) {
    for (auto& [address, list] : *index) std::sort(list.begin(), list.end());
  }
  // Forward groups first: a backward module group finds its forward group's tensors.
  std::stable_partition(tasks.begin(), tasks.end(), [&](const auto& t) { return node_[t.second] == kNone; });
  for (const auto& [task, op] : tasks) assign_task(task, op, step_at(ops_[op].start_ns));
  for (Group& g : groups_) resolve_tensors(g);
  // Autograd nodes no forward op claims: numbered in their step by first task.
  std::vector<Group*> order;
  for (Group& g : groups_) order.push_back(&g);
  std::sort(order.begin(), order.end(), [](const Group* a, const Group* b) {
    return std::tuple{a->entry.step, a->entry.first_task, !a->entry.is_module, a->depth} <
           std::tuple{b->entry.step, b->entry.first_task, !b->entry.is_module, b->depth};
  });
  std::map<std::pair<std::int64_t, std::string>, std::int64_t> node_calls;
  for (Group* g : order) {
    Entry& e = g->entry;
    if (e.name.rfind("Autograd.", 0) == 0) {
      const std::int64_t call = node_calls[{e.step, e.name}]++;
      e.name.append(1, '.').append(std::to_string(call)).append(".backward");
    }
    if (e.inputs.empty() && e.outputs.empty() && e.parameters.empty()) continue;
    out_.entries.push_back(std::move(e));
  }
  return std::move(out_);
}

// The entries with their values: inputs "input.k", outputs "output.k", parameters "parameters.k".
TraceEntries to_trace_entries(Entries&& built) {
  TraceEntries out;
  out.has_pytorch_ops = built.has_pytorch_ops;
  out.has_tensors = !built.tensors.empty();
  for (const TensorRow& t : built.tensors) out.has_data = out.has_data || t.data_bytes > 0;
  for (Entry& e : built.entries) {
    StepEntry& s = out.entries.emplace_back();
    s.step = e.step;
    s.entry.name = std::move(e.name);
    s.entry.parent = std::move(e.parent);
    const auto add = [&](const std::vector<std::size_t>& list, const char* role) {
      for (std::size_t k = 0; k < list.size(); ++k) {
        const TensorRow& t = built.tensors[list[k]];
        s.entry.values.push_back(tensor_value(std::string(role) + "." + std::to_string(k), &t));
        s.sources.push_back({t.task_id, t.role, t.idx});
      }
    };
    add(e.inputs, "input");
    add(e.outputs, "output");
    add(e.parameters, "parameters");
  }
  if (built.unattributed_tasks > 0) {
    out.notes.push_back(std::to_string(built.unattributed_tasks) +
                        " tasks with tensors that no PyTorch op launched (in no entry)");
  }
  return out;
}

}  // namespace

TraceEntries aten_entries(const TraceReader& reader) { return to_trace_entries(Builder(reader).build()); }

}  // namespace npuscope::analyzer::msprobe

// msprobe's entries from a trace's msprobe fragments: see Note [msprobe dumps from a trace] in
// msprobe_entries.h.
#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>

#include "msprobe_groups.h"

namespace npuscope::analyzer::msprobe {
namespace {

using collector::DumpValue;
using collector::PytorchApiRow;
using collector::TensorRow;
using collector::TraceReader;
using Json = nlohmann::ordered_json;

constexpr std::int64_t kNone = -1;
constexpr int kScan = 64;  // rows of one address looked at for a tensor of another dtype or size

bool ends_with(const std::string& s, std::string_view tail) { return std::string_view(s).ends_with(tail); }

// Where a fragment's tensor is looked for: a call's argument, as the call found it (tasks from `from`
// on: the call's and later ones); a call's result, as it left it (its tasks: from `from` to `to`); a
// gradient hook's tensor, as the backward pass had made it (before `from`).
struct Where {
  enum Kind { kArgument, kResult, kHook } kind;
  std::int64_t from, to;
};

class FragmentBuilder {
 public:
  explicit FragmentBuilder(const TraceReader& reader) : reader_(reader), steps_(reader) {}
  TraceEntries build();

 private:
  void read_ops();
  void read_tasks();
  void read_tensors();
  std::vector<std::size_t> fragments_in_order() const;
  std::int64_t first_task_from(std::int64_t op_id) const;
  const TensorRow* find(std::int64_t address, std::optional<DType> dtype, std::int64_t numel, Where where) const;
  void add(const Json& j, const std::string& slot, Where where, StepEntry& e);
  void add_leaf(const Json& j, const std::string& slot, Where where, StepEntry& e);
  void add_fragment(std::size_t op, StepEntry& e);
  void add_arguments(const Json& args, std::size_t op, StepEntry& e);
  std::string parent_of(std::size_t op, std::int64_t step) const;
  const std::string& name(std::size_t op) const { return reader_.string(ops_[op].name_id); }
  bool is_fragment(std::size_t op) const {
    return ops_[op].args_id != 0 && (is(ops_[op].kind, HostOpKind::kApi) || is(ops_[op].kind, HostOpKind::kModule));
  }

  const TraceReader& reader_;
  Steps steps_;
  std::vector<PytorchApiRow> ops_;
  std::vector<std::int64_t> parent_;     // index of the op it ran in; kNone
  std::vector<std::int64_t> last_task_;  // fragments: the last task launched inside; kNone
  std::unordered_map<std::int64_t, std::size_t> op_index_;
  std::vector<std::pair<std::int64_t, std::int64_t>> launches_;  // (op id, task id) by op id
  std::vector<std::int64_t> first_task_after_;                   // suffix minimum of launches_' task ids
  std::vector<TensorRow> rows_;
  std::unordered_map<std::int64_t, std::vector<std::size_t>> by_address_;  // rows, by task
  std::map<std::pair<std::int64_t, std::string>, std::string> forward_parent_;
  std::int64_t without_stats_ = 0, not_dumped_ = 0, bad_args_ = 0;
  bool has_data_ = false;
};

void FragmentBuilder::read_ops() {
  ops_ = reader_.rows<PytorchApiRow>();
  for (std::size_t i = 0; i < ops_.size(); ++i) op_index_.emplace(ops_[i].id, i);
  parent_.assign(ops_.size(), kNone);
  for (std::size_t i = 0; i < ops_.size(); ++i) {
    const auto p = op_index_.find(ops_[i].parent_id);
    if (p != op_index_.end() && p->second != i) parent_[i] = static_cast<std::int64_t>(p->second);
  }
}

void FragmentBuilder::read_tasks() {
  last_task_.assign(ops_.size(), kNone);
  reader_.for_each([&](const collector::TaskRow& t) {
    if (t.pytorch_api_id == 0) return;
    launches_.emplace_back(t.pytorch_api_id, t.task_id);
    const auto op = op_index_.find(t.pytorch_api_id);
    if (op == op_index_.end()) return;
    // The fragments around the launching op (a damaged trace's loop ends after as many steps as ops).
    std::int64_t at = static_cast<std::int64_t>(op->second);
    for (std::size_t guard = 0; at != kNone && guard <= ops_.size(); ++guard) {
      const auto i = static_cast<std::size_t>(at);
      if (is_fragment(i)) last_task_[i] = std::max(last_task_[i], t.task_id);
      at = parent_[i];
    }
  });
  std::sort(launches_.begin(), launches_.end());
  first_task_after_.assign(launches_.size(), INT64_MAX);
  std::int64_t least = INT64_MAX;
  for (std::size_t i = launches_.size(); i-- > 0;) first_task_after_[i] = least = std::min(least, launches_[i].second);
}

void FragmentBuilder::read_tensors() {
  reader_.for_each([&](const TensorRow& t) {
    has_data_ = has_data_ || t.data_bytes > 0;
    if (t.address == 0) return;
    by_address_[t.address].push_back(rows_.size());
    rows_.push_back(t);
  });
  for (auto& [address, list] : by_address_) {
    std::stable_sort(list.begin(), list.end(),
                     [&](std::size_t a, std::size_t b) { return rows_[a].task_id < rows_[b].task_id; });
  }
}

// The first task launched by an op that began at or after op `op_id` (ops are numbered as they begin).
std::int64_t FragmentBuilder::first_task_from(std::int64_t op_id) const {
  const auto at = std::lower_bound(launches_.begin(), launches_.end(), std::pair{op_id, INT64_MIN});
  return at == launches_.end() ? INT64_MAX : first_task_after_[static_cast<std::size_t>(at - launches_.begin())];
}

// The TENSOR row of the tensor at `address` (of `dtype`, `numel` elements) where `where` says. Not every
// write has a row (a copy from the host has none, and a freed buffer is reused): a call's argument is
// what the first task from the call on read, unless that task wrote it first; a result what the call
// wrote, else what the next task read; either, failing those, the last row before the call.
const TensorRow* FragmentBuilder::find(std::int64_t address, std::optional<DType> dtype, std::int64_t numel,
                                       Where where) const {
  const auto list = by_address_.find(address);
  if (list == by_address_.end()) return nullptr;
  const std::vector<std::size_t>& rows = list->second;
  const auto same = [&](const TensorRow& t) {
    return t.numel == numel && (!dtype || t.dtype == static_cast<std::int32_t>(*dtype));
  };
  const auto at = [&](std::int64_t task) {
    return std::partition_point(rows.begin(), rows.end(), [&](std::size_t r) { return rows_[r].task_id < task; });
  };
  const auto last_before = [&](std::int64_t task, std::int64_t not_before) -> const TensorRow* {
    int scanned = 0;
    for (auto it = at(task); it != rows.begin() && scanned++ < kScan;) {
      const TensorRow& t = rows_[*--it];
      if (t.task_id < not_before) return nullptr;
      if (same(t)) return &t;
    }
    return nullptr;
  };
  const auto next_read = [&](std::int64_t task) -> const TensorRow* {  // the next access, if a read
    const auto it = at(task);
    if (it == rows.end()) return nullptr;
    const TensorRow& t = rows_[*it];
    return t.role == static_cast<std::int32_t>(TensorRole::kInput) && same(t) ? &t : nullptr;
  };
  const TensorRow* found = nullptr;
  switch (where.kind) {
    case Where::kArgument: found = next_read(where.from); break;
    case Where::kResult:
      found = last_before(where.to, where.from);
      if (found == nullptr) found = next_read(where.to);
      break;
    case Where::kHook:
      found = last_before(where.from, INT64_MIN);
      return found != nullptr ? found : next_read(where.from);
  }
  return found != nullptr ? found : last_before(where.from, INT64_MIN);
}

// The elements of the buffer a view spans when it repeats each of them alike (an expand: dimensions of
// stride 0 over a buffer its other dimensions cover once, as the gradient of a sum is), else its own
// element count. Such a view has its buffer's maximum, minimum and mean, and its norm times
// sqrt(numel / buffer).
std::int64_t broadcast_buffer(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& strides,
                              std::int64_t numel) {
  if (strides.size() != shape.size() || numel <= 0) return numel;
  std::int64_t span = 1, distinct = 1;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (strides[d] < 0) return numel;
    span += (shape[d] - 1) * strides[d];
    if (strides[d] != 0) distinct *= shape[d];
  }
  return distinct < numel && distinct == span ? span : numel;
}

void FragmentBuilder::add_leaf(const Json& j, const std::string& slot, Where where, StepEntry& e) {
  DumpValue v;
  v.slot = slot;
  v.type = j["type"].get<std::string>();
  TensorSource source;
  if (v.type != "torch.Tensor") {
    v.value = j.contains("value") ? j["value"].dump() : "null";
  } else {
    v.is_tensor = true;
    v.dtype = j.value("dtype", "");
    const std::optional<DType> dtype = collector::msprobe_dtype(v.dtype);
    v.dtype_id = dtype ? static_cast<std::int32_t>(*dtype) : -1;
    std::int64_t numel = 1;
    for (const Json& d : j.value("shape", Json::array())) {
      v.shape.push_back(d.get<std::int64_t>());
      numel *= v.shape.back();
    }
    v.requires_grad = j.contains("requires_grad") ? (j["requires_grad"].get<bool>() ? 1 : 0) : -1;
    const std::int64_t address = j.value("address", std::int64_t{0});
    std::vector<std::int64_t> strides;
    for (const Json& d : j.value("stride", Json::array())) strides.push_back(d.get<std::int64_t>());
    const std::int64_t buffer = broadcast_buffer(v.shape, strides, numel);
    const TensorRow* row = address == 0 ? nullptr : find(address, dtype, buffer, where);
    if (row != nullptr) {
      const DumpValue stats = tensor_value(slot, row);
      v.has_stats = true;
      v.max = stats.max;
      v.min = stats.min;
      v.mean = stats.mean;
      v.norm = buffer == numel ? stats.norm : stats.norm * std::sqrt(static_cast<double>(numel) / buffer);
      source = {row->task_id, row->role, row->idx, v.shape, std::move(strides)};
    } else {
      ++without_stats_;
    }
  }
  // A later fragment of the entry fills what an earlier one left null (a module's gradients).
  const auto same_slot =
      std::find_if(e.entry.values.begin(), e.entry.values.end(), [&](const DumpValue& x) { return x.slot == slot; });
  if (same_slot == e.entry.values.end()) {
    e.entry.values.push_back(std::move(v));
    e.sources.push_back(source);
  } else if (!same_slot->is_tensor && same_slot->type.empty()) {
    e.sources[static_cast<std::size_t>(same_slot - e.entry.values.begin())] = source;
    *same_slot = std::move(v);
  }
}

// msprobe's compare names the values by their path: "input.3.1" (a list's item), "input.dim" (a
// keyword), a null one ("input.2": an absent optional argument) a value of no type.
void FragmentBuilder::add(const Json& j, const std::string& slot, Where where, StepEntry& e) {
  if (j.is_null()) {
    const bool known =
        std::any_of(e.entry.values.begin(), e.entry.values.end(), [&](const DumpValue& x) { return x.slot == slot; });
    if (!known) {
      e.entry.values.push_back({.slot = slot, .value = "null"});
      e.sources.push_back({});
    }
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) add(j[i], slot + "." + std::to_string(i), where, e);
  } else if (j.is_object() && j.contains("type") && j["type"].is_string()) {
    add_leaf(j, slot, where, e);
  } else if (j.is_object()) {
    for (const auto& [key, value] : j.items()) add(value, slot + "." + key, where, e);
  }
}

// A call's arguments as it found them, its results as it left them; a gradient hook's tensors (a
// fragment of no length) as the backward pass had made them.
void FragmentBuilder::add_fragment(std::size_t op, StepEntry& e) {
  Json args = Json::parse(reader_.string(ops_[op].args_id), nullptr, false);
  if (!args.is_object()) {
    ++bad_args_;
    return;
  }
  try {
    add_arguments(args, op, e);
  } catch (const nlohmann::json::exception&) {  // a damaged trace: a member of another type
    ++bad_args_;
  }
  if (e.stack.empty()) e.stack = reader_.string(ops_[op].stack_id);
}

void FragmentBuilder::add_arguments(const Json& args, std::size_t op, StepEntry& e) {
  const std::int64_t before = first_task_from(ops_[op].id);
  const std::int64_t after = last_task_[op] == kNone ? before : last_task_[op] + 1;
  const std::string& name = e.entry.name;
  const bool params_grad = name.find(".parameters_grad.") != std::string::npos;
  const bool hook = params_grad || ends_with(name, ".backward") || name.find(".backward.") != std::string::npos;
  for (const auto& [key, value] : args.items()) {
    if (key == "is_recompute") {  // Note [msprobe recompute] in npuscope/_msprobe.py
      e.entry.is_recompute = e.entry.is_recompute || (value.is_boolean() && value.get<bool>());
      continue;
    }
    if (params_grad) {
      for (const Json& grad : value.is_array() ? value : Json::array({value})) {
        add(grad, key, {Where::kHook, before, before}, e);
      }
      continue;
    }
    const std::string section = key == "input_args" || key == "input_kwargs" ? "input" : key;
    const Where where = hook              ? Where{Where::kHook, before, before}
                        : key == "output" ? Where{Where::kResult, before, after}
                                          : Where{Where::kArgument, before, before};
    add(value, section, where, e);
  }
}

std::string FragmentBuilder::parent_of(std::size_t op, std::int64_t step) const {
  const std::string& entry = name(op);
  if (is(ops_[op].kind, HostOpKind::kModule)) {
    for (std::int64_t p = parent_[op]; p != kNone; p = parent_[static_cast<std::size_t>(p)]) {
      if (is(ops_[static_cast<std::size_t>(p)].kind, HostOpKind::kModule)) return name(static_cast<std::size_t>(p));
    }
    return {};
  }
  if (ends_with(entry, ".forward")) return reader_.string(ops_[op].module_id);
  std::string forward;
  if (ends_with(entry, ".backward")) forward = entry.substr(0, entry.size() - 9) + ".forward";
  if (entry.rfind("Module.", 0) == 0) forward = other_pass(entry, ".backward.", ".forward.");
  const auto it = forward_parent_.find({step, forward});
  return it == forward_parent_.end() ? std::string() : other_pass(it->second, ".forward.", ".backward.");
}

// Fragments in the order msprobe writes entries: as their calls end (an API inside a module first;
// of two ending at one time, the inner, else the earlier: a post-order walk of the ops).
std::vector<std::size_t> FragmentBuilder::fragments_in_order() const {
  std::vector<std::vector<std::size_t>> children(ops_.size() + 1);  // the last: the roots
  for (std::size_t i = 0; i < ops_.size(); ++i) {
    children[parent_[i] == kNone ? ops_.size() : static_cast<std::size_t>(parent_[i])].push_back(i);
  }
  std::vector<std::size_t> post(ops_.size(), 0);
  std::size_t next = 0;
  std::vector<std::pair<std::size_t, std::size_t>> stack{{ops_.size(), 0}};  // (op, next child)
  std::vector<std::uint8_t> seen(ops_.size(), 0);
  while (!stack.empty()) {
    auto& [op, child] = stack.back();
    if (child < children[op].size()) {
      const std::size_t c = children[op][child++];
      if (!seen[c]) {  // a damaged trace's loop is walked once
        seen[c] = 1;
        stack.emplace_back(c, 0);
      }
      continue;
    }
    if (op < ops_.size()) post[op] = next++;
    stack.pop_back();
  }
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < ops_.size(); ++i) {
    if (is_fragment(i)) out.push_back(i);
  }
  std::sort(out.begin(), out.end(), [&](std::size_t a, std::size_t b) {
    return std::pair{ops_[a].end_ns, post[a]} < std::pair{ops_[b].end_ns, post[b]};
  });
  return out;
}

TraceEntries FragmentBuilder::build() {
  TraceEntries out;
  read_ops();
  out.has_pytorch_ops = !ops_.empty();
  read_tasks();
  read_tensors();
  out.has_tensors = !rows_.empty();
  out.has_data = has_data_;
  for (std::size_t i = 0; i < ops_.size(); ++i) {
    if (is(ops_[i].kind, HostOpKind::kApi) && ops_[i].args_id == 0) ++not_dumped_;
  }
  std::map<std::pair<std::int64_t, std::string>, std::size_t> index;  // (step, entry) -> in out.entries
  for (const std::size_t op : fragments_in_order()) {
    const std::int64_t step = steps_.at(ops_[op].start_ns);
    const std::string& entry = name(op);
    auto [it, added] = index.try_emplace({step, entry}, out.entries.size());
    if (added) {
      StepEntry& e = out.entries.emplace_back();
      e.step = step;
      e.entry.name = entry;
      if (entry.find(".parameters_grad.") == std::string::npos) e.entry.parent = parent_of(op, step);
      if (ends_with(entry, ".forward") || entry.find(".forward.") != std::string::npos) {
        forward_parent_[{step, entry}] = e.entry.parent;
      }
    }
    add_fragment(op, out.entries[it->second]);
  }
  std::stable_sort(out.entries.begin(), out.entries.end(),
                   [](const StepEntry& a, const StepEntry& b) { return a.step < b.step; });
  if (not_dumped_ > 0) {
    out.notes.push_back(std::to_string(not_dumped_) +
                        " API calls counted but not dumped (msprobe's risk_level FOCUS: views, conversions, "
                        "factories)");
  }
  if (without_stats_ > 0) {
    out.notes.push_back(std::to_string(without_stats_) +
                        " tensors without statistics (on the CPU, or no kernel read or wrote them)");
  }
  if (bad_args_ > 0) out.notes.push_back(std::to_string(bad_args_) + " fragments with unreadable arguments");
  return out;
}

}  // namespace

TraceEntries fragment_entries(const TraceReader& reader) { return FragmentBuilder(reader).build(); }

}  // namespace npuscope::analyzer::msprobe

// The per-op tables of a diff. Each groups the ops by a key shared by both sides (KeySpace) in one
// pass per side and sorts its rows by the time they add, most first (ties by name): msprof-analyze
// sorts OperatorCompareStatistic that way, and leaves KernelCompare and ApiCompare unsorted, which
// hides the regression in a long table.
#include <algorithm>
#include <limits>
#include <numeric>
#include <unordered_map>

#include "diff_op_tables.h"
#include "diff_tables.h"

namespace npuscope::analyzer {
namespace {

Value avg(const Tally& t) { return t.count > 0 ? Value(t.total / t.count) : Value(); }
Value max_of(const Tally& t) { return t.count > 0 ? Value(t.max) : Value(); }
Value min_of(const Tally& t) { return t.count > 0 ? Value(t.min) : Value(); }

struct BothSides {
  Tally base, next;
  std::int64_t diff() const { return next.total - base.total; }
};

// The cells of diff_tables.cpp's shared columns: BASE's and NEW's totals, diff and ratio; calls
// and average calls.
Row& append_totals(Row& row, const BothSides& s) {
  row.insert(row.end(), {s.base.total, s.next.total, s.diff(), diff_ratio(s.base.total, s.next.total)});
  return row;
}
Row& append_calls(Row& row, const BothSides& s) {
  row.insert(row.end(), {s.base.count, s.next.count, avg(s.base), avg(s.next)});
  return row;
}

// Sorts rows by the time they add, most first, then by `name`; adds them to a table of `spec`.
template <class Item, class Name, class Cells>
Table sorted_table(const TableSpec& spec, std::vector<Item>& items, Name name, Cells cells) {
  std::sort(items.begin(), items.end(), [&](const Item& a, const Item& b) {
    if (a.diff() != b.diff()) return a.diff() > b.diff();
    return name(a) < name(b);
  });
  Table t{&spec, {}};
  t.rows.reserve(items.size());
  for (const Item& item : items) t.add(cells(item));
  return t;
}

// One row of the ops table: the calls of one op, paired or not.
struct OpGroup : BothSides {
  std::int32_t base_name = 0, new_name = 0, type = 0;
  std::int64_t by[std::size(enum_values<PairingStage>())] = {}, added = 0, removed = 0;
  std::int32_t base_unit = -1, new_unit = -1;      // TaskType; -2 mixed
  std::int32_t base_shapes = -1, new_shapes = -1;  // of the first call
  std::int64_t worst = std::numeric_limits<std::int64_t>::min(), worst_new_task = 0, worst_base_task = 0;

  void add_base(const DiffOp& op) {
    base.add(op.dur_ns);
    note_unit(base_unit, op.task_type);
    if (base_shapes < 0) base_shapes = op.keys.shapes;
  }
  void add_new(const DiffOp& op) {
    next.add(op.dur_ns);
    note_unit(new_unit, op.task_type);
    if (new_shapes < 0) new_shapes = op.keys.shapes;
    type = op.keys.type;
  }
  std::int64_t pairs() const { return std::accumulate(std::begin(by), std::end(by), std::int64_t{0}); }
  static void note_unit(std::int32_t& unit, std::int32_t task_type) {
    unit = unit == -1 || unit == task_type ? task_type : -2;
  }
};

std::string unit_text(std::int32_t unit) { return unit == -2 ? "mixed" : collector::task_type_name(unit); }

// "name", "type+shape (+2 added)", "added", ...: how most of the group's calls were paired.
std::string match_text(const OpGroup& g) {
  if (g.pairs() == 0) return g.added > 0 ? "added" : "removed";
  const auto most = std::max_element(std::begin(g.by), std::end(g.by)) - std::begin(g.by);
  std::string out(enum_name(static_cast<PairingStage>(most)));
  if (g.added > 0) out += " (+" + std::to_string(g.added) + " added)";
  if (g.removed > 0) out += " (+" + std::to_string(g.removed) + " removed)";
  return out;
}

Value unit_cell(const Tally& t, std::int32_t unit) { return t.count > 0 ? Value(unit_text(unit)) : Value(); }

// "was fc1; AI_CORE -> AI_CPU; shapes 64,1024;1024,1024 -> 64,1023;1023,1024": what differs between the
// two sides of a row, each part only when both sides have calls and it changed.
Value change_text(const OpGroup& g, const Value& base_op, const KeySpace& k) {
  std::string out;
  const auto part = [&](const std::string& p) { out += (out.empty() ? "" : "; ") + p; };
  if (const auto* name = std::get_if<std::string>(&base_op)) part("was " + *name);
  if (g.base.count > 0 && g.next.count > 0) {
    if (g.base_unit != g.new_unit) part(unit_text(g.base_unit) + " -> " + unit_text(g.new_unit));
    if (g.base_shapes != g.new_shapes) part("shapes " + k.str(g.base_shapes) + " -> " + k.str(g.new_shapes));
  }
  return out.empty() ? Value() : Value(out);
}

}  // namespace

Table diff_ops_table(const DiffInputs& in, OpRowCounts& counts) {
  std::unordered_map<std::uint64_t, std::size_t> index;
  std::vector<OpGroup> groups;
  const auto group = [&](std::int32_t base_name, std::int32_t new_name) -> OpGroup& {
    const auto [it, added] = index.try_emplace(pack_keys(base_name, new_name), groups.size());
    if (added) {
      groups.emplace_back();
      groups.back().base_name = base_name;
      groups.back().new_name = new_name;
    }
    return groups[it->second];
  };
  const std::vector<DiffOp>& base = in.base.ops;
  const std::vector<DiffOp>& next = in.next.ops;
  for (const OpPair& m : in.pairing.pairs) {
    const DiffOp& b = base[m.reference];
    const DiffOp& n = next[m.subject];
    OpGroup& g = group(b.keys.name, n.keys.name);
    g.add_base(b);
    g.add_new(n);
    ++g.by[static_cast<int>(m.how)];
    if (n.dur_ns - b.dur_ns > g.worst) {
      g.worst = n.dur_ns - b.dur_ns;
      g.worst_new_task = n.task_id;
      g.worst_base_task = b.task_id;
    }
  }
  for (const std::uint32_t j : in.pairing.subject_only) {  // added: with the op's paired calls, if it has any
    OpGroup& g = group(next[j].keys.name, next[j].keys.name);
    g.add_new(next[j]);
    ++g.added;
    if (g.worst_new_task == 0) g.worst_new_task = next[j].task_id;
  }
  for (const std::uint32_t i : in.pairing.reference_only) {  // removed
    OpGroup& g = group(base[i].keys.name, base[i].keys.name);
    g.add_base(base[i]);
    ++g.removed;
    if (g.next.count == 0) g.type = base[i].keys.type;
  }
  for (const OpGroup& g : groups) {
    (g.diff() > 0 ? counts.slower : g.diff() < 0 ? counts.faster : counts.unchanged) += 1;
  }
  const KeySpace& k = in.keys;
  const auto op_name = [&](const OpGroup& g) -> const std::string& {
    return k.str(g.next.count > 0 || g.pairs() > 0 ? g.new_name : g.base_name);
  };
  const auto base_op = [&](const OpGroup& g) -> Value {
    if (g.base.count == 0) return {};
    if (const auto it = in.renamed_from.find(g.base_name); it != in.renamed_from.end()) return it->second;
    return g.base_name != g.new_name ? Value(k.str(g.base_name)) : Value();
  };
  const auto shapes = [&](std::int32_t key) { return key < 0 ? Value() : Value(k.str(key)); };
  const auto task = [](std::int64_t id) { return id != 0 ? Value(id) : Value(); };
  return sorted_table(kDiffOpsTable, groups, op_name, [&](const OpGroup& g) -> Row {
    Value renamed = base_op(g);
    Value change = change_text(g, renamed, k);
    Row cells{op_name(g), k.str(g.type), match_text(g), std::move(renamed)};
    append_calls(append_totals(cells, g), g);
    cells.insert(cells.end(), {max_of(g.base), max_of(g.next), unit_cell(g.base, g.base_unit),
                               unit_cell(g.next, g.new_unit), shapes(g.base_shapes), shapes(g.new_shapes),
                               std::move(change), task(g.worst_new_task), task(g.worst_base_task)});
    return cells;
  });
}

Table diff_op_types_table(const DiffInputs& in) {
  struct TypeRow : BothSides {
    std::int32_t type = 0;
  };
  std::vector<TypeRow> by_type(0);
  const auto row = [&](std::int32_t type) -> TypeRow& {
    if (static_cast<std::size_t>(type) >= by_type.size()) by_type.resize(static_cast<std::size_t>(type) + 1);
    by_type[static_cast<std::size_t>(type)].type = type;
    return by_type[static_cast<std::size_t>(type)];
  };
  for (const DiffOp& op : in.base.ops) row(op.keys.type).base.add(op.dur_ns);
  for (const DiffOp& op : in.next.ops) row(op.keys.type).next.add(op.dur_ns);
  std::erase_if(by_type, [](const TypeRow& r) { return r.base.count == 0 && r.next.count == 0; });
  const KeySpace& k = in.keys;
  return sorted_table(
      kDiffOpTypesTable, by_type, [&](const TypeRow& r) -> const std::string& { return k.str(r.type); },
      [&](const TypeRow& r) -> Row {
        Row cells{k.str(r.type)};
        return append_calls(append_totals(cells, r), r);
      });
}

Table diff_kernels_table(const DiffInputs& in) {
  struct KernelRow : BothSides {
    std::int32_t type = 0, shapes = 0;
  };
  std::unordered_map<std::uint64_t, std::size_t> index;
  std::vector<KernelRow> rows;
  const auto row = [&](const DiffOp& op) -> KernelRow& {
    const auto [it, added] = index.try_emplace(pack_keys(op.keys.type, op.keys.shapes), rows.size());
    if (added) {
      rows.emplace_back();
      rows.back().type = op.keys.type;
      rows.back().shapes = op.keys.shapes;
    }
    return rows[it->second];
  };
  for (const DiffOp& op : in.base.ops) row(op).base.add(op.dur_ns);
  for (const DiffOp& op : in.next.ops) row(op).next.add(op.dur_ns);
  const KeySpace& k = in.keys;
  const auto avg_ratio = [](const KernelRow& r) -> Value {
    if (r.base.count == 0 || r.next.count == 0) return {};
    return diff_ratio(r.base.total / r.base.count, r.next.total / r.next.count);
  };
  return sorted_table(
      kDiffKernelsTable, rows, [&](const KernelRow& r) { return k.str(r.type) + ' ' + k.str(r.shapes); },
      [&](const KernelRow& r) -> Row {
        Row cells{k.str(r.type), r.shapes != 0 ? Value(k.str(r.shapes)) : Value(std::string("N/A"))};
        append_totals(cells, r).push_back(avg_ratio(r));
        append_calls(cells, r);
        cells.insert(cells.end(), {max_of(r.base), max_of(r.next), min_of(r.base), min_of(r.next)});
        return cells;
      });
}

Table diff_apis_table(const DiffInputs& in) {
  struct ApiRow : BothSides {
    std::int32_t name = 0;
    const char* source = "";
  };
  std::vector<ApiRow> rows;
  const auto add = [&](const std::vector<Tally>& base, const std::vector<Tally>& next, const char* source) {
    for (std::size_t key = 0; key < std::max(base.size(), next.size()); ++key) {
      ApiRow r;
      r.name = static_cast<std::int32_t>(key);
      r.source = source;
      if (key < base.size()) r.base = base[key];
      if (key < next.size()) r.next = next[key];
      if (r.base.count > 0 || r.next.count > 0) rows.push_back(r);
    }
  };
  add(in.base.apis, in.next.apis, "runtime");
  add(in.base.framework_ops, in.next.framework_ops, "framework");
  const KeySpace& k = in.keys;
  return sorted_table(
      kDiffApisTable, rows, [&](const ApiRow& r) -> const std::string& { return k.str(r.name); },
      [&](const ApiRow& r) -> Row {
        Row cells{k.str(r.name), std::string(r.source)};
        return append_calls(append_totals(cells, r), r);
      });
}

}  // namespace npuscope::analyzer

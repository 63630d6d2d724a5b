// The model-error table of an emulated-vs-real diff (Note [Diff emulated vs real]).
#include "diff_model_error.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>

#include "diff_tables.h"

namespace npuscope::analyzer {

std::string output_pairing_key(std::string_view output_shapes) {
  std::string_view first = output_shapes.substr(0, output_shapes.find(';'));
  const auto trim = [](std::string_view s) {
    while (!s.empty() && (s.front() == '"' || s.front() == ' ' || s.front() == '[')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == '"' || s.back() == ' ' || s.back() == ']')) s.remove_suffix(1);
    return s;
  };
  first = trim(first);
  std::int64_t elements = 1;  // a scalar (an empty shape) has one
  while (!first.empty()) {
    const std::size_t comma = first.find(',');
    const std::string_view dim = trim(first.substr(0, comma));
    std::int64_t d = 0;
    const auto [end, ec] = std::from_chars(dim.data(), dim.data() + dim.size(), d);
    if (ec != std::errc() || end != dim.data() + dim.size() || d < 0) return {};  // "N/A", "?", "-1"
    if (__builtin_mul_overflow(elements, d, &elements)) return {};
    first = comma == std::string_view::npos ? std::string_view() : first.substr(comma + 1);
  }
  return "n=" + std::to_string(elements);
}

namespace {

struct ErrorRow {
  std::int32_t type = 0, shapes = -1;  // shapes: the real run's output shapes (key); -1: the type's row
  std::int64_t paired = 0, emulated_only = 0, real_only = 0, emulated_ns = 0, real_ns = 0;
  std::int64_t gap() const { return std::llabs(real_ns - emulated_ns); }
};

class ErrorRows {
 public:
  explicit ErrorRows(const DiffInputs& in) : in_(in), emulated_is_base_(in.base.source.empty()) {}

  void add_pairs() {
    for (const OpPair& m : in_.pairing.pairs) {
      const auto [emulated, e_index] = emulated_op(m.reference, m.subject);
      const auto [real, r_index] = real_op(m.reference, m.subject);
      if (is(real->task_type, TaskType::kCommunication) || is(emulated->task_type, TaskType::kCommunication)) continue;
      for (ErrorRow* r : rows_of(*real, real_shapes(r_index))) {
        ++r->paired;
        r->emulated_ns += emulated->dur_ns;
        r->real_ns += real->dur_ns;
      }
    }
  }
  void add_unpaired() {
    const DiffSide& emulated = emulated_is_base_ ? in_.base : in_.next;
    const DiffSide& real = emulated_is_base_ ? in_.next : in_.base;
    const auto& emulated_only = emulated_is_base_ ? in_.pairing.reference_only : in_.pairing.subject_only;
    const auto& real_only = emulated_is_base_ ? in_.pairing.subject_only : in_.pairing.reference_only;
    for (const std::uint32_t i : real_only) {
      if (!is(real.ops[i].task_type, TaskType::kCommunication)) ++type_row(real.ops[i].keys.type).real_only;
    }
    for (const std::uint32_t i : emulated_only) {
      if (!is(emulated.ops[i].task_type, TaskType::kCommunication)) ++type_row(emulated.ops[i].keys.type).emulated_only;
    }
  }

  // The type rows by |real - emulated|, each followed by its shape rows in the same order.
  Table table() {
    const auto by_gap = [&](const ErrorRow* a, const ErrorRow* b) {
      if (a->gap() != b->gap()) return a->gap() > b->gap();
      return in_.keys.str(a->type) < in_.keys.str(b->type);
    };
    std::vector<const ErrorRow*> types;
    for (const ErrorRow& r : types_) types.push_back(&r);
    std::sort(types.begin(), types.end(), by_gap);
    Table t{&kDiffModelErrorTable, {}};
    for (const ErrorRow* type : types) {
      t.add(cells(*type));
      std::vector<const ErrorRow*> shapes;
      for (const ErrorRow& r : shapes_) {
        if (r.type == type->type) shapes.push_back(&r);
      }
      std::sort(shapes.begin(), shapes.end(), by_gap);
      if (shapes.size() > 1 || type->emulated_only + type->real_only > 0) {
        for (const ErrorRow* s : shapes) t.add(cells(*s));
      }
    }
    return t;
  }

 private:
  using OpAt = std::pair<const DiffOp*, std::uint32_t>;
  OpAt emulated_op(std::uint32_t reference, std::uint32_t subject) const {
    return emulated_is_base_ ? OpAt{&in_.base.ops[reference], reference} : OpAt{&in_.next.ops[subject], subject};
  }
  OpAt real_op(std::uint32_t reference, std::uint32_t subject) const {
    return emulated_is_base_ ? OpAt{&in_.next.ops[subject], subject} : OpAt{&in_.base.ops[reference], reference};
  }
  std::int32_t real_shapes(std::uint32_t i) const {
    const DiffSide& real = emulated_is_base_ ? in_.next : in_.base;
    return i < real.output_shapes_of.size() ? real.output_shapes_of[i] : 0;
  }
  ErrorRow& type_row(std::int32_t type) {
    const auto [it, added] = type_index_.try_emplace(type, types_.size());
    if (added) types_.push_back({.type = type});
    return types_[it->second];
  }
  std::array<ErrorRow*, 2> rows_of(const DiffOp& real, std::int32_t shapes) {
    ErrorRow& type = type_row(real.keys.type);
    const auto [it, added] = shape_index_.try_emplace(pack_keys(real.keys.type, real.keys.shapes), shapes_.size());
    if (added) shapes_.push_back({.type = real.keys.type, .shapes = shapes});
    return {&type, &shapes_[it->second]};
  }
  Row cells(const ErrorRow& r) const {
    const Value error =
        r.real_ns > 0 ? Value(100.0 * static_cast<double>(r.emulated_ns - r.real_ns) / static_cast<double>(r.real_ns))
                      : Value();
    const Value shapes = r.shapes < 0 ? Value(std::string("(all)")) : Value(in_.keys.str(r.shapes));
    const auto count = [&](std::int64_t n) { return r.shapes < 0 ? Value(n) : Value(); };
    return {in_.keys.str(r.type),
            shapes,
            r.paired,
            count(r.emulated_only),
            count(r.real_only),
            r.emulated_ns,
            r.real_ns,
            r.emulated_ns - r.real_ns,
            error};
  }

  const DiffInputs& in_;
  const bool emulated_is_base_;
  std::vector<ErrorRow> types_, shapes_;
  std::unordered_map<std::int32_t, std::size_t> type_index_;
  std::unordered_map<std::uint64_t, std::size_t> shape_index_;
};

}  // namespace

Table diff_model_error_table(const DiffInputs& in) {
  ErrorRows rows(in);
  rows.add_pairs();
  rows.add_unpaired();
  return rows.table();
}

std::vector<std::string> model_error_notes(const DiffInputs& in) {
  const bool emulated_is_base = in.base.source.empty();
  const DiffSide& emulated = emulated_is_base ? in.base : in.next;
  const DiffSide& real = emulated_is_base ? in.next : in.base;
  const auto kernels = [](const DiffSide& s) {
    return std::count_if(s.ops.begin(), s.ops.end(),
                         [](const DiffOp& op) { return !is(op.task_type, TaskType::kCommunication); });
  };
  std::int64_t paired = 0;
  for (const OpPair& m : in.pairing.pairs) {
    const DiffOp& r = emulated_is_base ? in.next.ops[m.subject] : in.base.ops[m.reference];
    if (!is(r.task_type, TaskType::kCommunication)) ++paired;
  }
  const std::int64_t real_kernels = kernels(real), emulated_kernels = kernels(emulated);
  const auto pct = [](std::int64_t part, std::int64_t whole) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f %%", whole > 0 ? 100.0 * static_cast<double>(part) / whole : 0.0);
    return std::string(buf);
  };
  return {"one run is emulated (" + emulated.path + ") and the other a real profile (" + real.path +
              "): ops are paired by CANN op type and the element count of their first output (Note [Diff emulated "
              "vs real]); diff_model_error shows the emulator's error per op type, collectives left out",
          "emulated vs real: " + std::to_string(paired) + " of " + std::to_string(real_kernels) +
              " real kernels paired (" + pct(paired, real_kernels) + "), " + std::to_string(paired) + " of " +
              std::to_string(emulated_kernels) + " emulated (" + pct(paired, emulated_kernels) + ")"};
}

}  // namespace npuscope::analyzer

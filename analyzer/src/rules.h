// The rules of `npuscope analyze` and what they share: each rule computes its figures from the
// trace's rows and writes the finding tables it declares (Note [Finding tables]). rules.cpp lists
// them: adding a finding is its rule's file and one line there.
#pragma once

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "npuscope/analyzer/finding_table.h"
#include "tensor_shapes.h"
#include "trace_data.h"

namespace npuscope::analyzer {

// The tensor shapes of a trace, read once for every rule that asks, from whichever thread asks first.
class SharedShapes {
 public:
  explicit SharedShapes(const TraceData& data) : data_(data) {}
  const TensorShapes& get() {
    std::call_once(once_, [&] { shapes_ = std::make_unique<TensorShapes>(data_); });
    return *shapes_;
  }

 private:
  const TraceData& data_;
  std::once_flag once_;
  std::unique_ptr<TensorShapes> shapes_;
};

// What a rule reads and where it writes.
class RuleContext {
 public:
  RuleContext(const TraceData& trace_data, int top_n, std::vector<Table>& tables, std::vector<std::string>& notes,
              SharedShapes& shapes)
      : data(trace_data), top(top_n), tables_(tables), notes_(notes), shapes_(shapes) {}

  const TraceData& data;
  const int top;  // top ops, longest gaps, largest leaks, items per advice rule

  // The table of `spec` (declared by a rule that runs).
  Table& table(const TableSpec& spec);
  void add(const TableSpec& spec, Row row) { table(spec).add(std::move(row)); }
  // Out of line and by view: a literal built into a std::string at every call site tripped g++ 12's
  // -Warray-bounds false positive on the inlined copy.
  void note(std::string_view text);
  // Part of a rule left out on an imported trace (Note [Emulated-only rules]): analyze() names it in
  // its one note about what an imported trace cannot show.
  // `dropped`: a table of the rule not reported at all.
  void leave_out(std::string_view what, const TableSpec* dropped = nullptr);
  const std::vector<std::string>& left_out() const { return left_out_; }
  // The tensor shapes of the trace, read once for the rules that need them; the call notes when
  // the trace has none (analyze() keeps one of equal notes).
  const TensorShapes& shapes();
  // The tables left out on this trace (leave_out's `dropped`).
  const std::vector<const TableSpec*>& dropped() const { return dropped_; }

 private:
  std::vector<Table>& tables_;
  std::vector<std::string>& notes_;
  SharedShapes& shapes_;
  std::vector<std::string> left_out_;
  std::vector<const TableSpec*> dropped_;
  bool asked_shapes_ = false;
};

struct Rule {
  std::string_view name;  // --rules NAME
  std::string_view doc;
  void (*run)(RuleContext& context);
  std::span<const TableSpec* const> tables;  // the tables it writes (several rules may share one)
  bool always = false;                       // runs whatever --rules says (the summary)
  // What it reads that only a trace the emulator recorded has (Note [Emulated-only rules]); empty:
  // it holds on an imported real profile too.
  std::string_view emulated_only;
};

// Note [Emulated-only rules]
// Some findings rest on what only the emulator records: overflow and underflow flags from its
// dumps, its kernel model's pipe cycles, the sanitizer's findings, the loss scaler's and grad
// probe's records, the online op check. A real profile (META source set) has none of it, and an
// empty table would read as "no overflows". analyze() does not run such a rule on an imported
// trace and says so in one note naming them, whatever --rules asked for. A rule that holds on real
// data only in part (top_ops' roofline columns, from the cost model's FLOPs and bytes) leaves those
// cells null there and says so in the same note.

// In report order.
std::span<const Rule* const> registered_rules();

// The leading columns of a table of tasks in execution order (overflows, underflows), which the
// rules' tables join with their own (join_columns).
inline constexpr Column kTaskInOrderColumns[] = {
    {"order", Unit::kCount, "position in execution order", "#"},
    {"task_id", Unit::kTaskId, "TASK.task_id", "task"},
    {"op_name", Unit::kOpName, "the op"},
    {"op_type", Unit::kText, "its op type"},
    {"device_id", Unit::kId, "its device", "device", true},
    {"start_ns", Unit::kNs, "its start", "start"},
};

}  // namespace npuscope::analyzer

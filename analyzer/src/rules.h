// The rules of `npuscope analyze` and what they share: each rule computes its figures from the
// trace's rows and writes the finding tables it declares (Note [Finding tables]). rules.cpp lists
// them: adding a finding is its rule's file and one line there.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "npuscope/analyzer/finding_table.h"
#include "tensor_shapes.h"
#include "trace_data.h"

namespace npuscope::analyzer {

// What a rule reads and where it writes.
class RuleContext {
 public:
  RuleContext(const TraceData& trace_data, int top_n, std::vector<Table>& tables, std::vector<std::string>& notes)
      : data(trace_data), top(top_n), tables_(tables), notes_(notes) {}

  const TraceData& data;
  const int top;  // top ops, longest gaps, largest leaks, items per advice rule

  // The table of `spec` (declared by a rule that runs).
  Table& table(const TableSpec& spec);
  void add(const TableSpec& spec, Row row) { table(spec).add(std::move(row)); }
  // Out of line and by view: a literal built into a std::string at every call site tripped g++ 12's
  // -Warray-bounds false positive on the inlined copy.
  void note(std::string_view text);
  // The tensor shapes of the trace, read once for the rules that need them; the first call notes
  // when the trace has none.
  const TensorShapes& shapes();

 private:
  std::vector<Table>& tables_;
  std::vector<std::string>& notes_;
  std::unique_ptr<TensorShapes> shapes_;
};

struct Rule {
  std::string_view name;  // --rules NAME
  std::string_view doc;
  void (*run)(RuleContext& context);
  std::span<const TableSpec* const> tables;  // the tables it writes (several rules may share one)
  bool always = false;                       // runs whatever --rules says (the summary)
};

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

// The analyzer's two ways to an msprobe dump of a trace (Note [msprobe dumps from a trace] in
// msprobe_entries.h), and what they share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "npuscope/collector/msprobe_dump.h"
#include "npuscope/collector/trace_reader.h"

namespace npuscope::analyzer::msprobe {

// An entry of one step, with where each tensor value's data is in the trace.
struct TensorSource {
  std::int64_t task_id = -1;  // -1: the trace has no row of it
  std::int32_t role = 0, idx = 0;
  // The value's own shape, and its strides where it is a view the row's buffer holds in another
  // order (a transposed weight); empty when its elements are the row's, in order.
  std::vector<std::int64_t> shape, strides;
};
struct StepEntry {
  std::int64_t step = 0;
  collector::DumpEntry entry;
  std::vector<TensorSource> sources;  // one per value (task_id -1 for non-tensors)
  std::string stack;                  // frames innermost first, separated by ";\n"; "" none
};
struct TraceEntries {
  std::vector<StepEntry> entries;  // in dump order, steps together
  std::vector<std::string> notes;  // what was left out, counted
  bool has_pytorch_ops = false, has_tensors = false, has_data = false;
  bool has_md5 = false;  // Note [md5 dumps from a trace] in msprobe_dump.cpp
};

// The step whose range began last at or before a time (before the first step: the first; 0 if none).
class Steps {
 public:
  explicit Steps(const collector::TraceReader& reader);
  std::int64_t at(std::int64_t ns) const;

 private:
  std::vector<std::pair<std::int64_t, std::int64_t>> steps_;  // (start_ns, step), by start
};

// A tensor value from its TENSOR row (statistics as msprobe writes them); row null: none in the trace.
collector::DumpValue tensor_value(std::string slot, const collector::TensorRow* row);
// msprobe's name of a TENSOR.dtype: "torch.float32"; "dtype<N>" for a value this build does not know.
std::string torch_dtype_name(std::int32_t dtype);
std::vector<std::int64_t> parse_shape(const std::string& shape);  // "2,3" -> {2, 3}
// A module entry's name in the other pass: "Module.fc.Linear.forward.0" -> "Module.fc.Linear.backward.0".
std::string other_pass(const std::string& entry, std::string_view from, std::string_view to);

// Traces with msprobe fragments (PYTORCH_API rows of kind api): msprobe's own names.
TraceEntries fragment_entries(const collector::TraceReader& reader);
// Other traces: Aten.{op}.{n}.forward/backward and the modules' entries from the data flow (Note
// [msprobe entries]).
TraceEntries aten_entries(const collector::TraceReader& reader);

}  // namespace npuscope::analyzer::msprobe

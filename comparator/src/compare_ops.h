// The ops of a trace as `npuscope compare` pairs them (Note [Op pairing] in
// npuscope/analyzer/op_pairing.h: compare runs kCompareStages, compare.h).
//
// Note [Model pass of an op]
// A PyTorch script's trace has a PYTORCH_API table, and each task its TASK.pytorch_api_id: the
// innermost framework op that launched it (an aten op inside a module call, an autograd function,
// an optimizer step). That op's `pass` (ModelPass: forward, backward, optimizer) is the task's, and
// the report says it, so that "the first op that introduced the error" tells a forward op from the
// backward op of the same module. A task launched outside any framework op, and every task of a
// trace without PYTORCH_API (a C++ program), has no pass ("").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "npuscope/analyzer/op_pairing.h"
#include "npuscope/collector/trace_reader.h"

namespace npuscope::comparator {

struct OpInfo {
  std::int64_t task_id = 0, start_ns = 0;
  std::string name, type;
  std::int32_t call_index = 0;
  bool overflow = false;       // TASK.overflow: the NPU flagged Inf/NaN (or saturation) in its outputs
  std::string pass;            // Note [Model pass of an op]; "" none
  std::int64_t underflow = 0;  // TASK.underflow: output elements the NPU flushed to zero
  analyzer::PairingKeys keys;  // shared with the other trace's ops (`keys`)
};

// The kernel ops of a trace (Note [What is an op]) in execution (start) order, their strings as
// `keys` numbers them (the NPU side's names through the --mapping name map).
std::vector<OpInfo> load_ops(const collector::TraceReader& trace, analyzer::SideKeys& keys);

// "input.0", "output.1": a tensor of an op, by TENSOR.role and idx (the two ops' tensors pair by them).
std::string tensor_label(std::int32_t role, std::int32_t index);

}  // namespace npuscope::comparator

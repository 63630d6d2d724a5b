// Pairs the ops of an NPU trace with those of a golden trace.
//
// Note [Op matching]
// An op is a task that ran a kernel: an NPU kernel (AI Core, AI Vector, AI CPU) or a task of the cpu
// golden backend. An NPU op is paired with the golden op of the same name (after the mapping file
// renames it) and the same call index, as msprobe pairs "the full name incl. the call index". What
// is left is paired in execution order by op type: each leftover NPU op takes the first leftover
// golden op of its type (a renamed scope, an op the mapping file missed). What is still left is
// reported as unmatched on its side, not an error. Shapes and dtypes are checked tensor by tensor.
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
#include <map>
#include <string>
#include <vector>

#include "npuscope/collector/trace_reader.h"
#include "npuscope/comparator/compare.h"

namespace npuscope::comparator {

struct OpInfo {
  std::int64_t task_id = 0, start_ns = 0;
  std::string name, type;
  std::int32_t call_index = 0;
  bool overflow = false;       // TASK.overflow: the NPU flagged Inf/NaN (or saturation) in its outputs
  std::string pass;            // Note [Model pass of an op]; "" none
  std::int64_t underflow = 0;  // TASK.underflow: output elements the NPU flushed to zero
};

// The ops of a trace in execution (start) order.
std::vector<OpInfo> load_ops(const collector::TraceReader& trace);

struct OpPair {
  std::size_t npu = 0, golden = 0;  // indexes into the two op lists
  MatchKind kind = MatchKind::kName;
};

struct Matching {
  std::vector<OpPair> pairs;  // in NPU execution order
  std::vector<std::size_t> unmatched_npu, unmatched_golden;
};

Matching match_ops(const std::vector<OpInfo>& npu, const std::vector<OpInfo>& golden,
                   const std::map<std::string, std::string>& mapping);

}  // namespace npuscope::comparator

// The framework ops of a real profile's host threads (torch_npu's cpu_op and python_function
// events) into PYTORCH_API rows: ids, nesting, pass and module, and the op a device task came from.
//
// Note [Host op nesting]
// A profile lists a thread's ops in no particular order; their nesting follows from their times: on
// one thread, sorted by start (the longer first on a tie), an op's parent is the innermost op still
// open when it starts (one ending at or before that start is closed). Ids are given in start order
// over all threads (1, 2, ...). An op's pass is backward inside an autograd node
// (`autograd::engine::evaluate_function: ...`) or on a thread that runs them (autograd's worker),
// optimizer inside `Optimizer.step#...` / `Optimizer.zero_grad#...`, forward otherwise; its module is
// the innermost `nn.Module: ...` around it. The op that launched a device task is the innermost op
// open on the launching thread when the launch happened (innermost(tid, ts)).
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "import_sink.h"

namespace npuscope::importer {

struct HostOp {
  std::int64_t start_ns = 0, end_ns = 0, sequence_number = -1;
  collector::StringId name_id = 0, shapes_id = 0, dtypes_id = 0, stack_id = 0;
  std::int32_t tid = 0, fwd_tid = 0;
  HostOpKind kind = HostOpKind::kAtenOp;
};

// What a cpu_op / python_function name is (ProfilerStep#N is a step, not an op: step_number()).
HostOpKind host_op_kind(std::string_view cat, std::string_view name, bool has_module_id);
// N for "ProfilerStep#N", else -1.
std::int64_t step_number(std::string_view name);

class HostOps {
 public:
  void add(const HostOp& op) { ops_.push_back(op); }
  std::size_t size() const { return ops_.size(); }

  // Nests the ops (Note [Host op nesting]) and writes their rows, times moved by `offset_ns`.
  void write(ImportSink& sink, std::int64_t offset_ns);
  // After write(): the id of the innermost op open on `tid` at `ts_ns` (file time), 0 none.
  std::int64_t innermost(std::int32_t tid, std::int64_t ts_ns) const;

 private:
  struct Open {
    std::int64_t start_ns, end_ns, id;
    std::int32_t parent;  // index in the thread's list, -1 none
  };
  std::vector<HostOp> ops_;
  std::unordered_map<std::int32_t, std::vector<Open>> threads_;  // by tid, in start order
};

}  // namespace npuscope::importer

#include "compare_ops.h"

#include <unordered_map>

namespace npuscope::comparator {
namespace {

// PYTORCH_API.id -> the op's pass name (Note [Model pass of an op]); empty without PYTORCH_API.
std::unordered_map<std::int64_t, std::string> passes_of(const collector::TraceReader& trace) {
  std::unordered_map<std::int64_t, std::string> passes;
  trace.for_each([&](const collector::PytorchApiRow& op) {
    passes.emplace(op.id, collector::stored_name<ModelPass>(op.pass, "pass"));
  });
  return passes;
}

}  // namespace

std::vector<OpInfo> load_ops(const collector::TraceReader& trace, analyzer::SideKeys& keys) {
  const std::unordered_map<std::int64_t, std::string> passes = passes_of(trace);
  std::vector<OpInfo> ops;
  trace.for_each([&](const collector::TaskRow& t) {
    if (!is_kernel_op(t.task_type)) return;
    OpInfo op{t.task_id,    t.start_ns,     trace.string(t.name_id), trace.string(t.op_type_id),
              t.call_index, t.overflow != 0};
    if (const auto it = passes.find(t.pytorch_api_id); t.pytorch_api_id != 0 && it != passes.end())
      op.pass = it->second;
    op.underflow = t.underflow;
    op.keys = keys.op_keys(t.name_id, t.op_type_id, t.input_shapes_id, t.call_index);
    ops.push_back(std::move(op));
  });
  return ops;
}

std::string tensor_label(std::int32_t role, std::int32_t index) {
  return std::string(is(role, TensorRole::kInput) ? "input." : "output.") + std::to_string(index);
}

}  // namespace npuscope::comparator

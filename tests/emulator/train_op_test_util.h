// Shared by the training-op tests: deterministic inputs that the PyTorch scripts which produced the
// reference numbers rebuild exactly, and a direct kernel call whose output is an input's memory.
#pragma once

#include <cmath>
#include <vector>

#include "emulator/op_test_util.h"
#include "npuscope/emulator/op_registry.h"

namespace npuscope::emulator::testing {

// x[i] = float(sin(0.37·i + phase)·scale): in Python,
//   torch.tensor([float(torch.tensor(math.sin(0.37*i+phase)*scale, dtype=torch.float32)) ...]).
inline Tensor seq(Shape shape, double phase, DType dtype = DType::kF32, double scale = 1.0) {
  std::vector<float> v(static_cast<std::size_t>(shape_numel(shape)));
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i) + phase) * scale);
  return Tensor::from_floats(v, std::move(shape), dtype);
}

inline Tensor i64(std::vector<std::int64_t> v, Shape shape) {
  return Tensor::from_ints(v, std::move(shape), DType::kI64);
}

// Runs the CPU kernel of `op` directly on cpu tensors with outputs[k] = inputs[alias[k]] where
// alias[k] >= 0 (the same memory), as the torch side does for in-place ops.
inline void run_cpu_kernel(const char* op, std::vector<Tensor>& inputs, std::vector<Tensor>& outputs,
                           const Attrs& attrs) {
  std::vector<TensorView> in(inputs.size()), out(outputs.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (inputs[i].defined()) in[i] = {inputs[i].raw_data(), inputs[i].dtype(), &inputs[i].shape(), inputs[i].numel()};
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = {outputs[i].raw_data(), outputs[i].dtype(), &outputs[i].shape(), outputs[i].numel()};
  }
  KernelContext ctx{in, out, attrs, Backend::kCpu, outputs[0].dtype(), OverflowMode::kInfNan};
  OpRegistry::instance().kernel(op, Backend::kCpu)->fn(ctx);
}

}  // namespace npuscope::emulator::testing

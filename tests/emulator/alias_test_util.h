// Runs a registered kernel directly, as the device does, optionally with output 0 in the same memory
// as one of its inputs, as the PyTorch device does for an in-place aten op (add_, mul_, addcmul_...):
// see Note [Aliasing outputs] in emulator/src/kernels/fused_util.h.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "npuscope/emulator/op_registry.h"
#include "npuscope/emulator/tensor.h"

namespace npuscope::emulator::testing {

// What a kernel run directly left: its outputs and the flags the store helpers set.
struct KernelRun {
  std::vector<Tensor> outputs;
  bool overflow = false, saturated = false;
  std::string fault;
};

// Runs `op`'s kernel for `backend` as the device does: on host copies of `inputs`, the NPU
// computing in `compute`, output 0 in memory of its own or, with `alias`, written over that input
// (whose shape it must have). The other outputs get buffers of their own.
inline KernelRun run_kernel(const char* op, const std::vector<Tensor>& inputs, const Attrs& attrs, Backend backend,
                            DType compute, OverflowMode mode, std::optional<std::size_t> alias = std::nullopt) {
  const OpRegistry& registry = OpRegistry::instance();
  std::vector<Tensor> in;
  std::vector<TensorMeta> metas;
  for (const Tensor& t : inputs) {
    in.push_back(Tensor::from_bytes(t.cpu().raw_data(), t.shape(), t.dtype()));
    metas.push_back({t.shape(), t.dtype()});
  }
  const std::vector<TensorMeta> out_meta = registry.schema(op).infer(metas, attrs);
  KernelRun run;
  std::vector<TensorView> iv, ov;
  for (const Tensor& t : in) iv.push_back({t.raw_data(), t.dtype(), &t.shape(), t.numel()});
  for (std::size_t i = 0; i < out_meta.size(); ++i) {
    run.outputs.push_back(i == 0 && alias ? in[*alias] : Tensor::empty(out_meta[i].shape, out_meta[i].dtype));
    ov.push_back({run.outputs[i].raw_data(), run.outputs[i].dtype(), &run.outputs[i].shape(), run.outputs[i].numel()});
  }
  if (alias) {
    EXPECT_EQ(out_meta[0].shape, in[*alias].shape()) << op << ": output 0 must have the aliased input's shape";
  }
  KernelContext ctx{iv, ov, attrs, backend, compute, mode};
  registry.kernel(op, backend)->fn(ctx);
  run.overflow = ctx.overflow;
  run.saturated = ctx.saturated;
  run.fault = ctx.fault;
  return run;
}

// Runs `op`'s kernel for `backend` (NPU: computing in the aliased input's dtype, inf_nan) with output
// 0 written over input `alias`; returns that input afterwards.
inline Tensor run_in_place(const char* op, const std::vector<Tensor>& inputs, const Attrs& attrs, Backend backend,
                           std::size_t alias = 0) {
  const KernelRun run = run_kernel(op, inputs, attrs, backend, inputs[alias].dtype(), OverflowMode::kInfNan, alias);
  EXPECT_EQ(run.fault, "") << op;
  return run.outputs[0];
}

}  // namespace npuscope::emulator::testing

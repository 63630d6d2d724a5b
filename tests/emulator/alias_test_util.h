// Runs a registered kernel directly with output 0 in the same memory as one of its inputs, as the
// PyTorch device does for an in-place aten op (add_, mul_, addcmul_...): see Note [Aliasing outputs]
// in emulator/src/kernels/fused_util.h.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "npuscope/emulator/op_registry.h"
#include "npuscope/emulator/tensor.h"

namespace npuscope::emulator::testing {

// Runs `op`'s kernel for `backend` (NPU: computing in f32 or the input's narrower dtype) on host
// copies of `inputs`, output 0 written over input `alias`; returns that input afterwards. The other
// outputs get buffers of their own.
inline Tensor run_in_place(const char* op, const std::vector<Tensor>& inputs, const Attrs& attrs, Backend backend,
                           std::size_t alias = 0) {
  const OpRegistry& registry = OpRegistry::instance();
  std::vector<Tensor> in;
  std::vector<TensorMeta> metas;
  for (const Tensor& t : inputs) {
    in.push_back(Tensor::from_bytes(t.cpu().raw_data(), t.shape(), t.dtype()));
    metas.push_back({t.shape(), t.dtype()});
  }
  const std::vector<TensorMeta> out_meta = registry.schema(op).infer(metas, attrs);
  std::vector<Tensor> outs;
  std::vector<TensorView> iv, ov;
  for (const Tensor& t : in) iv.push_back({t.raw_data(), t.dtype(), &t.shape(), t.numel()});
  for (std::size_t i = 0; i < out_meta.size(); ++i) {
    outs.push_back(i == 0 ? in[alias] : Tensor::empty(out_meta[i].shape, out_meta[i].dtype));
    ov.push_back({outs[i].raw_data(), outs[i].dtype(), &outs[i].shape(), outs[i].numel()});
  }
  EXPECT_EQ(out_meta[0].shape, in[alias].shape()) << op << ": output 0 must have the aliased input's shape";
  KernelContext ctx{iv, ov, attrs, backend, inputs[alias].dtype(), OverflowMode::kInfNan};
  registry.kernel(op, backend)->fn(ctx);
  EXPECT_EQ(ctx.fault, "") << op;
  return in[alias];
}

}  // namespace npuscope::emulator::testing

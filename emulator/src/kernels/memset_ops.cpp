// MemSet: zeroes a buffer, as CANN's MemSet kernel clears the output of an op that accumulates
// into it atomically (Conv2DBackpropFilter; the dispatcher launches it: format_plans.h):
//   MemSet (x) -> zeros of x's shape and dtype
// Any dtype. Cost: one write pass over the output.
#include <cstring>

#include "../format_plans.h"
#include "kernel_util.h"

namespace npuscope::emulator {
namespace {

constexpr char kOp[] = "MemSet";

std::vector<TensorMeta> infer_memset(std::span<const TensorMeta> in, const Attrs&) {
  return {{in[0].shape, in[0].dtype}};
}

KernelCost cost_memset(std::span<const TensorMeta>, std::span<const TensorMeta> out, const Attrs&) {
  return memset_cost(static_cast<double>(out[0].nbytes()));
}

void memset_kernel(KernelContext& ctx) {
  const TensorView& y = ctx.outputs[0];
  std::memset(y.data, 0, static_cast<std::size_t>(y.numel) * dtype_size(y.dtype));
}

}  // namespace

KernelCost memset_cost(double bytes) { return KernelCost{.unit = ComputeUnit::kVector, .flops = 0, .bytes = bytes}; }

NPUSCOPE_REGISTER_OP(OpSchema{.type = kOp,
                              .category = OpCategory::kDataMovement,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_memset,
                              .cost = cost_memset});
NPUSCOPE_REGISTER_KERNEL_FOR_BOTH(kOp, memset_kernel);

}  // namespace npuscope::emulator

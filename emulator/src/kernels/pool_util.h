// Shared by the global pools (GlobalAvgPool in pool_ops.cpp, GlobalMaxPool in pool_ext_ops.cpp).
#pragma once

#include <vector>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {

// A global pool in T: output element p is reduce(plane, len) of input plane p, the `len` elements of
// one [N, C] position's spatial dims.
template <class T, class Reduce>
void global_pool_kernel(KernelContext& ctx, Reduce reduce) {
  const TensorView& xv = ctx.inputs[0];
  const std::int64_t planes = ctx.outputs[0].numel;
  const std::int64_t len = planes == 0 ? 0 : xv.numel / planes;
  const std::vector<T> x = load<T>(xv, ctx);
  std::vector<T> y(static_cast<std::size_t>(planes));
  for (std::int64_t p = 0; p < planes; ++p) y[static_cast<std::size_t>(p)] = reduce(x.data() + p * len, len);
  store<T>(ctx.outputs[0], y.data(), ctx);
}

}  // namespace npuscope::emulator::kernels

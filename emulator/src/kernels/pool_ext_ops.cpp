// GlobalMaxPool (ONNX): [N, C, D1...] -> [N, C, 1...], the maximum of each plane; a NaN in a
// plane propagates, as in MaxPool. Exact in any dtype (no arithmetic): the NPU kernel runs the
// floating dtypes in f32; integers go to the CPU golden, which compares them as int64.
#include <algorithm>
#include <limits>

#include "pool_util.h"

namespace npuscope::emulator::kernels {
namespace {

std::vector<TensorMeta> infer_global_max_pool(std::span<const TensorMeta> in, const Attrs&) {
  const Shape& x = in[0].shape;
  if (x.size() < 3) fail("GlobalMaxPool", "expects an [N, C, spatial...] input, got " + shape_str(x));
  if (in[0].dtype == DType::kBool) fail("GlobalMaxPool", "bool input is not supported");
  if (x[0] * x[1] > 0 && shape_numel(x) == 0) {
    fail("GlobalMaxPool", "input " + shape_str(x) + " has empty planes: no maximum");
  }
  Shape out(x.size(), 1);
  out[0] = x[0];
  out[1] = x[1];
  return {{out, in[0].dtype}};
}

KernelCost cost_global_max_pool(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  const double per_out = out[0].numel() == 0 ? 0 : static_cast<double>(in[0].numel()) / out[0].numel();
  return vector_cost(in, out, per_out);
}

template <class T>
void global_max_pool_kernel(KernelContext& ctx) {
  global_pool_kernel<T>(ctx, [](const T* src, std::int64_t len) {
    T acc = -std::numeric_limits<T>::infinity();
    bool nan = false;  // kept apart so that the max stays branch-free
    for (std::int64_t j = 0; j < len; ++j) {
      acc = acc < src[j] ? src[j] : acc;
      nan |= src[j] != src[j];
    }
    return nan ? std::numeric_limits<T>::quiet_NaN() : acc;
  });
}

void global_max_pool_cpu(KernelContext& ctx) {
  const TensorView& xv = ctx.inputs[0];
  if (is_floating(xv.dtype)) return global_max_pool_kernel<double>(ctx);
  const std::int64_t planes = ctx.outputs[0].numel;
  const std::int64_t plane = planes == 0 ? 0 : xv.numel / planes;
  std::vector<std::int64_t> x(static_cast<std::size_t>(xv.numel)), y(static_cast<std::size_t>(planes));
  load_i64(xv, x.data());
  for (std::int64_t p = 0; p < planes; ++p)
    y[p] = *std::max_element(x.begin() + p * plane, x.begin() + (p + 1) * plane);
  store_i64(ctx.outputs[0], y.data());
}

bool global_max_pool_npu_supports(std::span<const TensorMeta> in, const Attrs&) { return is_floating(in[0].dtype); }

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = "GlobalMaxPool",
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_global_max_pool,
                              .cost = cost_global_max_pool});
NPUSCOPE_REGISTER_KERNEL_IF("GlobalMaxPool", Backend::kNpu, global_max_pool_kernel<float>,
                            global_max_pool_npu_supports);
NPUSCOPE_REGISTER_KERNEL("GlobalMaxPool", Backend::kCpu, global_max_pool_cpu);

}  // namespace npuscope::emulator::kernels

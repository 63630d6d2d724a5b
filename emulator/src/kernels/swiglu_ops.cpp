// SwiGlu (torch_npu.npu_swiglu): x splits into halves a and b along `dim` (default -1), and
// out = silu(a) · b = a / (1 + e^(−a)) · b, the LLaMA feed-forward gate in one kernel.
//   NPU: f32 arithmetic, rounded to the output dtype once. CPU golden: f64.
#include <cmath>
#include <vector>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kSwiGlu[] = "SwiGlu";

std::vector<TensorMeta> infer_swiglu(std::span<const TensorMeta> in, const Attrs& attrs) {
  require_floating(in, 0, kSwiGlu);
  Shape shape = in[0].shape;
  if (shape.empty()) fail(kSwiGlu, "the input must have at least one dimension");
  const auto dim = static_cast<std::size_t>(
      normalize_axis(attrs.get_int("dim", -1), static_cast<std::int64_t>(shape.size()), kSwiGlu));
  if (shape[dim] % 2 != 0) {
    fail(kSwiGlu, "dimension " + std::to_string(dim) + " has odd size " + std::to_string(shape[dim]) +
                      ": it must split into two halves");
  }
  shape[dim] /= 2;
  return {{shape, in[0].dtype}};
}

KernelCost cost_swiglu(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  KernelCost c = vector_cost(in, out, 7);  // silu's negate, exp, add and divide, then the gate's multiply
  c.stages = 2;                            // sigmoid, times x, times the gate
  c.precision_upcast = true;
  return c;
}

template <class T>
void swiglu_kernel(KernelContext& c) {
  const TensorView& x = c.inputs[0];
  const TensorView& y = c.outputs[0];
  const Shape& shape = *x.shape;
  const auto dim = static_cast<std::size_t>(
      normalize_axis(c.attrs.get_int("dim", -1), static_cast<std::int64_t>(shape.size()), kSwiGlu));
  const auto [outer, len, inner] = split_at(shape, static_cast<std::int64_t>(dim));
  const std::int64_t half = len / 2, run = half * inner;  // one half's elements per outer index
  const std::vector<T> in = load<T>(x, c);
  std::vector<T> result(static_cast<std::size_t>(y.numel));
  for (std::int64_t o = 0; o < outer; ++o) {
    const T* a = in.data() + o * 2 * run;
    const T* b = a + run;
    T* r = result.data() + o * run;
    for (std::int64_t i = 0; i < run; ++i) r[i] = a[i] / (T(1) + std::exp(-a[i])) * b[i];
  }
  store(y, result.data(), c);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kSwiGlu,
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_swiglu,
                              .cost = cost_swiglu});
NPUSCOPE_REGISTER_FLOAT_KERNELS(kSwiGlu, swiglu_kernel);

}  // namespace npuscope::emulator::kernels

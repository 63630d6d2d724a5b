// Gradients of the piecewise-linear activations, each mirroring a PyTorch 1.13 CPU aten op (the
// forward ops are ONNX's Clip, HardSwish, HardSigmoid and LeakyRelu):
//   HardtanhGrad     (dy, x; min_val -1, max_val 1) -> dx = x <= min_val || x >= max_val ? 0 : dy
//                    aten hardtanh_backward (ReLU6's backward: min 0, max 6)
//   HardswishGrad    (dy, x) -> dx = dy·(x < -3 ? 0 : x < 3 ? x/3 + 1/2 : 1)     aten hardswish_backward
//   HardsigmoidGrad  (dy, x) -> dx = -3 < x < 3 ? dy/6 : 0                     aten hardsigmoid_backward
//   LeakyReluGrad    (dy, x; negative_slope 0.01) -> dx = x > 0 ? dy : dy·slope  aten leaky_relu_backward
// Inputs broadcast as numpy; the output takes input 0's dtype. NPU: f32 rounded once to the output
// dtype; CPU golden: f64. Outputs may alias inputs (Note [Aliasing outputs] in fused_util.h).
#include <string>

#include "fused_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kHardtanhGrad[] = "HardtanhGrad", kHardswishGrad[] = "HardswishGrad",
               kHardsigmoidGrad[] = "HardsigmoidGrad", kLeakyReluGrad[] = "LeakyReluGrad";

template <const char* Op>
std::vector<TensorMeta> infer_grad(std::span<const TensorMeta> in, const Attrs&) {
  const Shape shape = fused::broadcast_inputs(in, Op);
  for (std::size_t i = 0; i < in.size(); ++i) require_floating(in, static_cast<int>(i), Op);
  return {{shape, in[0].dtype}};
}

std::vector<TensorMeta> infer_hardtanh_grad(std::span<const TensorMeta> in, const Attrs& attrs) {
  if (attrs.get_float("min_val", -1) > attrs.get_float("max_val", 1)) {
    fail(kHardtanhGrad, "min_val must not exceed max_val");
  }
  return infer_grad<kHardtanhGrad>(in, attrs);
}

KernelCost cost(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, 2);
}

template <class T>
void hardtanh_grad_kernel(KernelContext& ctx) {
  const T lo = static_cast<T>(ctx.attrs.get_float("min_val", -1)),
          hi = static_cast<T>(ctx.attrs.get_float("max_val", 1));
  fused::map_inputs<2, T>(ctx, [lo, hi](T dy, T x) { return x <= lo || x >= hi ? T(0) : dy; });
}

template <class T>
void hardswish_grad_kernel(KernelContext& ctx) {
  fused::map_inputs<2, T>(ctx, [](T dy, T x) { return x < T(-3) ? T(0) : x < T(3) ? dy * (x / T(3) + T(0.5)) : dy; });
}

template <class T>
void hardsigmoid_grad_kernel(KernelContext& ctx) {
  fused::map_inputs<2, T>(ctx, [](T dy, T x) { return x > T(-3) && x < T(3) ? dy / T(6) : T(0); });
}

template <class T>
void leaky_relu_grad_kernel(KernelContext& ctx) {
  const T slope = static_cast<T>(ctx.attrs.get_float("negative_slope", 0.01));
  fused::map_inputs<2, T>(ctx, [slope](T dy, T x) { return x > T(0) ? dy : dy * slope; });
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kLeakyReluGrad,
                              .category = OpCategory::kVector,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_grad<kLeakyReluGrad>,
                              .cost = cost});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kHardtanhGrad,
                              .category = OpCategory::kVector,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_hardtanh_grad,
                              .cost = cost});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kHardswishGrad,
                              .category = OpCategory::kVector,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_grad<kHardswishGrad>,
                              .cost = cost});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kHardsigmoidGrad,
                              .category = OpCategory::kVector,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_grad<kHardsigmoidGrad>,
                              .cost = cost});
NPUSCOPE_REGISTER_FLOAT_KERNELS(kHardtanhGrad, hardtanh_grad_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kHardswishGrad, hardswish_grad_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kHardsigmoidGrad, hardsigmoid_grad_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kLeakyReluGrad, leaky_relu_grad_kernel);

}  // namespace npuscope::emulator::kernels

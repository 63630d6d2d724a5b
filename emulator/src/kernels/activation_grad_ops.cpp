// Activations and their gradients for training, each mirroring a PyTorch 1.13 CPU aten op:
//   GeluV2       (x; approximate = "none" | "tanh") -> y        aten gelu
//                "none" is the erf form on the NPU too (Ascend's aclnnGeluV2), unlike the ONNX
//                "Gelu" (tanh form with a Padé tanh, activation_ops.cpp).
//   GeluGrad     (dy, x; approximate) -> dx                     aten gelu_backward
//   SiluGrad     (dy, x) -> dx = dy·s·(1 + x·(1 − s)), s = sigmoid(x)   aten silu_backward
//   SigmoidGrad  (dy, y) -> dx = dy·(1 − y)·y                   aten sigmoid_backward
//   TanhGrad     (dy, y) -> dx = dy·(1 − y²)                    aten tanh_backward
//   DropoutDoMask (x, mask bool; scale) -> y = x·mask·scale     aten native_dropout after its mask
//                is drawn, and native_dropout_backward(grad, mask, scale) (a NaN x stays NaN where the
//                mask is false, as x·0 does in aten)
// Inputs broadcast as numpy; the output takes input 0's dtype. NPU: f32 rounded once to the output
// dtype; CPU golden: f64. Outputs may alias inputs (Note [Aliasing outputs] in fused_util.h).
#include <cmath>
#include <string>

#include "fused_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kGeluV2[] = "GeluV2", kGeluGrad[] = "GeluGrad", kSiluGrad[] = "SiluGrad", kSigmoidGrad[] = "SigmoidGrad",
               kTanhGrad[] = "TanhGrad", kDropoutDoMask[] = "DropoutDoMask";

// aten's constants (ATen/native/cpu/Activation.cpp): 1/√2, 2/√π, and the tanh form's √(2/π) and κ.
constexpr double kSqrt1_2 = 0.70710678118654752440, kTwoBySqrtPi = 1.12837916709551257390;
constexpr double kBeta = 1.41421356237309504880 * kTwoBySqrtPi * 0.5, kKappa = 0.044715;

bool tanh_form(const Attrs& attrs, const char* op) {
  const std::string a = attrs.get_string("approximate", "none");
  if (a != "none" && a != "tanh") fail(op, "approximate must be \"none\" or \"tanh\", got \"" + a + "\"");
  return a == "tanh";
}

// Floating inputs broadcast together, input 0's dtype.
template <const char* Op>
std::vector<TensorMeta> infer_float_map(std::span<const TensorMeta> in, const Attrs&) {
  const Shape shape = fused::broadcast_inputs(in, Op);
  for (std::size_t i = 0; i < in.size(); ++i) require_floating(in, static_cast<int>(i), Op);
  return {{shape, in[0].dtype}};
}

template <const char* Op>
std::vector<TensorMeta> infer_gelu(std::span<const TensorMeta> in, const Attrs& attrs) {
  tanh_form(attrs, Op);
  return infer_float_map<Op>(in, attrs);
}

std::vector<TensorMeta> infer_do_mask(std::span<const TensorMeta> in, const Attrs& attrs) {
  require_floating(in, 0, kDropoutDoMask);
  if (in[1].dtype != DType::kBool) {
    fail(kDropoutDoMask, "mask must be bool, got " + std::string(dtype_name(in[1].dtype)));
  }
  if (in[1].shape != in[0].shape) {
    fail(kDropoutDoMask, "mask " + shape_str(in[1].shape) + " must have x's shape " + shape_str(in[0].shape));
  }
  attrs.get_float("scale", 1);
  return {{in[0].shape, in[0].dtype}};
}

template <int Flops>
KernelCost cost(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, Flops);
}

// ---- kernels ------------------------------------------------------------------------------------

template <class T>
void gelu_kernel(KernelContext& ctx) {
  if (tanh_form(ctx.attrs, kGeluV2)) {
    fused::map_inputs<1, T>(
        ctx, [](T x) { return T(0.5) * x * (T(1) + std::tanh(T(kBeta) * (x + T(kKappa) * x * x * x))); });
  } else {
    fused::map_inputs<1, T>(ctx, [](T x) { return x * T(0.5) * (T(1) + std::erf(x * T(kSqrt1_2))); });
  }
}

template <class T>
void gelu_grad_kernel(KernelContext& ctx) {
  if (tanh_form(ctx.attrs, kGeluGrad)) {
    fused::map_inputs<2, T>(ctx, [](T dy, T x) {
      const T x_sq = x * x, inner = T(kBeta) * (x + T(kKappa) * x_sq * x), t = std::tanh(inner);
      const T left = T(0.5) * x, right = T(1) + t;
      const T left_d = T(0.5) * right;
      const T right_d = left * (T(1) - t * t) * T(kBeta) * (T(1) + T(3 * kKappa) * x_sq);
      return dy * (left_d + right_d);
    });
  } else {
    fused::map_inputs<2, T>(ctx, [](T dy, T x) {
      constexpr T kAlpha = T(kTwoBySqrtPi * kSqrt1_2 * 0.5);
      const T cdf = T(0.5) * (T(1) + std::erf(x * T(kSqrt1_2)));
      const T pdf = kAlpha * std::exp(T(-0.5) * x * x);
      return dy * (cdf + x * pdf);
    });
  }
}

template <class T>
void silu_grad_kernel(KernelContext& ctx) {
  fused::map_inputs<2, T>(ctx, [](T dy, T x) {
    const T s = T(1) / (T(1) + std::exp(-x));
    return dy * s * (T(1) + x * (T(1) - s));
  });
}

template <class T>
void sigmoid_grad_kernel(KernelContext& ctx) {
  fused::map_inputs<2, T>(ctx, [](T dy, T y) { return dy * (T(1) - y) * y; });
}

template <class T>
void tanh_grad_kernel(KernelContext& ctx) {
  fused::map_inputs<2, T>(ctx, [](T dy, T y) { return dy * (T(1) - y * y); });
}

template <class T>
void do_mask_kernel(KernelContext& ctx) {
  const T scale = static_cast<T>(ctx.attrs.get_float("scale", 1));
  std::vector<T> x = load<T>(ctx.inputs[0], ctx);
  const auto* mask = ctx.inputs[1].as<const std::uint8_t>();
  for (std::size_t j = 0; j < x.size(); ++j) x[j] = x[j] * static_cast<T>(mask[j] != 0) * scale;
  store<T>(ctx.outputs[0], x.data(), ctx);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kGeluV2,
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_gelu<kGeluV2>,
                              .cost = cost<10>});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kGeluGrad,
                              .category = OpCategory::kVector,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_gelu<kGeluGrad>,
                              .cost = cost<16>});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kSiluGrad,
                              .category = OpCategory::kVector,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_float_map<kSiluGrad>,
                              .cost = cost<9>});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kSigmoidGrad,
                              .category = OpCategory::kVector,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_float_map<kSigmoidGrad>,
                              .cost = cost<3>});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kTanhGrad,
                              .category = OpCategory::kVector,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_float_map<kTanhGrad>,
                              .cost = cost<3>});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kDropoutDoMask,
                              .category = OpCategory::kVector,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_do_mask,
                              .cost = cost<2>});

NPUSCOPE_REGISTER_FLOAT_KERNELS(kGeluV2, gelu_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kGeluGrad, gelu_grad_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kSiluGrad, silu_grad_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kSigmoidGrad, sigmoid_grad_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kTanhGrad, tanh_grad_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kDropoutDoMask, do_mask_kernel);

}  // namespace npuscope::emulator::kernels

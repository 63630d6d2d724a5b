// Gelu, FastGelu, Silu: element-wise activations, output shape and dtype of the input.
//   Gelu      NPU: tanh form with a Padé tanh, in f32 (see Note [NPU Gelu] in npu_approx.h).
//             CPU golden: the exact erf form 0.5·x·(1 + erf(x/√2)) in f64 — or, when the ONNX
//             attribute approximate = "tanh" is given, the tanh form with the exact tanh.
//   FastGelu  x / (1 + e^(−1.702·x)) on both backends (f32 on the NPU, f64 on the CPU).
//   Silu      x · sigmoid(x) = x / (1 + e^(−x)).
#include <cmath>
#include <string>
#include <vector>

#include "elementwise_map.h"
#include "npu_approx.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kGelu[] = "Gelu", kFastGelu[] = "FastGelu", kSilu[] = "Silu";

template <const char* Op>
std::vector<TensorMeta> infer_activation(std::span<const TensorMeta> in, const Attrs&) {
  require_floating(in, 0, Op);
  return {{in[0].shape, in[0].dtype}};
}

std::vector<TensorMeta> infer_gelu(std::span<const TensorMeta> in, const Attrs& attrs) {
  const std::string a = attrs.get_string("approximate", "none");  // ONNX Gelu-20
  if (a != "none" && a != "tanh") fail(kGelu, "approximate must be \"none\" or \"tanh\", got \"" + a + "\"");
  return infer_activation<kGelu>(in, attrs);
}

KernelCost cost_gelu(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, 10);  // cube of x, the Padé polynomials, a divide and the outer mul-add
}
KernelCost cost_sigmoid_like(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, 6);  // a scale, an exp, an add and a divide
}

void gelu_npu(KernelContext& c) {
  unary_kernel<float>(c, [](float x) { return gelu_tanh_form(x, pade_tanh<float>); });
}

void gelu_cpu(KernelContext& c) {
  if (c.attrs.get_string("approximate", "none") == "tanh") {
    unary_kernel<double>(c, [](double x) { return gelu_tanh_form(x, [](double u) { return std::tanh(u); }); });
    return;
  }
  constexpr double kInvSqrt2 = 0.7071067811865476;
  unary_kernel<double>(c, [](double x) { return 0.5 * x * (1.0 + std::erf(x * kInvSqrt2)); });
}

template <class T>
void fast_gelu_kernel(KernelContext& c) {
  unary_kernel<T>(c, fast_gelu<T>);
}

// exp(-x) overflowing to inf for very negative x gives x/inf = -0, the right limit.
template <class T>
void silu_kernel(KernelContext& c) {
  unary_kernel<T>(c, [](T x) { return x / (T(1) + std::exp(-x)); });
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kGelu,
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_gelu,
                              .cost = cost_gelu});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kFastGelu,
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_activation<kFastGelu>,
                              .cost = cost_sigmoid_like});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kSilu,
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_activation<kSilu>,
                              .cost = cost_sigmoid_like});

NPUSCOPE_REGISTER_KERNEL(kGelu, Backend::kNpu, gelu_npu);
NPUSCOPE_REGISTER_KERNEL(kGelu, Backend::kCpu, gelu_cpu);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kFastGelu, fast_gelu_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kSilu, silu_kernel);

}  // namespace npuscope::emulator::kernels

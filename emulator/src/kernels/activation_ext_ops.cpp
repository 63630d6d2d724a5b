// The ONNX activations beyond activation_ops.cpp, with ONNX's names, attributes and defaults:
//   LeakyRelu(alpha=0.01)  x < 0 ? alpha·x : x
//   PRelu(x, slope)        x < 0 ? slope·x : x, slope unidirectionally broadcast to x; numeric
//   Elu(alpha=1)           x > 0 ? x : alpha·(e^x − 1)
//   Selu(alpha, gamma)     x > 0 ? gamma·x : gamma·alpha·(e^x − 1)  (defaults 1.6732…, 1.0507…)
//   Celu(alpha=1)          max(0, x) + min(0, alpha·(e^(x/alpha) − 1))
//   HardSigmoid(alpha=0.2, beta=0.5)  clamp(alpha·x + beta, 0, 1)
//   HardSwish              x · HardSigmoid(x; 1/6, 1/2)
//   ThresholdedRelu(alpha=1)  x > alpha ? x : 0
//   Shrink(bias=0, lambd=0.5)  x < −lambd ? x + bias : x > lambd ? x − bias : 0; numeric
//   Softplus               ln(1 + e^x), as max(x, 0) + ln(1 + e^−|x|) so that e^x cannot overflow
//   Softsign               x / (1 + |x|)
//   Erf                    the error function
// NPU: computed in f32 (e^x − 1 as written, like a vector unit's exp then subtract) and rounded to
// the output dtype per op; CPU golden: f64 with expm1/log1p. PRelu on integers is exact in int64;
// Shrink on integers computes in f64 and truncates, as ONNX Runtime does.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "elementwise_ext_util.h"
#include "vector_math.h"

namespace npuscope::emulator::kernels {
namespace {

using ext::cost_flops;
using ext::elementwise_schema;
using ext::infer_float_unary;
using ext::infer_numeric_unary;

constexpr char kLeakyRelu[] = "LeakyRelu", kPRelu[] = "PRelu", kElu[] = "Elu", kSelu[] = "Selu", kCelu[] = "Celu",
               kHardSigmoid[] = "HardSigmoid", kHardSwish[] = "HardSwish", kThresholdedRelu[] = "ThresholdedRelu",
               kShrink[] = "Shrink", kSoftplus[] = "Softplus", kSoftsign[] = "Softsign", kErf[] = "Erf";

// ONNX's Selu defaults (the f32 values the spec gives).
constexpr double kSeluAlpha = 1.67326319217681884765625, kSeluGamma = 1.05070102214813232421875;

std::vector<TensorMeta> infer_prelu(std::span<const TensorMeta> in, const Attrs&) {
  if (in[0].dtype == DType::kBool) fail(kPRelu, "input 0 must be numeric, got bool");
  require_same_dtype(in, kPRelu);
  // Unidirectional: slope broadcasts to x, never the other way round.
  if (broadcast_shapes(in[0].shape, in[1].shape, kPRelu) != in[0].shape) {
    fail(kPRelu,
         "slope of shape " + shape_str(in[1].shape) + " does not broadcast to x of shape " + shape_str(in[0].shape));
  }
  return {{in[0].shape, in[0].dtype}};
}

std::vector<TensorMeta> infer_celu(std::span<const TensorMeta> in, const Attrs& attrs) {
  if (attrs.get_float("alpha", 1.0) == 0) fail(kCelu, "alpha must not be 0");
  return infer_float_unary<kCelu>(in, attrs);
}

// e^x − 1: as written on the NPU (float), exactly (expm1) in the golden.
template <class T>
T exp_minus_one(T x) {
  if constexpr (std::is_same_v<T, float>) {
    return std::exp(x) - 1.0f;
  } else {
    return std::expm1(x);
  }
}

template <class T>
void leaky_relu_kernel(KernelContext& c) {
  const T alpha = static_cast<T>(c.attrs.get_float("alpha", 0.01));
  unary_kernel<T>(c, [alpha](T x) { return x < 0 ? alpha * x : x; });
}

template <class T>
void prelu_kernel(KernelContext& c) {
  ext::numeric_binary_kernel<T>(c, [](auto x, auto slope) {
    if constexpr (std::is_integral_v<decltype(x)>) {
      return x < 0 ? ext::wrap_mul(slope, x) : x;
    } else {
      return x < 0 ? slope * x : x;
    }
  });
}

template <class T>
void elu_kernel(KernelContext& c) {
  const T alpha = static_cast<T>(c.attrs.get_float("alpha", 1.0));
  unary_kernel<T>(c, [alpha](T x) { return x > 0 ? x : alpha * exp_minus_one(x); });
}

template <class T>
void selu_kernel(KernelContext& c) {
  const T alpha = static_cast<T>(c.attrs.get_float("alpha", kSeluAlpha));
  const T gamma = static_cast<T>(c.attrs.get_float("gamma", kSeluGamma));
  unary_kernel<T>(c, [alpha, gamma](T x) { return x > 0 ? gamma * x : gamma * (alpha * exp_minus_one(x)); });
}

template <class T>
void celu_kernel(KernelContext& c) {
  const T alpha = static_cast<T>(c.attrs.get_float("alpha", 1.0));
  unary_kernel<T>(c, [alpha](T x) { return x > 0 ? x : alpha * exp_minus_one(x / alpha); });
}

// clamp(v, 0, 1) keeping NaN.
template <class T>
T unit_clamp(T v) {
  return v < 0 ? T(0) : v > 1 ? T(1) : v;
}

template <class T>
void hard_sigmoid_kernel(KernelContext& c) {
  const T alpha = static_cast<T>(c.attrs.get_float("alpha", 0.2));
  const T beta = static_cast<T>(c.attrs.get_float("beta", 0.5));
  unary_kernel<T>(c, [alpha, beta](T x) { return unit_clamp(alpha * x + beta); });
}

template <class T>
void hard_swish_kernel(KernelContext& c) {
  const T alpha = T(1) / T(6);
  unary_kernel<T>(c, [alpha](T x) { return x * unit_clamp(alpha * x + T(0.5)); });
}

template <class T>
void thresholded_relu_kernel(KernelContext& c) {
  const T alpha = static_cast<T>(c.attrs.get_float("alpha", 1.0));
  unary_kernel<T>(c, [alpha](T x) { return x > alpha ? x : T(0); });  // NaN -> 0, as ONNX's reference
}

// A double -> int64 conversion that saturates instead of being undefined out of range.
std::int64_t saturate_i64(double d) {
  if (d != d) return 0;
  if (d <= -9.2233720368547758e18) return std::numeric_limits<std::int64_t>::min();
  if (d >= 9.2233720368547758e18) return std::numeric_limits<std::int64_t>::max();
  return static_cast<std::int64_t>(d);
}

template <class T>
void shrink_kernel(KernelContext& c) {
  const double bias = c.attrs.get_float("bias", 0.0), lambd = c.attrs.get_float("lambd", 0.5);
  ext::numeric_unary_kernel<T>(c, [bias, lambd](auto x) {
    using E = decltype(x);
    if constexpr (std::is_integral_v<E>) {
      const double d = static_cast<double>(x);
      return saturate_i64(d < -lambd ? d + bias : d > lambd ? d - bias : 0.0);
    } else {
      const E b = static_cast<E>(bias), l = static_cast<E>(lambd);
      return x < -l ? x + b : x > l ? x - b : E(0);  // NaN -> 0, as ONNX's reference
    }
  });
}

template <class T>
void softplus_kernel(KernelContext& c) {
  unary_kernel<T>(c, [](T x) {
    const T pos = x > 0 ? x : T(0);
    if constexpr (std::is_same_v<T, float>) {
      return pos + std::log(1.0f + std::exp(-std::fabs(x)));
    } else {
      return pos + std::log1p(std::exp(-std::fabs(x)));
    }
  });
}

template <class T>
void softsign_kernel(KernelContext& c) {
  unary_kernel<T>(c, [](T x) { return x / (T(1) + std::fabs(x)); });
}

// Note [Vector erf]
// GELU as exported to ONNX is x * 0.5 * (1 + erf(x / sqrt 2)), and the golden's scalar f64 erf was a
// tenth of a ConvNeXt-tiny pass on `cpu` (8.5 M calls). glibc's vector math library has the AVX2 erf
// of four doubles, within 4 ulp of the exact value: far below the f32 rounding of every result (2^29
// ulp of f64), so the golden keeps its meaning; the NPU's f32 erf takes its eight-lane erff (erf_n,
// Note [Vector math] in vector_math.h).

template <class T>
void erf_kernel(KernelContext& c) {
  unary_block_kernel<T>(c, [](const T* a, T* r, std::int64_t m) { erf_n(a, r, m); });
}

}  // namespace

NPUSCOPE_REGISTER_OP(elementwise_schema(kLeakyRelu, 1, infer_float_unary<kLeakyRelu>, cost_flops<2>));
NPUSCOPE_REGISTER_OP(elementwise_schema(kPRelu, 2, infer_prelu, cost_flops<2>));
NPUSCOPE_REGISTER_OP(elementwise_schema(kElu, 1, infer_float_unary<kElu>, cost_flops<8>));
NPUSCOPE_REGISTER_OP(elementwise_schema(kSelu, 1, infer_float_unary<kSelu>, cost_flops<9>));
NPUSCOPE_REGISTER_OP(elementwise_schema(kCelu, 1, infer_celu, cost_flops<9>));
NPUSCOPE_REGISTER_OP(elementwise_schema(kHardSigmoid, 1, infer_float_unary<kHardSigmoid>, cost_flops<4>));
NPUSCOPE_REGISTER_OP(elementwise_schema(kHardSwish, 1, infer_float_unary<kHardSwish>, cost_flops<5>));
NPUSCOPE_REGISTER_OP(elementwise_schema(kThresholdedRelu, 1, infer_float_unary<kThresholdedRelu>, cost_flops<1>));
NPUSCOPE_REGISTER_OP(elementwise_schema(kShrink, 1, infer_numeric_unary<kShrink>, cost_flops<3>));
// Softplus: exp, log, abs, add; Softsign: abs, add, divide; Erf: a polynomial and an exp.
NPUSCOPE_REGISTER_OP(elementwise_schema(kSoftplus, 1, infer_float_unary<kSoftplus>, cost_flops<14>));
NPUSCOPE_REGISTER_OP(elementwise_schema(kSoftsign, 1, infer_float_unary<kSoftsign>, cost_flops<6>));
NPUSCOPE_REGISTER_OP(elementwise_schema(kErf, 1, infer_float_unary<kErf>, cost_flops<12>));

NPUSCOPE_REGISTER_FLOAT_KERNELS(kLeakyRelu, leaky_relu_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kPRelu, prelu_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kElu, elu_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kSelu, selu_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kCelu, celu_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kHardSigmoid, hard_sigmoid_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kHardSwish, hard_swish_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kThresholdedRelu, thresholded_relu_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kShrink, shrink_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kSoftplus, softplus_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kSoftsign, softsign_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kErf, erf_kernel);

}  // namespace npuscope::emulator::kernels

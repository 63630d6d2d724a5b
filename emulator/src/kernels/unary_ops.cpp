// Relu, Neg, Abs, Exp, Log, Sqrt, Rsqrt, Tanh, Sigmoid: element-wise, output shape and dtype of the
// input. NPU: computed in f32 and rounded to the output dtype per op; CPU golden: computed in f64.
// Exp, Tanh and Sigmoid go through vector_math.h (Note [Vector math]).
// Relu, Neg and Abs also take integer tensors, computed exactly in int64 on both backends (C
// wrap-around on overflow, as numpy and torch do: neg(INT32_MIN) == INT32_MIN).
// Log takes CANN's attributes: y = log_base(shift + scale * x), base -1 (the default) for e; base 2
// and 10 (torch.log2, torch.log10) are computed by log2 and log10, so an exact power stays exact.
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "elementwise_map.h"
#include "vector_math.h"

namespace npuscope::emulator::kernels {
namespace {

// Op names as template arguments, so that the infer functions' errors name the op.
constexpr char kRelu[] = "Relu", kNeg[] = "Neg", kAbs[] = "Abs", kExp[] = "Exp", kLog[] = "Log", kSqrt[] = "Sqrt",
               kRsqrt[] = "Rsqrt", kTanh[] = "Tanh", kSigmoid[] = "Sigmoid";

template <const char* Op>
std::vector<TensorMeta> infer_floating(std::span<const TensorMeta> in, const Attrs&) {
  require_floating(in, 0, Op);
  return {{in[0].shape, in[0].dtype}};
}

std::vector<TensorMeta> infer_log(std::span<const TensorMeta> in, const Attrs& attrs) {
  const double base = attrs.get_float("base", -1.0);
  if (base != -1.0 && !(base > 0 && base != 1 && std::isfinite(base))) {
    fail(kLog, "base must be -1 (e) or a positive number other than 1, got " + std::to_string(base));
  }
  return infer_floating<kLog>(in, attrs);
}

// Relu / Neg / Abs: any numeric dtype but bool.
template <const char* Op>
std::vector<TensorMeta> infer_numeric(std::span<const TensorMeta> in, const Attrs&) {
  if (in[0].dtype == DType::kBool) fail(Op, "input 0 must be numeric, got bool");
  return {{in[0].shape, in[0].dtype}};
}

KernelCost cost_simple(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, 1);
}
KernelCost cost_sqrt(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, 4);
}
KernelCost cost_exp_log(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, 6);
}
KernelCost cost_sigmoid_tanh(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, 8);  // an exp, an add and a divide (tanh: two exps' worth)
}

// Unsigned arithmetic so that negating INT64_MIN wraps instead of being undefined.
std::int64_t neg_i64(std::int64_t x) { return static_cast<std::int64_t>(0 - static_cast<std::uint64_t>(x)); }

// F: functor templated on the element type, applied in T for floats and in int64 for integers.
template <class T, class F>
void numeric_kernel(KernelContext& ctx, F f) {
  if (is_floating(ctx.inputs[0].dtype)) {
    ieee_unary_kernel<T>(ctx, f);  // relu, abs and neg are exact
    return;
  }
  std::vector<std::int64_t> x(static_cast<std::size_t>(ctx.inputs[0].numel));
  load_i64(ctx.inputs[0], x.data());
  for (auto& e : x) e = f(e);
  store_i64(ctx.outputs[0], x.data());
}

// Generic lambdas: instantiated for T (float / double) and for int64.
constexpr auto relu_fn = [](auto x) { return x < decltype(x)(0) ? decltype(x)(0) : x; };  // NaN stays NaN
constexpr auto abs_fn = [](auto x) {
  if constexpr (std::is_integral_v<decltype(x)>) {
    return x < 0 ? neg_i64(x) : x;
  } else {
    return std::fabs(x);
  }
};
constexpr auto neg_fn = [](auto x) {
  if constexpr (std::is_integral_v<decltype(x)>) {
    return neg_i64(x);
  } else {
    return -x;
  }
};

template <class T>
void relu_kernel(KernelContext& c) {
  numeric_kernel<T>(c, relu_fn);
}
template <class T>
void abs_kernel(KernelContext& c) {
  numeric_kernel<T>(c, abs_fn);
}
template <class T>
void neg_kernel(KernelContext& c) {
  numeric_kernel<T>(c, neg_fn);
}
template <class T>
void exp_kernel(KernelContext& c) {
  unary_block_kernel<T>(c, [](const T* a, T* r, std::int64_t m) { exp_n(a, r, m); });
}
template <class T>
void log_kernel(KernelContext& c) {
  const double base = c.attrs.get_float("base", -1.0);
  const T scale = static_cast<T>(c.attrs.get_float("scale", 1.0)),
          shift = static_cast<T>(c.attrs.get_float("shift", 0.0));
  if (base == 2.0) {
    unary_kernel<T>(c, [=](T x) { return std::log2(shift + scale * x); });
  } else if (base == 10.0) {
    unary_kernel<T>(c, [=](T x) { return std::log10(shift + scale * x); });
  } else {
    const T divisor = base == -1.0 ? T(1) : static_cast<T>(std::log(base));
    unary_kernel<T>(c, [=](T x) { return std::log(shift + scale * x) / divisor; });
  }
}
template <class T>
void sqrt_kernel(KernelContext& c) {
  ieee_unary_kernel<T>(c, [](auto x) { return std::sqrt(x); });
}
template <class T>
void rsqrt_kernel(KernelContext& c) {
  unary_kernel<T>(c, [](T x) { return T(1) / std::sqrt(x); });
}
template <class T>
void tanh_kernel(KernelContext& c) {
  unary_block_kernel<T>(c, [](const T* a, T* r, std::int64_t m) { tanh_n(a, r, m); });
}
template <class T>
void sigmoid_kernel(KernelContext& c) {
  unary_block_kernel<T>(c, [](const T* a, T* r, std::int64_t m) { sigmoid_n(a, r, m); });
}

constexpr OpSchema unary_schema(const char* type, OpCategory category, InferFn infer, CostFn cost) {
  return OpSchema{.type = type, .category = category, .min_inputs = 1, .max_inputs = 1, .infer = infer, .cost = cost};
}

}  // namespace

NPUSCOPE_REGISTER_OP(unary_schema(kRelu, OpCategory::kVector, infer_numeric<kRelu>, cost_simple));
NPUSCOPE_REGISTER_OP(unary_schema(kNeg, OpCategory::kVector, infer_numeric<kNeg>, cost_simple));
NPUSCOPE_REGISTER_OP(unary_schema(kAbs, OpCategory::kVector, infer_numeric<kAbs>, cost_simple));
// Exp and Log are on CANN's precision-sensitive list: kept f32 under allow_mix_precision.
NPUSCOPE_REGISTER_OP(unary_schema(kExp, OpCategory::kPrecisionSensitive, infer_floating<kExp>, cost_exp_log));
NPUSCOPE_REGISTER_OP(unary_schema(kLog, OpCategory::kPrecisionSensitive, infer_log, cost_exp_log));
NPUSCOPE_REGISTER_OP(unary_schema(kSqrt, OpCategory::kVector, infer_floating<kSqrt>, cost_sqrt));
NPUSCOPE_REGISTER_OP(unary_schema(kRsqrt, OpCategory::kVector, infer_floating<kRsqrt>, cost_sqrt));
NPUSCOPE_REGISTER_OP(unary_schema(kTanh, OpCategory::kVector, infer_floating<kTanh>, cost_sigmoid_tanh));
NPUSCOPE_REGISTER_OP(unary_schema(kSigmoid, OpCategory::kVector, infer_floating<kSigmoid>, cost_sigmoid_tanh));

NPUSCOPE_REGISTER_FLOAT_KERNELS(kRelu, relu_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kNeg, neg_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kAbs, abs_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kExp, exp_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kLog, log_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kSqrt, sqrt_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kRsqrt, rsqrt_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kTanh, tanh_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kSigmoid, sigmoid_kernel);

}  // namespace npuscope::emulator::kernels

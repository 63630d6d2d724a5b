// Min, Max, Sum, Mean: ONNX's variadic element-wise ops (one or more inputs of one dtype, numpy
// broadcasting across all of them). Clip(min, max): bounds as attributes, as in ONNX before opset
// 11 (the importer's adapter turns opset 11's optional inputs into these attributes).
//   Min/Max  numeric; NaN propagates as numpy.minimum/maximum do (any NaN input gives NaN).
//   Sum      numeric; Mean floating only. NPU: accumulated in f32, rounded to the output dtype once.
//   Clip     numeric; min(max(x, min), max), so min > max gives max everywhere; NaN stays NaN.
//            Defaults: ±inf for floats, the whole range for integers.
// Integers are exact in int64 on both backends (Sum wraps as C and numpy do). CPU golden: f64.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "elementwise_ext_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kMin[] = "Min", kMax[] = "Max", kSum[] = "Sum", kMean[] = "Mean", kClip[] = "Clip";

template <const char* Op>
std::vector<TensorMeta> infer_variadic(std::span<const TensorMeta> in, const Attrs&) {
  const Shape shape = ext::broadcast_all(in, Op);
  if (in[0].dtype == DType::kBool) fail(Op, "inputs must be numeric, got bool");
  return {{shape, in[0].dtype}};
}

std::vector<TensorMeta> infer_mean(std::span<const TensorMeta> in, const Attrs& attrs) {
  require_floating(in, 0, kMean);
  return infer_variadic<kMean>(in, attrs);
}

// One operation per element per extra input (Mean: and the divide).
KernelCost cost_fold(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, static_cast<double>(in.size() > 1 ? in.size() - 1 : 1));
}
KernelCost cost_mean(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, static_cast<double>(in.size()));
}

// NaN-propagating: a NaN on either side wins.
constexpr auto min_fn = [](auto a, auto b) { return (a < b || a != a) ? a : b; };
constexpr auto max_fn = [](auto a, auto b) { return (a > b || a != a) ? a : b; };
constexpr auto sum_fn = [](auto a, auto b) {
  if constexpr (std::is_integral_v<decltype(a)>) {
    return ext::wrap_add(a, b);
  } else {
    return a + b;
  }
};

template <class T, class F>
void fold_kernel(KernelContext& c) {
  if (is_floating(c.inputs[0].dtype)) {
    std::vector<T> r = ext::fold_inputs<T>(c, F{});
    ext::store_result(c, r);
  } else {
    std::vector<std::int64_t> r = ext::fold_inputs<std::int64_t>(c, F{});
    ext::store_result(c, r);
  }
}

template <class T>
void mean_kernel(KernelContext& c) {
  std::vector<T> r = ext::fold_inputs<T>(c, sum_fn);
  const T n = static_cast<T>(c.inputs.size());
  for (auto& e : r) e /= n;
  ext::store_result(c, r);
}

// ---- Clip ---------------------------------------------------------------------------------------

std::vector<TensorMeta> infer_clip(std::span<const TensorMeta> in, const Attrs& attrs) {
  if (in[0].dtype == DType::kBool) fail(kClip, "input 0 must be numeric, got bool");
  for (const char* name : {"min", "max"}) {
    if (attrs.has(name) && std::isnan(attrs.get_float(name, 0))) fail(kClip, std::string(name) + " is NaN");
  }
  return {{in[0].shape, in[0].dtype}};
}

// An integer bound: an int64 attribute exactly; a float one rounded inwards (x >= 1.5 is x >= 2
// for integers), saturating; absent: no bound.
std::int64_t int_bound(const Attrs& attrs, const char* name, bool lower) {
  constexpr std::int64_t kLo = std::numeric_limits<std::int64_t>::min(), kHi = std::numeric_limits<std::int64_t>::max();
  for (const auto& [key, value] : attrs.items()) {
    if (key != name) continue;
    if (const auto* i = std::get_if<std::int64_t>(&value)) return *i;
    const double d = lower ? std::ceil(attrs.get_float(name, 0)) : std::floor(attrs.get_float(name, 0));
    if (d <= -9.2233720368547758e18) return kLo;
    if (d >= 9.2233720368547758e18) return kHi;
    return static_cast<std::int64_t>(d);
  }
  return lower ? kLo : kHi;
}

template <class E>
E clamp_to(E x, E lo, E hi) {
  const E v = x < lo ? lo : x;
  return v > hi ? hi : v;
}

template <class T>
void clip_kernel(KernelContext& c) {
  if (!is_floating(c.inputs[0].dtype)) {
    const std::int64_t lo = int_bound(c.attrs, "min", true), hi = int_bound(c.attrs, "max", false);
    std::vector<std::int64_t> x(static_cast<std::size_t>(c.inputs[0].numel));
    load_i64(c.inputs[0], x.data());
    for (auto& e : x) e = clamp_to(e, lo, hi);
    ext::store_result(c, x);
    return;
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const T lo = static_cast<T>(c.attrs.get_float("min", -kInf)), hi = static_cast<T>(c.attrs.get_float("max", kInf));
  unary_kernel<T>(c, [lo, hi](T x) { return clamp_to(x, lo, hi); });
}

constexpr OpSchema variadic_schema(const char* type, InferFn infer, CostFn cost) {
  return OpSchema{
      .type = type, .category = OpCategory::kVector, .min_inputs = 1, .max_inputs = -1, .infer = infer, .cost = cost};
}

}  // namespace

NPUSCOPE_REGISTER_OP(variadic_schema(kMin, infer_variadic<kMin>, cost_fold));
NPUSCOPE_REGISTER_OP(variadic_schema(kMax, infer_variadic<kMax>, cost_fold));
NPUSCOPE_REGISTER_OP(variadic_schema(kSum, infer_variadic<kSum>, cost_fold));
NPUSCOPE_REGISTER_OP(variadic_schema(kMean, infer_mean, cost_mean));
NPUSCOPE_REGISTER_OP(OpSchema{.type = kClip,
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_clip,
                              .cost = ext::cost_flops<2>});

NPUSCOPE_REGISTER_FLOAT_KERNELS(kMin, fold_kernel, decltype(min_fn));
NPUSCOPE_REGISTER_FLOAT_KERNELS(kMax, fold_kernel, decltype(max_fn));
NPUSCOPE_REGISTER_FLOAT_KERNELS(kSum, fold_kernel, decltype(sum_fn));
NPUSCOPE_REGISTER_FLOAT_KERNELS(kMean, mean_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kClip, clip_kernel);

}  // namespace npuscope::emulator::kernels

// Trilu, CumSum, Hardmax, EyeLike, Range with ONNX semantics, and CANN's LinSpace. Operands that ONNX passes as inputs
// (Trilu's k, CumSum's axis, Range's start/limit/delta) are attributes here; the ONNX adapters read
// them.
//
//   Trilu    'upper' (default 1) keeps j - i >= k, else j - i <= k ('k' default 0), over the last
//            two dims; the rest is zero. Data movement: bytes copied exactly.
//   CumSum   'axis', 'exclusive', 'reverse'. NPU: an f32 running sum; CPU golden: f64. Integers are
//            exact in int64 and wrap to the storage type.
//   Hardmax  'axis' (default -1): 1 at the first maximum along the axis (NaN counts as the
//            maximum, as numpy's argmax), 0 elsewhere.
//   EyeLike  a rank-2 tensor shaped like the input, ones on diagonal 'k', of dtype 'dtype' (a DType
//            value; default: the input's).
//   Range    start, start + delta, ... while < limit (> limit for a negative delta); the
//            attributes 'start', 'limit', 'delta' are numbers, the output takes input 0's dtype
//            (input 0 is ONNX's start tensor; the others are accepted and ignored). Integer dtypes
//            are exact in int64 (integer attributes); floats: NPU start + i·delta in f32, CPU f64.
//   LinSpace 'num' values from 'start' to 'stop' (torch.linspace, affine_grid's base grid), in input
//            0's dtype (as Range's). As PyTorch's kernel, step = (stop - start) / (num - 1) and the
//            first half is start + i·step, the second stop - (num - 1 - i)·step, so both ends are
//            exact; NPU: the step in f32 and each value one rounding of start + i·step (PyTorch's scalar
//            path built with FMA; its vector path steps from a chunk's first value, within an ulp or
//            two of these), CPU f64; integers truncate.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <variant>

#include "movement_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kTrilu[] = "Trilu";
constexpr char kCumSum[] = "CumSum";
constexpr char kHardmax[] = "Hardmax";
constexpr char kEyeLike[] = "EyeLike";
constexpr char kRange[] = "Range";

// ---- Trilu --------------------------------------------------------------------------------------

std::vector<TensorMeta> infer_trilu(std::span<const TensorMeta> in, const Attrs& attrs) {
  if (in[0].shape.size() < 2) fail(kTrilu, "needs an input of rank >= 2, got " + shape_str(in[0].shape));
  attrs.get_int("upper", 1);
  attrs.get_int("k", 0);
  return {{in[0].shape, in[0].dtype}};
}

void trilu_kernel(KernelContext& ctx) {
  const TensorView &x = ctx.inputs[0], &y = ctx.outputs[0];
  const bool upper = ctx.attrs.get_int("upper", 1) != 0;
  const std::int64_t k = ctx.attrs.get_int("k", 0);
  const Shape& s = *x.shape;
  const std::int64_t rows = s[s.size() - 2], cols = s[s.size() - 1];
  std::vector<std::int64_t> index(static_cast<std::size_t>(x.numel));
  for (std::int64_t n = 0; n < x.numel; ++n) {
    const std::int64_t j = n % cols, i = n / cols % rows;
    index[static_cast<std::size_t>(n)] = (upper ? j - i >= k : j - i <= k) ? n : -1;
  }
  copy_indexed(x.data, y.data, dtype_size(x.dtype), index);
}

// ---- CumSum -------------------------------------------------------------------------------------

std::vector<TensorMeta> infer_cumsum(std::span<const TensorMeta> in, const Attrs& attrs) {
  const Shape& x = in[0].shape;
  if (!attrs.has("axis")) fail(kCumSum, "needs the 'axis' attribute");
  if (x.empty()) fail(kCumSum, "needs an input of rank >= 1, got a scalar");
  normalize_axis(attrs.get_int("axis", 0), static_cast<std::int64_t>(x.size()), kCumSum);
  attrs.get_int("exclusive", 0);
  attrs.get_int("reverse", 0);
  return {{x, in[0].dtype}};
}

// V: T for floats, std::uint64_t for integers (wrapping without undefined behaviour).
template <class V>
void running_sum(std::vector<V>& v, const AxisLoop& l, bool exclusive, bool reverse) {
  for (std::int64_t o = 0; o < l.outer; ++o) {
    for (std::int64_t j = 0; j < l.inner; ++j) {
      V acc = 0;
      for (std::int64_t t = 0; t < l.dim; ++t) {
        const std::int64_t a = reverse ? l.dim - 1 - t : t;
        V& e = v[static_cast<std::size_t>((o * l.dim + a) * l.inner + j)];
        const V x = e;
        e = exclusive ? acc : acc + x;
        acc += x;
      }
    }
  }
}

template <class T>
void cumsum_kernel(KernelContext& ctx) {
  const TensorView &x = ctx.inputs[0], &y = ctx.outputs[0];
  const AxisLoop l = axis_loop(*x.shape, ctx.attrs.get_int("axis", 0));
  const bool exclusive = ctx.attrs.get_int("exclusive", 0) != 0, reverse = ctx.attrs.get_int("reverse", 0) != 0;
  if (is_floating(x.dtype)) {
    std::vector<T> v = load<T>(x, ctx);
    running_sum(v, l, exclusive, reverse);
    store<T>(y, v.data(), ctx);
    return;
  }
  std::vector<std::int64_t> v(static_cast<std::size_t>(x.numel));
  load_i64(x, v.data());
  std::vector<std::uint64_t> u(v.begin(), v.end());
  running_sum(u, l, exclusive, reverse);
  for (std::size_t i = 0; i < u.size(); ++i) v[i] = static_cast<std::int64_t>(u[i]);
  store_i64(y, v.data());
}

// ---- Hardmax ------------------------------------------------------------------------------------

std::vector<TensorMeta> infer_hardmax(std::span<const TensorMeta> in, const Attrs& attrs) {
  const Shape& x = in[0].shape;
  if (x.empty()) fail(kHardmax, "needs an input of rank >= 1, got a scalar");
  normalize_axis(attrs.get_int("axis", -1), static_cast<std::int64_t>(x.size()), kHardmax);
  return {{x, in[0].dtype}};
}

template <class V>
void hardmax_values(const std::vector<V>& v, const AxisLoop& l, std::vector<std::int64_t>& out) {
  for (std::int64_t o = 0; o < l.outer; ++o) {
    for (std::int64_t j = 0; j < l.inner; ++j) {
      const std::int64_t base = o * l.dim * l.inner + j;
      std::int64_t best = 0;
      for (std::int64_t t = 1; t < l.dim; ++t) {
        const V a = v[static_cast<std::size_t>(base + t * l.inner)],
                b = v[static_cast<std::size_t>(base + best * l.inner)];
        if (b == b && (a > b || a != a)) best = t;  // a NaN wins once, and then stays
      }
      if (l.dim > 0) out[static_cast<std::size_t>(base + best * l.inner)] = 1;
    }
  }
}

template <class T>
void hardmax_kernel(KernelContext& ctx) {
  const TensorView &x = ctx.inputs[0], &y = ctx.outputs[0];
  const AxisLoop l = axis_loop(*x.shape, ctx.attrs.get_int("axis", -1));
  std::vector<std::int64_t> out(static_cast<std::size_t>(x.numel), 0);
  if (is_floating(x.dtype)) {
    hardmax_values(load<T>(x, ctx), l, out);
  } else {
    std::vector<std::int64_t> v(static_cast<std::size_t>(x.numel));
    load_i64(x, v.data());
    hardmax_values(v, l, out);
  }
  store_i64(y, out.data());  // 0 and 1 are exact in every dtype
}

// ---- EyeLike ------------------------------------------------------------------------------------

std::vector<TensorMeta> infer_eye_like(std::span<const TensorMeta> in, const Attrs& attrs) {
  if (in[0].shape.size() != 2) fail(kEyeLike, "needs a rank-2 input, got " + shape_str(in[0].shape));
  attrs.get_int("k", 0);
  const std::int64_t dtype = attrs.get_int("dtype", static_cast<std::int64_t>(in[0].dtype));
  if (dtype < 0 || dtype >= kNumDTypes) fail(kEyeLike, "'dtype' = " + std::to_string(dtype) + " is not a dtype");
  return {{in[0].shape, static_cast<DType>(dtype)}};
}

void eye_like_kernel(KernelContext& ctx) {
  const TensorView& y = ctx.outputs[0];
  const std::int64_t k = ctx.attrs.get_int("k", 0), cols = (*y.shape)[1];
  std::vector<std::int64_t> v(static_cast<std::size_t>(y.numel), 0);
  for (std::int64_t n = 0; n < y.numel; ++n) v[static_cast<std::size_t>(n)] = n % cols - n / cols == k ? 1 : 0;
  store_i64(y, v.data());
}

// ---- Range --------------------------------------------------------------------------------------

// An attribute holding a whole number, exactly: integers as given, floats truncated (the infer
// function checked that it is a number in int64's range).
std::int64_t int_attr(const Attrs& attrs, std::string_view name) {
  for (const auto& [n, v] : attrs.items()) {
    if (n != name) continue;
    if (const auto* i = std::get_if<std::int64_t>(&v)) return *i;
    return static_cast<std::int64_t>(attrs.get_float(name, 0));
  }
  return 0;
}

// An int or float attribute as text, for messages.
std::string attr_text(const Attrs& attrs, std::string_view name) {
  for (const auto& [n, v] : attrs.items()) {
    if (n != name) continue;
    if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
    return std::to_string(attrs.get_float(name, 0));
  }
  return "?";
}

// A float attribute given for an integer Range must truncate to an int64 (else the cast is undefined).
void check_int_attr(const Attrs& attrs, const char* name) {
  for (const auto& [n, value] : attrs.items()) {
    if (n == name && std::holds_alternative<std::int64_t>(value)) return;  // exact already
  }
  const double v = attrs.get_float(name, 0);
  if (!(v > -0x1p63 && v < 0x1p63)) {
    fail(kRange, std::string(name) + " " + std::to_string(v) + " is outside int64's range for an integer Range");
  }
}

// max(ceil((limit - start) / delta), 0), exactly for integer dtypes (in 128 bits: limit - start
// may not fit in int64). Fails naming the operands when delta is 0, a value is not finite or the
// count does not fit in int64 (Note [Sizes from user input]); the dispatcher then checks the size.
std::int64_t range_count(const Attrs& attrs, DType dtype) {
  const auto too_many = [&](const std::string& count) {
    fail(kRange, "start " + attr_text(attrs, "start") + ", limit " + attr_text(attrs, "limit") + " and delta " +
                     attr_text(attrs, "delta") + " give " + count + " elements, more than int64 can count");
  };
  if (!is_floating(dtype)) {
    for (const char* name : {"start", "limit", "delta"}) check_int_attr(attrs, name);
    const std::int64_t start = int_attr(attrs, "start"), limit = int_attr(attrs, "limit"),
                       delta = int_attr(attrs, "delta");
    if (delta == 0) fail(kRange, "delta must be non-zero");
    const __int128 span = static_cast<__int128>(limit) - start;
    const __int128 n = span / delta + (span % delta != 0 && (span < 0) == (delta < 0) ? 1 : 0);
    if (n > std::numeric_limits<std::int64_t>::max()) too_many(std::to_string(static_cast<double>(n)));
    return n > 0 ? static_cast<std::int64_t>(n) : 0;  // n may be below INT64_MIN: compare before the cast
  }
  const double start = attrs.get_float("start", 0), limit = attrs.get_float("limit", 0),
               delta = attrs.get_float("delta", 0);
  if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta)) {
    fail(kRange, "start, limit and delta must be finite and delta non-zero");
  }
  const double n = std::ceil((limit - start) / delta);  // inf when limit - start overflows a double
  if (!(n < 0x1p63)) too_many(std::to_string(n));
  return n > 0 ? static_cast<std::int64_t>(n) : 0;
}

std::vector<TensorMeta> infer_range(std::span<const TensorMeta> in, const Attrs& attrs) {
  if (!attrs.has("start") || !attrs.has("limit") || !attrs.has("delta")) {
    fail(kRange, "needs the 'start', 'limit' and 'delta' attributes");
  }
  if (in[0].numel() != 1) fail(kRange, "input 0 (start) must hold one value, got shape " + shape_str(in[0].shape));
  for (const char* name : {"start", "limit", "delta"}) attrs.get_float(name, 0);  // checks they are numbers
  return {{{range_count(attrs, in[0].dtype)}, in[0].dtype}};
}

template <class T>
void range_kernel(KernelContext& ctx) {
  const TensorView& y = ctx.outputs[0];
  if (!is_floating(y.dtype)) {
    std::vector<std::int64_t> v(static_cast<std::size_t>(y.numel));
    const std::int64_t s = int_attr(ctx.attrs, "start"), d = int_attr(ctx.attrs, "delta");
    // In uint64, wrapping: i·d alone may exceed int64 though every s + i·d lies in [start, limit).
    const auto us = static_cast<std::uint64_t>(s), ud = static_cast<std::uint64_t>(d);
    for (std::int64_t i = 0; i < y.numel; ++i)
      v[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(us + static_cast<std::uint64_t>(i) * ud);
    store_i64(y, v.data());
    return;
  }
  std::vector<T> v(static_cast<std::size_t>(y.numel));
  const T s = static_cast<T>(ctx.attrs.get_float("start", 0)), d = static_cast<T>(ctx.attrs.get_float("delta", 1));
  for (std::int64_t i = 0; i < y.numel; ++i) v[static_cast<std::size_t>(i)] = s + static_cast<T>(i) * d;
  store<T>(y, v.data(), ctx);
}

constexpr char kLinSpace[] = "LinSpace";

std::vector<TensorMeta> infer_linspace(std::span<const TensorMeta> in, const Attrs& attrs) {
  if (!attrs.has("start") || !attrs.has("stop") || !attrs.has("num")) {
    fail(kLinSpace, "needs the 'start', 'stop' and 'num' attributes");
  }
  const double start = attrs.get_float("start", 0), stop = attrs.get_float("stop", 0);
  if (!std::isfinite(start) || !std::isfinite(stop)) fail(kLinSpace, "start and stop must be finite");
  const std::int64_t num = attrs.get_int("num", 0);
  if (num < 0) fail(kLinSpace, "num must be >= 0, got " + std::to_string(num));
  if (in[0].dtype == DType::kBool) fail(kLinSpace, "input 0 (the dtype) must be numeric, got bool");
  return {{{num}, in[0].dtype}};
}

// C: the compute type (T for floats, double for integers, as PyTorch's step_t). step is rounded to C;
// start + i·step is one rounding of the exact value, as a fused multiply-add gives it.
template <class C>
std::vector<C> linspace_values(const Attrs& attrs, std::int64_t num) {
  const C start = static_cast<C>(attrs.get_float("start", 0)), stop = static_cast<C>(attrs.get_float("stop", 0));
  std::vector<C> v(static_cast<std::size_t>(num));
  if (num == 1) v[0] = start;
  if (num <= 1) return v;
  const double step = static_cast<C>((stop - start) / static_cast<C>(num - 1));
  const std::int64_t half = num / 2;
  for (std::int64_t i = 0; i < num; ++i) {
    v[static_cast<std::size_t>(i)] = static_cast<C>(i < half ? start + step * static_cast<double>(i)
                                                             : stop - step * static_cast<double>(num - i - 1));
  }
  return v;
}

template <class T>
void linspace_kernel(KernelContext& ctx) {
  const TensorView& y = ctx.outputs[0];
  if (is_floating(y.dtype)) {
    store<T>(y, linspace_values<T>(ctx.attrs, y.numel).data(), ctx);
    return;
  }
  const std::vector<double> d = linspace_values<double>(ctx.attrs, y.numel);
  std::vector<std::int64_t> v(d.size());
  for (std::size_t i = 0; i < d.size(); ++i) v[i] = static_cast<std::int64_t>(d[i]);
  store_i64(y, v.data());
}

KernelCost cost_per_element(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, 1);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kTrilu,
                              .category = OpCategory::kDataMovement,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_trilu,
                              .cost = movement_cost});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kCumSum,
                              .category = OpCategory::kPrecisionSensitive,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_cumsum,
                              .cost = cost_per_element});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kHardmax,
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_hardmax,
                              .cost = cost_per_element});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kEyeLike,
                              .category = OpCategory::kDataMovement,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_eye_like,
                              .cost = movement_cost});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kRange,
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 3,
                              .infer = infer_range,
                              .cost = cost_per_element});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kLinSpace,
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_linspace,
                              .cost = cost_per_element});

NPUSCOPE_REGISTER_KERNEL_FOR_BOTH(kTrilu, trilu_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kCumSum, cumsum_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kHardmax, hardmax_kernel);
NPUSCOPE_REGISTER_KERNEL_FOR_BOTH(kEyeLike, eye_like_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kRange, range_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kLinSpace, linspace_kernel);

}  // namespace npuscope::emulator::kernels

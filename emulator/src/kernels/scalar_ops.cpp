// Scalar and fused element-wise ops with CANN's names, each mirroring a PyTorch 1.13 CPU aten op
// (the PyTorch device calls one of them per aten kernel). Tensor inputs broadcast as numpy; the
// result takes input 0's dtype (the torch side casts first where PyTorch's type promotion differs).
//   Adds      (x; value)          x + value                         aten add(Tensor, Scalar)
//   Muls      (x; value)          x * value                         aten mul(Tensor, Scalar)
//   Axpy      (x, y; alpha)       x + alpha * y                     aten add / sub with alpha
//   Addcmul   (x, t1, t2; value)  x + value * t1 * t2               aten addcmul
//   Addcdiv   (x, t1, t2; value)  x + value * t1 / t2               aten addcdiv (floating only)
//   Lerp      (x, end; weight)    |w| < 0.5 ? x + w (end - x)       aten lerp.Scalar
//                                           : end - (end - x)(1 - w)
//   MaskedFill (x, mask; value)   mask ? value : x (mask bool, broadcast to x)   aten masked_fill
//   Fill      (x; value)          every element value; x's data is ignored       aten fill_ / zero_
// Integer and bool tensors (Adds, Muls, Axpy, Addcmul, MaskedFill, Fill) are exact in int64 and
// wrap to the storage type; bool stores "!= 0". NPU floats: f32 arithmetic rounded once to the
// output dtype; CPU golden: f64. Outputs may alias inputs (Note [Aliasing outputs] in fused_util.h).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "fused_util.h"

namespace npuscope::emulator::kernels {
namespace {

using ext::wrap_add;
using ext::wrap_mul;
using fused::Scalar;
using fused::scalar_attr;

constexpr char kAdds[] = "Adds", kMuls[] = "Muls", kAxpy[] = "Axpy", kAddcmul[] = "Addcmul", kAddcdiv[] = "Addcdiv",
               kLerp[] = "Lerp", kMaskedFill[] = "MaskedFill", kFill[] = "Fill";

// ---- infer and cost -----------------------------------------------------------------------------

// Broadcast of the inputs, input 0's dtype; `Attr` must be a number when given.
template <const char* Op, const char* Attr, bool kFloatingOnly>
std::vector<TensorMeta> infer_scalar_op(std::span<const TensorMeta> in, const Attrs& attrs) {
  const Shape shape = fused::broadcast_inputs(in, Op);
  if (kFloatingOnly && !is_floating(in[0].dtype)) {
    fail(Op, "input 0 must be floating (f32, f16, bf16, f64), got " + std::string(dtype_name(in[0].dtype)) +
                 " (PyTorch computes it only for floating tensors)");
  }
  scalar_attr(attrs, Attr, 0);
  return {{shape, in[0].dtype}};
}

std::vector<TensorMeta> infer_masked_fill(std::span<const TensorMeta> in, const Attrs& attrs) {
  if (!in[1].present) fail(kMaskedFill, "mask is required");
  if (in[1].dtype != DType::kBool) {
    fail(kMaskedFill, "mask must be bool, got " + std::string(dtype_name(in[1].dtype)));
  }
  if (broadcast_shapes(in[0].shape, in[1].shape, kMaskedFill) != in[0].shape) {
    fail(kMaskedFill, "mask " + shape_str(in[1].shape) + " does not broadcast to x " + shape_str(in[0].shape));
  }
  scalar_attr(attrs, "value", 0);
  return {{in[0].shape, in[0].dtype}};
}

std::vector<TensorMeta> infer_fill(std::span<const TensorMeta> in, const Attrs& attrs) {
  scalar_attr(attrs, "value", 0);
  return {{in[0].shape, in[0].dtype}};
}

template <int Flops>
KernelCost cost_out_only(std::span<const TensorMeta>, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost({}, out, Flops);  // Fill reads nothing
}

// ---- kernels ------------------------------------------------------------------------------------

// E: float (NPU) / double (CPU) for floating tensors, int64 for integer ones.
template <class T>
void adds_kernel(KernelContext& ctx) {
  const Scalar v = scalar_attr(ctx.attrs, "value", 0);
  fused::numeric_map<1, T>(ctx, [v](auto x) {
    using E = decltype(x);
    if constexpr (std::is_same_v<E, std::int64_t>) {
      return wrap_add(x, v.as<E>());
    } else {
      return x + v.as<E>();
    }
  });
}

template <class T>
void muls_kernel(KernelContext& ctx) {
  const Scalar v = scalar_attr(ctx.attrs, "value", 1);
  fused::numeric_map<1, T>(ctx, [v](auto x) {
    using E = decltype(x);
    if constexpr (std::is_same_v<E, std::int64_t>) {
      return wrap_mul(x, v.as<E>());
    } else {
      return x * v.as<E>();
    }
  });
}

template <class T>
void axpy_kernel(KernelContext& ctx) {
  const Scalar a = scalar_attr(ctx.attrs, "alpha", 1);
  fused::numeric_map<2, T>(ctx, [a](auto x, auto y) {
    using E = decltype(x);
    if constexpr (std::is_same_v<E, std::int64_t>) {
      return wrap_add(x, wrap_mul(a.as<E>(), y));
    } else {
      // One rounding, as a fused multiply-add gives (PyTorch's CPU add with alpha is vec::fmadd): the
      // f32 product is exact in f64. Two roundings lose every digit where x cancels alpha * y (SGD's
      // p - lr * grad near a parameter's minimum), which `npuscope run --check-ops` reports.
      return static_cast<E>(static_cast<double>(x) + static_cast<double>(a.as<E>()) * static_cast<double>(y));
    }
  });
}

template <class T>
void addcmul_kernel(KernelContext& ctx) {
  const Scalar v = scalar_attr(ctx.attrs, "value", 1);
  fused::numeric_map<3, T>(ctx, [v](auto x, auto t1, auto t2) {
    using E = decltype(x);
    if constexpr (std::is_same_v<E, std::int64_t>) {
      return wrap_add(x, wrap_mul(wrap_mul(v.as<E>(), t1), t2));
    } else {
      return x + v.as<E>() * t1 * t2;
    }
  });
}

template <class T>
void addcdiv_kernel(KernelContext& ctx) {
  const T v = scalar_attr(ctx.attrs, "value", 1).as<T>();
  fused::map_inputs<3, T>(ctx, [v](T x, T t1, T t2) { return x + v * t1 / t2; });
}

template <class T>
void lerp_kernel(KernelContext& ctx) {
  const T w = scalar_attr(ctx.attrs, "weight", 0.5).as<T>();
  if (std::abs(w) < T(0.5)) {
    fused::map_inputs<2, T>(ctx, [w](T x, T end) { return x + w * (end - x); });
  } else {
    fused::map_inputs<2, T>(ctx, [w](T x, T end) { return end - (end - x) * (T(1) - w); });
  }
}

// y = mask ? value : x. Floating: the untouched elements go through store<T> too, which leaves a
// value of the output dtype unchanged (rounding is idempotent).
// Note [Filling infinities]
// masked_fill(mask, -inf) is how every attention layer masks its scores, and fill_(inf) how code
// initialises a running minimum: the infinity is a value the program writes, not one an arithmetic
// unit produced. A select or a fill raises no overflow on an NPU (the float status register is set by
// arithmetic), and saturation mode does not clamp what is only moved. So an explicit infinite or NaN
// value is stored as it is, and the task is not marked as overflowing; a finite value that does not
// fit the dtype (1e6 into f16) still is, as any rounding overflow.
template <class T>
void store_raw(const TensorView& y, const T* data) {
  if constexpr (std::is_same_v<T, float>) {
    store_f32_raw(y, data);
  } else {
    store_f64_raw(y, data);
  }
}

template <class T>
void masked_fill_kernel(KernelContext& ctx) {
  const Scalar v = scalar_attr(ctx.attrs, "value", 0);
  const TensorView& mv = ctx.inputs[1];
  const Shape& shape = *ctx.outputs[0].shape;
  const std::vector<std::int64_t> mask = ext::load_broadcast<std::int64_t>(mv, shape, ctx);
  if (is_floating(ctx.inputs[0].dtype)) {
    std::vector<T> x = load<T>(ctx.inputs[0], ctx);
    const T fill = v.as<T>();
    for (std::size_t j = 0; j < x.size(); ++j) x[j] = mask[j] != 0 ? fill : x[j];
    if (!std::isfinite(fill)) {
      store_raw(ctx.outputs[0], x.data());  // See Note [Filling infinities]
      return;
    }
    store<T>(ctx.outputs[0], x.data(), ctx);
    return;
  }
  std::vector<std::int64_t> x(static_cast<std::size_t>(ctx.inputs[0].numel));
  load_i64(ctx.inputs[0], x.data());
  const std::int64_t fill = v.as<std::int64_t>();
  for (std::size_t j = 0; j < x.size(); ++j) x[j] = mask[j] != 0 ? fill : x[j];
  store_i64(ctx.outputs[0], x.data());
}

template <class T>
void fill_kernel(KernelContext& ctx) {
  const Scalar v = scalar_attr(ctx.attrs, "value", 0);
  const TensorView& y = ctx.outputs[0];
  if (y.numel == 0) return;
  if (is_floating(y.dtype) && !std::isfinite(v.as<double>())) {
    const std::vector<T> r(static_cast<std::size_t>(y.numel), v.as<T>());
    store_raw(y, r.data());  // See Note [Filling infinities]
    return;
  }
  if (y.dtype == DType::kF32 && (ctx.backend == Backend::kCpu || ctx.compute_dtype == DType::kF32)) {
    // zero_() of every gradient each step: the value rounded and checked once, then one fill with
    // no buffer (store<T> of a full vector gives the same bytes and flags).
    float f = v.as<float>();
    if (ctx.backend == Backend::kNpu) {
      apply_overflow_mode(&f, 1, DType::kF32, ctx);
    } else if (!std::isfinite(f)) {
      ctx.overflow = true;
    }
    std::fill_n(y.as<float>(), y.numel, f);
    return;
  }
  if (is_floating(y.dtype)) {
    std::vector<T> r(static_cast<std::size_t>(y.numel), v.as<T>());
    store<T>(y, r.data(), ctx);
  } else {
    const std::vector<std::int64_t> r(static_cast<std::size_t>(y.numel), v.as<std::int64_t>());
    store_i64(y, r.data());
  }
}

constexpr char kValue[] = "value", kAlpha[] = "alpha", kWeight[] = "weight";

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kAdds,
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_scalar_op<kAdds, kValue, false>,
                              .cost = ext::cost_flops<1>});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kMuls,
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_scalar_op<kMuls, kValue, false>,
                              .cost = ext::cost_flops<1>});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kAxpy,
                              .category = OpCategory::kVector,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_scalar_op<kAxpy, kAlpha, false>,
                              .cost = ext::cost_flops<2>});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kAddcmul,
                              .category = OpCategory::kVector,
                              .min_inputs = 3,
                              .max_inputs = 3,
                              .infer = infer_scalar_op<kAddcmul, kValue, false>,
                              .cost = ext::cost_flops<3>});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kAddcdiv,
                              .category = OpCategory::kVector,
                              .min_inputs = 3,
                              .max_inputs = 3,
                              .infer = infer_scalar_op<kAddcdiv, kValue, true>,
                              .cost = ext::cost_flops<3>});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kLerp,
                              .category = OpCategory::kVector,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_scalar_op<kLerp, kWeight, true>,
                              .cost = ext::cost_flops<3>});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kMaskedFill,
                              .category = OpCategory::kVector,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_masked_fill,
                              .cost = ext::cost_flops<1>});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kFill,
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_fill,
                              .cost = cost_out_only<0>});

NPUSCOPE_REGISTER_FLOAT_KERNELS(kAdds, adds_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kMuls, muls_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kAxpy, axpy_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kAddcmul, addcmul_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kAddcdiv, addcdiv_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kLerp, lerp_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kMaskedFill, masked_fill_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kFill, fill_kernel);

}  // namespace npuscope::emulator::kernels

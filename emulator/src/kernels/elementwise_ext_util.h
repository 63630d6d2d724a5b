// Helpers shared by the ONNX element-wise kernel files (activation_ext_ops, math_ext_ops,
// variadic_ops, logic_ops): infer functions that name the op, integer paths and n-ary broadcasting.
//
// Integer tensors are computed exactly in int64 on both backends (load_i64 / store_i64), never
// through float: an int64 above 2^24 (f32) or 2^53 (f64) would lose bits. Floating tensors go
// through load<T> / store<T> (Note [Kernel numerics]), so a bool output is written as "!= 0".
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "elementwise_map.h"

namespace npuscope::emulator::kernels::ext {

// ---- infer and cost -----------------------------------------------------------------------------

// One floating input; output like it.
template <const char* Op>
std::vector<TensorMeta> infer_float_unary(std::span<const TensorMeta> in, const Attrs&) {
  require_floating(in, 0, Op);
  return {{in[0].shape, in[0].dtype}};
}

// One numeric (not bool) input; output like it.
template <const char* Op>
std::vector<TensorMeta> infer_numeric_unary(std::span<const TensorMeta> in, const Attrs&) {
  if (in[0].dtype == DType::kBool) fail(Op, "input 0 must be numeric, got bool");
  return {{in[0].shape, in[0].dtype}};
}

// The numpy broadcast of every input's shape; all inputs must share a dtype.
inline Shape broadcast_all(std::span<const TensorMeta> in, const char* op) {
  for (const auto& m : in) {
    if (!m.present) fail(op, "every input is required");
  }
  require_same_dtype(in, op);
  Shape out = in[0].shape;
  for (std::size_t i = 1; i < in.size(); ++i) out = broadcast_shapes(out, in[i].shape, op);
  return out;
}

template <int Flops>
KernelCost cost_flops(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, Flops);
}

// The schema of an element-wise op with a fixed number of inputs.
constexpr OpSchema elementwise_schema(const char* type, int inputs, InferFn infer, CostFn cost,
                                      OpCategory category = OpCategory::kVector) {
  return OpSchema{
      .type = type, .category = category, .min_inputs = inputs, .max_inputs = inputs, .infer = infer, .cost = cost};
}

// ---- kernels ------------------------------------------------------------------------------------

// Input `v` broadcast to `shape` as E: int64 exactly (load_i64), float/double through load<E>.
template <class E>
std::vector<E> load_broadcast(const TensorView& v, const Shape& shape, const KernelContext& ctx) {
  std::vector<E> x;
  if constexpr (std::is_same_v<E, std::int64_t>) {
    x.resize(static_cast<std::size_t>(v.numel));
    load_i64(v, x.data());
  } else {
    x = load<E>(v, ctx);
  }
  const BroadcastIndex index(*v.shape, shape);
  if (index.identity()) return x;
  std::vector<std::int64_t> at;
  index.fill(at);
  std::vector<E> out(at.size());
  for (std::size_t i = 0; i < at.size(); ++i) out[i] = x[static_cast<std::size_t>(at[i])];
  return out;
}

// Results -> output 0: int64 through store_i64 (wraps as a C cast; bool is != 0), floats through
// store<E> (NPU rounding and overflow mode).
template <class E>
void store_result(KernelContext& ctx, std::vector<E>& r) {
  if constexpr (std::is_same_v<E, std::int64_t>) {
    store_i64(ctx.outputs[0], r.data());
  } else {
    store<E>(ctx.outputs[0], r.data(), ctx);
  }
}

// Left fold over all inputs broadcast to the output: r = x0, then r = f(r, xi). Computed in E.
template <class E, class F>
std::vector<E> fold_inputs(const KernelContext& ctx, F f) {
  const Shape& shape = *ctx.outputs[0].shape;
  std::vector<E> acc = load_broadcast<E>(ctx.inputs[0], shape, ctx);
  for (std::size_t i = 1; i < ctx.inputs.size(); ++i) {
    const std::vector<E> x = load_broadcast<E>(ctx.inputs[i], shape, ctx);
    for (std::size_t j = 0; j < acc.size(); ++j) acc[j] = f(acc[j], x[j]);
  }
  return acc;
}

// F: a generic functor, applied in T to floating inputs and in int64 to integer/bool ones.
template <class T, class F>
void numeric_unary_kernel(KernelContext& ctx, F f) {
  if (is_floating(ctx.inputs[0].dtype)) {
    unary_kernel<T>(ctx, f);
    return;
  }
  std::vector<std::int64_t> x(static_cast<std::size_t>(ctx.inputs[0].numel));
  load_i64(ctx.inputs[0], x.data());
  for (auto& e : x) e = f(e);
  store_i64(ctx.outputs[0], x.data());
}

// Broadcast binary op; F generic as above (the output may be bool: F returns 0 or 1).
template <class T, class F>
void numeric_binary_kernel(KernelContext& ctx, F f) {
  if (is_floating(ctx.inputs[0].dtype)) {
    binary_kernel<T>(ctx, f);
    return;
  }
  std::vector<std::int64_t> r = fold_inputs<std::int64_t>(ctx, f);
  store_i64(ctx.outputs[0], r.data());
}

// Wrap-around int64 arithmetic (C's unsigned rules), where signed overflow would be undefined.
inline std::int64_t wrap_add(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}
inline std::int64_t wrap_mul(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
}

}  // namespace npuscope::emulator::kernels::ext

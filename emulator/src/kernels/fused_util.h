// Helpers shared by the training-side element-wise kernels (scalar_ops, activation_grad_ops):
// scalar attributes that stay exact for integer tensors, and n-ary maps over broadcast inputs whose
// result takes input 0's dtype.
//
// Note [Aliasing outputs]
// The PyTorch device passes preallocated outputs, and an in-place aten op (add_, addcmul_, mul_)
// hands the same memory as output 0 and input 0. Every map below loads all of its inputs into
// buffers of its own before it stores anything, so an output that aliases an input gets the right
// result.
//
// Note [Direct f32 maps]
// The optimizer steps (Axpy, Addcmul, Addcdiv, Lerp over every parameter) and the activation
// gradients run on whole f32 tensors. Loading each input into a vector of its own, computing, and
// storing through store<T> (a rounding pass, an overflow pass, a converting copy) touched memory
// seven times and page-faulted three fresh buffers per op: an Axpy over ResNet-18's 11.7 M
// parameters took 8x PyTorch's CPU add. When the NPU computes in f32 and every input is an f32
// tensor of the output's shape, map_inputs instead reads the inputs in place and writes each
// 1024-element block of results once, applying the overflow mode to the block first: the same
// values and flags as store<float> (f32 rounding is the identity; inf_nan flags a non-finite
// result; saturation clamps it and flags it), in one pass. Reading block k entirely before writing
// it keeps an output that aliases an input right (Note [Aliasing outputs]).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "elementwise_ext_util.h"

namespace npuscope::emulator::kernels::fused {

// A number attribute as the op will use it: an int attribute stays exact for integer tensors (an
// int64 above 2^53 would not survive a double); a float attribute on an integer tensor is truncated
// toward zero (the torch side casts to a floating dtype first when PyTorch would promote).
struct Scalar {
  bool integral = false;
  std::int64_t i = 0;
  double d = 0;
  template <class E>
  E as() const {
    if constexpr (std::is_same_v<E, std::int64_t>) {
      return integral ? i : (d == d ? static_cast<std::int64_t>(d) : 0);
    } else {
      return integral ? static_cast<E>(i) : static_cast<E>(d);
    }
  }
};

inline Scalar scalar_attr(const Attrs& attrs, std::string_view name, double fallback) {
  for (const auto& [key, value] : attrs.items()) {
    if (key != name) continue;
    if (const auto* i = std::get_if<std::int64_t>(&value)) return {true, *i, static_cast<double>(*i)};
    break;
  }
  return {false, 0, attrs.get_float(name, fallback)};  // throws InvalidArgument for a wrong type
}

// The numpy broadcast of every input's shape, input 0's dtype. Inputs may differ in dtype (they are
// converted on load); every input is required.
inline Shape broadcast_inputs(std::span<const TensorMeta> in, const char* op) {
  Shape out = in[0].shape;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (!in[i].present) fail(op, "input " + std::to_string(i) + " is required");
    if (i > 0) out = broadcast_shapes(out, in[i].shape, op);
  }
  return out;
}

// See Note [Direct f32 maps]. Returns false (nothing done) unless the NPU computes in f32 and every
// input is f32 with the output's shape.
template <int N, class F>
bool map_f32_direct(KernelContext& ctx, F f) {
  const TensorView& out = ctx.outputs[0];
  if (ctx.backend != Backend::kNpu || out.dtype != DType::kF32 || ctx.compute_dtype != DType::kF32) return false;
  const float* in[3] = {};
  for (int i = 0; i < N; ++i) {
    const TensorView& v = ctx.inputs[static_cast<std::size_t>(i)];
    if (v.dtype != DType::kF32 || *v.shape != *out.shape) return false;
    in[i] = v.as<const float>();
  }
  constexpr std::int64_t kBlock = 1024;
  float r[kBlock];
  for (std::int64_t i0 = 0; i0 < out.numel; i0 += kBlock) {
    const std::int64_t m = std::min(kBlock, out.numel - i0);
    for (std::int64_t j = 0; j < m; ++j) {
      if constexpr (N == 1) {
        r[j] = f(in[0][i0 + j]);
      } else if constexpr (N == 2) {
        r[j] = f(in[0][i0 + j], in[1][i0 + j]);
      } else {
        r[j] = f(in[0][i0 + j], in[1][i0 + j], in[2][i0 + j]);
      }
    }
    finish_in_place(r, m, ctx);  // store<float>'s flags and overflow mode, in one vectorised scan
    std::memcpy(out.as<float>() + i0, r, static_cast<std::size_t>(m) * sizeof(float));
  }
  return true;
}

// out[j] = f(in0[j], ..., in{N-1}[j]) over the N inputs broadcast to output 0's shape, computed in E
// (float/double for floating input 0, int64 otherwise). See Note [Aliasing outputs].
template <int N, class E, class F>
void map_inputs(KernelContext& ctx, F f) {
  if constexpr (std::is_same_v<E, float>) {
    if (map_f32_direct<N>(ctx, f)) return;
  }
  const Shape& shape = *ctx.outputs[0].shape;
  std::vector<E> r = ext::load_broadcast<E>(ctx.inputs[0], shape, ctx);
  if constexpr (N == 1) {
    for (auto& e : r) e = f(e);
  } else if constexpr (N == 2) {
    const std::vector<E> b = ext::load_broadcast<E>(ctx.inputs[1], shape, ctx);
    for (std::size_t j = 0; j < r.size(); ++j) r[j] = f(r[j], b[j]);
  } else {
    const std::vector<E> b = ext::load_broadcast<E>(ctx.inputs[1], shape, ctx);
    const std::vector<E> c = ext::load_broadcast<E>(ctx.inputs[2], shape, ctx);
    for (std::size_t j = 0; j < r.size(); ++j) r[j] = f(r[j], b[j], c[j]);
  }
  ext::store_result<E>(ctx, r);
}

// Floating input 0: map_inputs<T>; integer or bool: map_inputs<int64> (exact).
template <int N, class T, class F>
void numeric_map(KernelContext& ctx, F f) {
  if (is_floating(ctx.inputs[0].dtype)) {
    map_inputs<N, T>(ctx, f);
  } else {
    map_inputs<N, std::int64_t>(ctx, f);
  }
}

}  // namespace npuscope::emulator::kernels::fused

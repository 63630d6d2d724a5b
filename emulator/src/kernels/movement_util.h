// Helpers for the byte-exact data-movement kernels (Expand, Tile, Pad, DepthToSpace, Trilu, the
// gathers and scatters...). Such an op works out where each output element comes from (an index
// map), and copy_indexed moves the bytes by element size: never through float, so every dtype and
// every NaN payload survives, and one kernel serves both backends.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {

namespace detail {
template <class E>
void copy_indexed_as(const std::byte* src, std::byte* dst, std::span<const std::int64_t> index, const std::byte* fill) {
  E f{};
  if (fill != nullptr) std::memcpy(&f, fill, sizeof(E));
  const auto* s = reinterpret_cast<const E*>(src);
  auto* d = reinterpret_cast<E*>(dst);
  for (std::size_t i = 0; i < index.size(); ++i) d[i] = index[i] >= 0 ? s[index[i]] : f;
}
}  // namespace detail

// dst[i] = src[index[i]] (elements of `esize` bytes); an index < 0 writes `fill` (one element's
// bytes), or zero bytes when `fill` is null.
inline void copy_indexed(const std::byte* src, std::byte* dst, std::size_t esize, std::span<const std::int64_t> index,
                         const std::byte* fill = nullptr) {
  switch (esize) {
    case 1: detail::copy_indexed_as<std::uint8_t>(src, dst, index, fill); break;
    case 2: detail::copy_indexed_as<std::uint16_t>(src, dst, index, fill); break;
    case 4: detail::copy_indexed_as<std::uint32_t>(src, dst, index, fill); break;
    default: detail::copy_indexed_as<std::uint64_t>(src, dst, index, fill); break;
  }
}

// Calls f(index) for every position of `shape` in row-major order (index: one coordinate per dim).
template <class F>
void for_each_index(const Shape& shape, F&& f) {
  const std::int64_t total = shape_numel(shape);
  std::vector<std::int64_t> index(shape.size(), 0);
  for (std::int64_t n = 0; n < total; ++n) {
    f(static_cast<const std::vector<std::int64_t>&>(index));
    for (std::size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}

// Sizes before, along and after an axis (negative counts from the end; the caller checked it).
struct AxisLoop {
  std::int64_t outer = 1, dim = 1, inner = 1;
};
inline AxisLoop axis_loop(const Shape& s, std::int64_t axis) {
  const auto a = static_cast<std::size_t>(axis < 0 ? axis + static_cast<std::int64_t>(s.size()) : axis);
  AxisLoop l;
  for (std::size_t d = 0; d < s.size(); ++d) (d < a ? l.outer : d == a ? l.dim : l.inner) *= s[d];
  return l;
}

// Throws unless input i holds indices (i32 or i64).
inline void require_index_dtype(std::span<const TensorMeta> in, std::size_t i, const char* op, const char* what) {
  if (in[i].dtype != DType::kI32 && in[i].dtype != DType::kI64) {
    fail(op, std::string(what) + " must be i32 or i64, got " + std::string(dtype_name(in[i].dtype)));
  }
}

// Data movement costs no arithmetic: the bytes in and out.
inline KernelCost movement_cost(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, 0);
}

// The whole input copied unchanged (Flatten, Squeeze, Unsqueeze, Identity: only the shape changes).
inline void copy_kernel(KernelContext& ctx) {
  const TensorView& x = ctx.inputs[0];
  if (x.numel > 0) std::memcpy(ctx.outputs[0].data, x.data, static_cast<std::size_t>(x.numel) * dtype_size(x.dtype));
}

}  // namespace npuscope::emulator::kernels

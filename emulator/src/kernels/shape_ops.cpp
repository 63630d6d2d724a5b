// Reshape and Transpose: data movement. Bytes are copied exactly (per element size, never through
// float), and one kernel serves both backends.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {
namespace {

// ---- Reshape ------------------------------------------------------------------------------------

// ONNX Reshape: 0 copies the input dim (unless allowzero = 1: then it is a 0), one -1 is inferred
// from the rest.
std::vector<TensorMeta> infer_reshape(std::span<const TensorMeta> in, const Attrs& attrs) {
  if (!attrs.has("shape")) fail("Reshape", "needs the 'shape' attribute");
  const Shape& x = in[0].shape;
  Shape out = attrs.get_ints("shape");
  const bool allow_zero = attrs.get_int("allowzero", 0) != 0;
  int inferred = -1;
  std::int64_t known = 1;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 0 && !allow_zero) {
      if (i >= x.size())
        fail("Reshape", "shape " + shape_str(out) + " copies dim " + std::to_string(i) + " (0) but the input " +
                            shape_str(x) + " has no such dim");
      out[i] = x[i];
    }
    if (out[i] == -1) {
      if (inferred >= 0) fail("Reshape", "shape " + shape_str(out) + " has more than one -1");
      inferred = static_cast<int>(i);
    } else if (out[i] < 0) {
      fail("Reshape", "shape " + shape_str(out) + " has a negative dim");
    } else {
      known = checked_mul(known, out[i], "Reshape", [&] { return "the element count of shape " + shape_str(out); });
    }
  }
  const std::int64_t numel = shape_numel(x);
  if (inferred >= 0) {
    if (known == 0 || numel % known != 0) {
      fail("Reshape", "cannot infer the -1 in " + shape_str(out) + " for an input of shape " + shape_str(x));
    }
    out[static_cast<std::size_t>(inferred)] = numel / known;
  } else if (known != numel) {
    fail("Reshape", "shape " + shape_str(out) + " has " + std::to_string(known) + " elements, the input " +
                        shape_str(x) + " has " + std::to_string(numel));
  }
  return {{out, in[0].dtype}};
}

void reshape_kernel(KernelContext& ctx) {
  const TensorView& x = ctx.inputs[0];
  std::memcpy(ctx.outputs[0].data, x.data, static_cast<std::size_t>(x.numel) * dtype_size(x.dtype));
}

// ---- Transpose ----------------------------------------------------------------------------------

// perm, defaulting (absent or empty) to the reversed dims; throws for anything but a permutation.
std::vector<std::int64_t> resolve_perm(const Shape& x, const Attrs& attrs) {
  const auto rank = static_cast<std::int64_t>(x.size());
  std::vector<std::int64_t> perm = attrs.get_ints("perm");
  if (perm.empty()) {
    perm.resize(x.size());
    for (std::int64_t i = 0; i < rank; ++i) perm[static_cast<std::size_t>(i)] = rank - 1 - i;
    return perm;
  }
  if (static_cast<std::int64_t>(perm.size()) != rank) {
    fail("Transpose", "perm " + shape_str(perm) + " does not match the rank of input " + shape_str(x));
  }
  std::vector<bool> seen(x.size(), false);
  for (auto& p : perm) {
    const std::int64_t a = p < 0 ? p + rank : p;
    if (a < 0 || a >= rank || seen[static_cast<std::size_t>(a)]) {
      fail("Transpose", "perm " + shape_str(perm) + " is not a permutation of the dims of input " + shape_str(x));
    }
    seen[static_cast<std::size_t>(a)] = true;
    p = a;
  }
  return perm;
}

std::vector<TensorMeta> infer_transpose(std::span<const TensorMeta> in, const Attrs& attrs) {
  const auto perm = resolve_perm(in[0].shape, attrs);
  Shape out(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) out[i] = in[0].shape[static_cast<std::size_t>(perm[i])];
  return {{out, in[0].dtype}};
}

// A transpose reduced to its essentials: size-1 dims dropped and dims that stay adjacent merged, so
// that e.g. NCHW -> NHWC (perm {0, 2, 3, 1}) becomes [N, C, HW] -> [N, HW, C].
struct TransposePlan {
  Shape in_shape;                  // simplified input dims
  std::vector<std::int64_t> perm;  // output dim i is input dim perm[i]
};

TransposePlan simplify(const Shape& shape, std::vector<std::int64_t> perm) {
  // Drop size-1 dims (renumbering the survivors).
  std::vector<std::int64_t> renum(shape.size(), -1);
  Shape kept;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] != 1) {
      renum[d] = static_cast<std::int64_t>(kept.size());
      kept.push_back(shape[d]);
    }
  }
  std::vector<std::int64_t> p;
  for (auto d : perm) {
    if (renum[static_cast<std::size_t>(d)] >= 0) p.push_back(renum[static_cast<std::size_t>(d)]);
  }
  // Group runs of output dims whose input dims are consecutive.
  std::vector<std::vector<std::int64_t>> groups;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (i > 0 && p[i] == p[i - 1] + 1) {
      groups.back().push_back(p[i]);
    } else {
      groups.push_back({p[i]});
    }
  }
  // Order the groups by their first input dim: that is the simplified input.
  std::vector<std::size_t> order(groups.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return groups[a][0] < groups[b][0]; });
  TransposePlan plan;
  plan.in_shape.resize(groups.size());
  plan.perm.resize(groups.size());
  for (std::size_t r = 0; r < order.size(); ++r) {
    std::int64_t size = 1;
    for (auto d : groups[order[r]]) size *= kept[static_cast<std::size_t>(d)];
    plan.in_shape[r] = size;
    plan.perm[order[r]] = static_cast<std::int64_t>(r);
  }
  return plan;
}

// Output-order odometer over `sizes`, calling f(in_offset, out_offset) for each position.
template <class F>
void for_each_offset(const Shape& sizes, const std::vector<std::int64_t>& in_strides,
                     const std::vector<std::int64_t>& out_strides, F f) {
  const std::int64_t total = shape_numel(sizes);
  std::vector<std::int64_t> index(sizes.size(), 0);
  std::int64_t in_off = 0, out_off = 0;
  for (std::int64_t n = 0; n < total; ++n) {
    f(in_off, out_off);
    for (std::size_t d = sizes.size(); d-- > 0;) {
      in_off += in_strides[d];
      out_off += out_strides[d];
      if (++index[d] < sizes[d]) break;
      in_off -= in_strides[d] * sizes[d];
      out_off -= out_strides[d] * sizes[d];
      index[d] = 0;
    }
  }
}

constexpr std::int64_t kTile = 32;  // 32x32 tiles keep both sides of a 2-D transpose in cache

// The innermost input dim moves: a tiled 2-D transpose for each position of the other dims.
template <class E>
void transpose_tiled(const E* src, E* dst, const TransposePlan& plan) {
  const std::size_t r = plan.perm.size();
  const auto in_strides = strides_of(plan.in_shape);
  Shape out_shape(r);
  for (std::size_t i = 0; i < r; ++i) out_shape[i] = plan.in_shape[static_cast<std::size_t>(plan.perm[i])];
  const auto out_strides = strides_of(out_shape);
  // Output dim r-1 walks input dim q (stride sq); input dim r-1 sits at output dim p (stride sp).
  const auto q = static_cast<std::size_t>(plan.perm[r - 1]);
  const auto p = static_cast<std::size_t>(
      std::find(plan.perm.begin(), plan.perm.end(), static_cast<std::int64_t>(r - 1)) - plan.perm.begin());
  const std::int64_t rows = plan.in_shape[r - 1], cols = plan.in_shape[q];
  const std::int64_t sq = in_strides[q], sp = out_strides[p];
  Shape outer;
  std::vector<std::int64_t> outer_in, outer_out;
  for (std::size_t i = 0; i + 1 < r; ++i) {
    if (i == p) continue;
    outer.push_back(out_shape[i]);
    outer_in.push_back(in_strides[static_cast<std::size_t>(plan.perm[i])]);
    outer_out.push_back(out_strides[i]);
  }
  for_each_offset(outer, outer_in, outer_out, [&](std::int64_t ib, std::int64_t ob) {
    for (std::int64_t i0 = 0; i0 < rows; i0 += kTile) {
      const std::int64_t i1 = std::min(rows, i0 + kTile);
      for (std::int64_t j0 = 0; j0 < cols; j0 += kTile) {
        const std::int64_t j1 = std::min(cols, j0 + kTile);
        for (std::int64_t i = i0; i < i1; ++i) {
          for (std::int64_t j = j0; j < j1; ++j) dst[ob + i * sp + j] = src[ib + i + j * sq];
        }
      }
    }
  });
}

// The innermost dim stays innermost: copy contiguous rows.
void transpose_rows(const std::byte* src, std::byte* dst, const TransposePlan& plan, std::size_t esize) {
  const std::size_t r = plan.perm.size();
  const auto in_strides = strides_of(plan.in_shape);
  Shape outer(r - 1);
  std::vector<std::int64_t> outer_in(r - 1);
  for (std::size_t i = 0; i + 1 < r; ++i) {
    outer[i] = plan.in_shape[static_cast<std::size_t>(plan.perm[i])];
    outer_in[i] = in_strides[static_cast<std::size_t>(plan.perm[i])];
  }
  const std::int64_t row = plan.in_shape[r - 1];
  const auto outer_out = strides_of(outer);
  const std::size_t row_bytes = static_cast<std::size_t>(row) * esize;
  for_each_offset(outer, outer_in, outer_out, [&](std::int64_t ib, std::int64_t ob) {
    std::memcpy(dst + static_cast<std::size_t>(ob * row) * esize, src + static_cast<std::size_t>(ib) * esize,
                row_bytes);
  });
}

template <class E>
void transpose_as(const TensorView& x, const TensorView& y, const TransposePlan& plan) {
  transpose_tiled(reinterpret_cast<const E*>(x.data), reinterpret_cast<E*>(y.data), plan);
}

void transpose_kernel(KernelContext& ctx) {
  const TensorView &x = ctx.inputs[0], &y = ctx.outputs[0];
  const std::size_t esize = dtype_size(x.dtype);
  if (x.numel == 0) return;
  const TransposePlan plan = simplify(*x.shape, resolve_perm(*x.shape, ctx.attrs));
  const std::size_t r = plan.perm.size();
  if (r <= 1) {
    std::memcpy(y.data, x.data, static_cast<std::size_t>(x.numel) * esize);
  } else if (plan.perm[r - 1] == static_cast<std::int64_t>(r - 1)) {
    transpose_rows(x.data, y.data, plan, esize);
  } else {
    switch (esize) {
      case 1: transpose_as<std::uint8_t>(x, y, plan); break;
      case 2: transpose_as<std::uint16_t>(x, y, plan); break;
      case 4: transpose_as<std::uint32_t>(x, y, plan); break;
      default: transpose_as<std::uint64_t>(x, y, plan); break;
    }
  }
}

KernelCost cost_movement(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, 0);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = "Reshape",
                              .category = OpCategory::kDataMovement,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_reshape,
                              .cost = cost_movement,
                              .is_view = true});
NPUSCOPE_REGISTER_OP(OpSchema{.type = "Transpose",
                              .category = OpCategory::kDataMovement,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_transpose,
                              .cost = cost_movement});

NPUSCOPE_REGISTER_KERNEL_FOR_BOTH("Reshape", reshape_kernel);
NPUSCOPE_REGISTER_KERNEL_FOR_BOTH("Transpose", transpose_kernel);

}  // namespace npuscope::emulator::kernels

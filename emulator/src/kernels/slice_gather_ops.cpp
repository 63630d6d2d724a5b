// Slice and Gather with ONNX semantics: data movement, byte-exact, one kernel for both backends.
//
// Gather's indices are data: an index outside [-dim, dim) is a kernel fault (Note [Kernel faults]),
// found in a pre-pass over the indices; its output slab is left zero.
#include <algorithm>
#include <cstring>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {
namespace {

// ---- Slice --------------------------------------------------------------------------------------

// What one input dim contributes to the output: elements start, start + step, ... (size of them).
struct SliceDim {
  std::int64_t start = 0, step = 1, size = 0;
};

// ONNX Slice clamping for one axis: negative indices count from the end; positive steps clamp start
// and end to [0, dim], negative steps clamp start to [0, dim - 1] and end to [-1, dim - 1].
SliceDim slice_dim(std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step) {
  if (dim == 0) return {0, 1, 0};
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  // A step of |step| >= dim selects at most one element; clamping it keeps the arithmetic in range.
  step = std::clamp(step, -dim, dim);
  SliceDim s;
  s.step = step;
  if (step > 0) {
    s.start = std::clamp<std::int64_t>(start, 0, dim);
    end = std::clamp<std::int64_t>(end, 0, dim);
    s.size = end > s.start ? (end - s.start - 1) / step + 1 : 0;
  } else {
    s.start = std::clamp<std::int64_t>(start, 0, dim - 1);
    end = std::clamp<std::int64_t>(end, -1, dim - 1);
    s.size = s.start > end ? (s.start - end - 1) / -step + 1 : 0;
  }
  return s;
}

// Fills `dims` (one per input dim); returns what is wrong with the attributes, or "" when fine.
std::string resolve_slice(const Shape& x, const Attrs& attrs, std::vector<SliceDim>& dims) {
  const auto rank = static_cast<std::int64_t>(x.size());
  const auto starts = attrs.get_ints("starts"), ends = attrs.get_ints("ends");
  auto axes = attrs.get_ints("axes"), steps = attrs.get_ints("steps");
  if (starts.size() != ends.size()) return "starts and ends have different lengths";
  if (axes.empty()) {
    for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<std::int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size()) {
    return "starts, ends, axes and steps must have one length";
  }
  dims.assign(x.size(), {});
  std::vector<bool> seen(x.size(), false);
  for (std::size_t d = 0; d < x.size(); ++d) dims[d] = {0, 1, x[d]};
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const std::int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (a < 0 || a >= rank) return "axis " + std::to_string(axes[i]) + " is out of range for input " + shape_str(x);
    if (seen[static_cast<std::size_t>(a)]) return "axis " + std::to_string(axes[i]) + " is sliced twice";
    if (steps[i] == 0) return "step 0 on axis " + std::to_string(axes[i]);
    seen[static_cast<std::size_t>(a)] = true;
    dims[static_cast<std::size_t>(a)] = slice_dim(x[static_cast<std::size_t>(a)], starts[i], ends[i], steps[i]);
  }
  return {};
}

std::vector<TensorMeta> infer_slice(std::span<const TensorMeta> in, const Attrs& attrs) {
  if (!attrs.has("starts") || !attrs.has("ends")) fail("Slice", "needs the 'starts' and 'ends' attributes");
  std::vector<SliceDim> dims;
  const std::string error = resolve_slice(in[0].shape, attrs, dims);
  if (!error.empty()) fail("Slice", error);
  Shape out(dims.size());
  for (std::size_t d = 0; d < dims.size(); ++d) out[d] = dims[d].size;
  return {{out, in[0].dtype}};
}

// Odometer over the output's outer dims; the innermost dim is a strided (or contiguous) run.
template <class E>
void slice_copy(const E* src, E* dst, const Shape& x, const std::vector<SliceDim>& dims) {
  const std::size_t r = dims.size();
  const auto strides = strides_of(x);
  std::int64_t base = 0;
  for (std::size_t d = 0; d < r; ++d) base += dims[d].start * strides[d];
  const std::int64_t inner = dims[r - 1].size, inner_step = dims[r - 1].step * strides[r - 1];
  std::int64_t outer = 1;
  for (std::size_t d = 0; d + 1 < r; ++d) outer *= dims[d].size;
  std::vector<std::int64_t> index(r, 0);
  for (std::int64_t n = 0; n < outer; ++n, dst += inner) {
    if (inner_step == 1) {
      std::memcpy(dst, src + base, static_cast<std::size_t>(inner) * sizeof(E));
    } else {
      for (std::int64_t j = 0; j < inner; ++j) dst[j] = src[base + j * inner_step];
    }
    for (std::size_t d = r - 1; d-- > 0;) {
      const std::int64_t step = dims[d].step * strides[d];
      base += step;
      if (++index[d] < dims[d].size) break;
      base -= step * dims[d].size;
      index[d] = 0;
    }
  }
}

template <class E>
void slice_as(const TensorView& x, const TensorView& y, const std::vector<SliceDim>& dims) {
  slice_copy(reinterpret_cast<const E*>(x.data), reinterpret_cast<E*>(y.data), *x.shape, dims);
}

void slice_kernel(KernelContext& ctx) {
  const TensorView &x = ctx.inputs[0], &y = ctx.outputs[0];
  std::vector<SliceDim> dims;
  if (!resolve_slice(*x.shape, ctx.attrs, dims).empty() || y.numel == 0) return;  // infer vetted the attrs
  if (dims.empty()) {
    std::memcpy(y.data, x.data, dtype_size(x.dtype));
    return;
  }
  switch (dtype_size(x.dtype)) {
    case 1: slice_as<std::uint8_t>(x, y, dims); break;
    case 2: slice_as<std::uint16_t>(x, y, dims); break;
    case 4: slice_as<std::uint32_t>(x, y, dims); break;
    default: slice_as<std::uint64_t>(x, y, dims); break;
  }
}

// ---- Gather -------------------------------------------------------------------------------------

std::vector<TensorMeta> infer_gather(std::span<const TensorMeta> in, const Attrs& attrs) {
  const Shape &x = in[0].shape, &idx = in[1].shape;
  if (in[1].dtype != DType::kI32 && in[1].dtype != DType::kI64) {
    fail("Gather", "indices must be i32 or i64, got " + std::string(dtype_name(in[1].dtype)));
  }
  if (x.empty()) fail("Gather", "cannot gather from a scalar");
  const auto axis =
      static_cast<std::size_t>(normalize_axis(attrs.get_int("axis", 0), static_cast<std::int64_t>(x.size()), "Gather"));
  Shape out(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(axis));
  out.insert(out.end(), idx.begin(), idx.end());
  out.insert(out.end(), x.begin() + static_cast<std::ptrdiff_t>(axis) + 1, x.end());
  return {{out, in[0].dtype}};
}

void gather_kernel(KernelContext& ctx) {
  const TensorView &x = ctx.inputs[0], &indices = ctx.inputs[1], &y = ctx.outputs[0];
  const Shape& shape = *x.shape;
  const std::int64_t axis = normalize_axis(ctx.attrs.get_int("axis", 0), static_cast<std::int64_t>(shape.size()),
                                           "Gather");  // checked by infer
  const auto [outer, dim, inner] = split_at(shape, axis);
  std::vector<std::int64_t> idx(static_cast<std::size_t>(indices.numel));
  load_i64(indices, idx.data());
  for (auto& k : idx) {  // wrap negatives; -1 marks an index out of range
    const std::int64_t given = k;
    if (k < 0) k += dim;
    if (k < 0 || k >= dim) [[unlikely]] {
      set_index_fault(ctx, "Gather", given, dim, "axis " + std::to_string(axis) + " of data " + shape_str(shape));
      k = -1;
    }
  }
  const std::size_t slab = static_cast<std::size_t>(inner) * dtype_size(x.dtype);
  std::byte* dst = y.data;
  for (std::int64_t o = 0; o < outer; ++o) {
    const std::byte* src = x.data + static_cast<std::size_t>(o * dim) * slab;
    for (const std::int64_t k : idx) {
      if (k >= 0) [[likely]] {
        std::memcpy(dst, src + static_cast<std::size_t>(k) * slab, slab);
      } else {
        std::memset(dst, 0, slab);  // out of range: zeros, and a fault (see the note at the top)
      }
      dst += slab;
    }
  }
}

// Both read only the selected elements, not the whole input (an embedding lookup must not be charged
// for the whole table): the output's bytes twice (read and write) plus any indices.
KernelCost cost_selection(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  KernelCost c = vector_cost({}, out, 0);
  c.bytes = 2 * io_bytes({}, out) + io_bytes(in.subspan(1), {});
  return c;
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = "Slice",
                              .category = OpCategory::kDataMovement,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_slice,
                              .cost = cost_selection});
NPUSCOPE_REGISTER_OP(OpSchema{.type = "Gather",
                              .category = OpCategory::kDataMovement,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_gather,
                              .cost = cost_selection});

NPUSCOPE_REGISTER_KERNEL_FOR_BOTH("Slice", slice_kernel);
NPUSCOPE_REGISTER_KERNEL_FOR_BOTH("Gather", gather_kernel);

}  // namespace npuscope::emulator::kernels

// Concat and Split along one axis: data movement. Both are a loop over the dims before the axis that
// copies one contiguous chunk per tensor, byte-exact, with one kernel for both backends.
#include <algorithm>
#include <cstring>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {
namespace {

// How Concat's inputs lie in its output (Split's outputs in its input): per outer index, the parts
// side by side, part i a contiguous chunk of chunk[i] bytes.
struct AxisParts {
  std::int64_t outer = 1;
  std::vector<std::size_t> chunk;
};

AxisParts axis_parts(const TensorView& whole, std::span<const TensorView> parts, const Attrs& attrs, const char* op) {
  const auto rank = static_cast<std::int64_t>(whole.shape->size());
  const std::int64_t axis = normalize_axis(attrs.get_int("axis", 0), rank, op);  // checked by infer
  const AxisSplit s = split_at(*whole.shape, axis);
  AxisParts p{.outer = s.outer, .chunk = std::vector<std::size_t>(parts.size())};
  for (std::size_t i = 0; i < parts.size(); ++i) {
    p.chunk[i] =
        static_cast<std::size_t>((*parts[i].shape)[static_cast<std::size_t>(axis)] * s.inner) * dtype_size(whole.dtype);
  }
  return p;
}

// ---- Concat -------------------------------------------------------------------------------------

std::vector<TensorMeta> infer_concat(std::span<const TensorMeta> in, const Attrs& attrs) {
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (!in[i].present) fail("Concat", "input " + std::to_string(i) + " is undefined");
  }
  require_same_dtype(in, "Concat");
  const Shape& first = in[0].shape;
  if (first.empty()) fail("Concat", "cannot concatenate scalars (input 0 has shape [])");
  const auto rank = static_cast<std::int64_t>(first.size());
  const auto axis = static_cast<std::size_t>(normalize_axis(attrs.get_int("axis", 0), rank, "Concat"));
  Shape out = first;
  out[axis] = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const Shape& s = in[i].shape;
    bool ok = s.size() == first.size();
    for (std::size_t d = 0; ok && d < s.size(); ++d) ok = d == axis || s[d] == first[d];
    if (!ok) {
      fail("Concat", "input " + std::to_string(i) + " has shape " + shape_str(s) + ", which does not match input 0 " +
                         shape_str(first) + " outside axis " + std::to_string(axis));
    }
    out[axis] = checked_add(out[axis], s[axis], "Concat", "the concatenated dim");
  }
  return {{out, in[0].dtype}};
}

void concat_kernel(KernelContext& ctx) {
  const AxisParts p = axis_parts(ctx.outputs[0], ctx.inputs, ctx.attrs, "Concat");
  const std::vector<std::size_t>& chunk = p.chunk;
  std::byte* dst = ctx.outputs[0].data;
  for (std::int64_t o = 0; o < p.outer; ++o) {
    for (std::size_t i = 0; i < chunk.size(); ++i) {
      if (chunk[i] == 0) continue;
      std::memcpy(dst, ctx.inputs[i].data + static_cast<std::size_t>(o) * chunk[i], chunk[i]);
      dst += chunk[i];
    }
  }
}

// ---- Split --------------------------------------------------------------------------------------

// Split sizes: the 'split' attribute, or (ONNX opset 18) 'num_outputs' parts of ceil(dim / n).
std::vector<std::int64_t> resolve_split(const Shape& x, std::size_t axis, const Attrs& attrs) {
  if (attrs.has("split")) return attrs.get_ints("split");
  const std::int64_t n = attrs.get_int("num_outputs", 0);
  if (n <= 0) fail("Split", "needs the 'split' attribute (sizes along the axis) or 'num_outputs'");
  const std::int64_t dim = x[axis];
  // One output per part: more parts than elements is a mistake (and 2^40 of them would not fit).
  if (n > std::max<std::int64_t>(dim, 1)) {
    fail("Split", "num_outputs " + std::to_string(n) + " is outside [1, " +
                      std::to_string(std::max<std::int64_t>(dim, 1)) + "] for axis " + std::to_string(axis) +
                      " of input " + shape_str(x));
  }
  const std::int64_t part = (dim + n - 1) / n;
  std::vector<std::int64_t> sizes;
  for (std::int64_t left = dim, k = 0; k < n; ++k) {
    sizes.push_back(std::min(part, left));
    left -= sizes.back();
  }
  return sizes;
}

std::vector<TensorMeta> infer_split(std::span<const TensorMeta> in, const Attrs& attrs) {
  const Shape& x = in[0].shape;
  if (x.empty()) fail("Split", "cannot split a scalar");
  const auto axis =
      static_cast<std::size_t>(normalize_axis(attrs.get_int("axis", 0), static_cast<std::int64_t>(x.size()), "Split"));
  const auto sizes = resolve_split(x, axis, attrs);
  if (sizes.empty()) fail("Split", "'split' is empty");
  std::int64_t sum = 0;
  for (auto v : sizes) {
    if (v < 0) fail("Split", "split sizes " + shape_str(sizes) + " have a negative size");
    sum = checked_add(sum, v, "Split", [&] { return "the sum of split sizes " + shape_str(sizes); });
  }
  if (sum != x[axis]) {
    fail("Split", "split sizes " + shape_str(sizes) + " sum to " + std::to_string(sum) + " but axis " +
                      std::to_string(axis) + " of input " + shape_str(x) + " has " + std::to_string(x[axis]));
  }
  std::vector<TensorMeta> out;
  for (auto v : sizes) {
    Shape s = x;
    s[axis] = v;
    out.push_back({s, in[0].dtype});
  }
  return out;
}

void split_kernel(KernelContext& ctx) {
  const AxisParts p = axis_parts(ctx.inputs[0], ctx.outputs, ctx.attrs, "Split");
  const std::vector<std::size_t>& chunk = p.chunk;
  const std::byte* src = ctx.inputs[0].data;
  for (std::int64_t o = 0; o < p.outer; ++o) {
    for (std::size_t k = 0; k < chunk.size(); ++k) {
      if (chunk[k] == 0) continue;
      std::memcpy(ctx.outputs[k].data + static_cast<std::size_t>(o) * chunk[k], src, chunk[k]);
      src += chunk[k];
    }
  }
}

KernelCost cost_movement(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, 0);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = "Concat",
                              .category = OpCategory::kDataMovement,
                              .min_inputs = 1,
                              .max_inputs = -1,
                              .infer = infer_concat,
                              .cost = cost_movement});
NPUSCOPE_REGISTER_OP(OpSchema{.type = "Split",
                              .category = OpCategory::kDataMovement,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_split,
                              .cost = cost_movement});

NPUSCOPE_REGISTER_KERNEL_FOR_BOTH("Concat", concat_kernel);
NPUSCOPE_REGISTER_KERNEL_FOR_BOTH("Split", split_kernel);

}  // namespace npuscope::emulator::kernels

// Flatten, Squeeze, Unsqueeze, Identity, Expand, DepthToSpace, SpaceToDepth with ONNX semantics and
// attribute names (Squeeze/Unsqueeze 'axes', Expand 'shape', which ONNX passes as inputs: the ONNX
// adapters turn those into attributes). Data movement: bytes copied exactly, one kernel for both
// backends (see movement_util.h).
#include <string>

#include "movement_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kFlatten[] = "Flatten";
constexpr char kSqueeze[] = "Squeeze";
constexpr char kUnsqueeze[] = "Unsqueeze";
constexpr char kExpand[] = "Expand";
constexpr char kDepthToSpace[] = "DepthToSpace";
constexpr char kSpaceToDepth[] = "SpaceToDepth";

// ---- Flatten, Squeeze, Unsqueeze, Identity: the bytes stay, the shape changes -----------------

// ONNX Flatten: [d0 * ... * d(axis-1), d(axis) * ... * d(r-1)], axis in [-r, r] (default 1).
std::vector<TensorMeta> infer_flatten(std::span<const TensorMeta> in, const Attrs& attrs) {
  const Shape& x = in[0].shape;
  const auto rank = static_cast<std::int64_t>(x.size());
  const std::int64_t axis = attrs.get_int("axis", 1);
  const std::int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a > rank) {
    fail(kFlatten, "axis " + std::to_string(axis) + " is out of range for input " + shape_str(x));
  }
  std::int64_t outer = 1, inner = 1;
  for (std::int64_t d = 0; d < rank; ++d) (d < a ? outer : inner) *= x[static_cast<std::size_t>(d)];
  return {{{outer, inner}, in[0].dtype}};
}

// No 'axes' (or empty): every dim of size 1 goes. Listed axes must have size 1.
std::vector<TensorMeta> infer_squeeze(std::span<const TensorMeta> in, const Attrs& attrs) {
  const Shape& x = in[0].shape;
  const auto axes = attrs.get_ints("axes");
  std::vector<bool> drop(x.size(), false);
  if (axes.empty()) {
    for (std::size_t d = 0; d < x.size(); ++d) drop[d] = x[d] == 1;
  }
  for (auto axis : axes) {
    const auto a = static_cast<std::size_t>(normalize_axis(axis, static_cast<std::int64_t>(x.size()), kSqueeze));
    if (drop[a]) fail(kSqueeze, "axis " + std::to_string(axis) + " is listed twice");
    if (x[a] != 1) {
      fail(kSqueeze, "axis " + std::to_string(axis) + " of input " + shape_str(x) + " has size " +
                         std::to_string(x[a]) + ", not 1");
    }
    drop[a] = true;
  }
  Shape out;
  for (std::size_t d = 0; d < x.size(); ++d) {
    if (!drop[d]) out.push_back(x[d]);
  }
  return {{out, in[0].dtype}};
}

// 'axes' index the output (rank r + len(axes)); each gets a new dim of size 1.
std::vector<TensorMeta> infer_unsqueeze(std::span<const TensorMeta> in, const Attrs& attrs) {
  const Shape& x = in[0].shape;
  const auto axes = attrs.get_ints("axes");
  if (axes.empty()) fail(kUnsqueeze, "needs a non-empty 'axes' attribute");
  const auto rank = static_cast<std::int64_t>(x.size() + axes.size());
  std::vector<bool> added(static_cast<std::size_t>(rank), false);
  for (auto axis : axes) {
    const auto a = static_cast<std::size_t>(normalize_axis(axis, rank, kUnsqueeze));
    if (added[a]) fail(kUnsqueeze, "axes " + shape_str(axes) + " name output dim " + std::to_string(a) + " twice");
    added[a] = true;
  }
  Shape out;
  std::size_t next = 0;
  for (std::size_t d = 0; d < added.size(); ++d) out.push_back(added[d] ? 1 : x[next++]);
  return {{out, in[0].dtype}};
}

std::vector<TensorMeta> infer_identity(std::span<const TensorMeta> in, const Attrs&) {
  return {{in[0].shape, in[0].dtype}};
}

// ---- Expand -------------------------------------------------------------------------------------

// ONNX Expand broadcasts both ways: the output is broadcast(input shape, 'shape').
std::vector<TensorMeta> infer_expand(std::span<const TensorMeta> in, const Attrs& attrs) {
  if (!attrs.has("shape")) fail(kExpand, "needs the 'shape' attribute");
  const Shape shape = attrs.get_ints("shape");
  for (auto d : shape) {
    if (d < 0) fail(kExpand, "shape " + shape_str(shape) + " has a negative dim");
  }
  return {{broadcast_shapes(in[0].shape, shape, kExpand), in[0].dtype}};
}

void expand_kernel(KernelContext& ctx) {
  const TensorView &x = ctx.inputs[0], &y = ctx.outputs[0];
  std::vector<std::int64_t> index;
  BroadcastIndex(*x.shape, *y.shape).fill(index);
  copy_indexed(x.data, y.data, dtype_size(x.dtype), index);
}

// ---- DepthToSpace, SpaceToDepth -----------------------------------------------------------------

// Both take NCHW and a blocksize b; returns b after checking the input.
std::int64_t check_block(const TensorMeta& x, const Attrs& attrs, const char* op) {
  if (x.shape.size() != 4) fail(op, "needs a 4-D NCHW input, got " + shape_str(x.shape));
  if (!attrs.has("blocksize")) fail(op, "needs the 'blocksize' attribute");
  const std::int64_t b = attrs.get_int("blocksize", 0);
  // b² must not overflow (it divides the channels): b <= 2^31 - 1 (Note [Sizes from user input]).
  constexpr std::int64_t kMaxBlock = (std::int64_t{1} << 31) - 1;
  if (b <= 0 || b > kMaxBlock) {
    fail(op, "blocksize " + std::to_string(b) + " is outside [1, " + std::to_string(kMaxBlock) + "]");
  }
  return b;
}

std::vector<TensorMeta> infer_depth_to_space(std::span<const TensorMeta> in, const Attrs& attrs) {
  const std::int64_t b = check_block(in[0], attrs, kDepthToSpace);
  const Shape& x = in[0].shape;
  const std::string mode = attrs.get_string("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") fail(kDepthToSpace, "mode '" + mode + "' is not DCR or CRD");
  if (x[1] % (b * b) != 0) {
    fail(kDepthToSpace,
         "channels of input " + shape_str(x) + " are not a multiple of blocksize² = " + std::to_string(b * b));
  }
  return {{{x[0], x[1] / (b * b), checked_mul(x[2], b, kDepthToSpace, "height * blocksize"),
            checked_mul(x[3], b, kDepthToSpace, "width * blocksize")},
           in[0].dtype}};
}

std::vector<TensorMeta> infer_space_to_depth(std::span<const TensorMeta> in, const Attrs& attrs) {
  const std::int64_t b = check_block(in[0], attrs, kSpaceToDepth);
  const Shape& x = in[0].shape;
  if (x[2] % b != 0 || x[3] % b != 0) {
    fail(kSpaceToDepth,
         "height and width of input " + shape_str(x) + " are not multiples of blocksize " + std::to_string(b));
  }
  return {{{x[0], checked_mul(x[1], b * b, kSpaceToDepth, "channels * blocksize²"), x[2] / b, x[3] / b}, in[0].dtype}};
}

// Output element (n, c, h, w) with h = hh·b + i, w = ww·b + j reads input (n, channel, hh, ww):
// DCR channel = (i·b + j)·C' + c, CRD channel = c·b² + i·b + j (C' = output channels).
void depth_to_space_kernel(KernelContext& ctx) {
  const TensorView &x = ctx.inputs[0], &y = ctx.outputs[0];
  const std::int64_t b = ctx.attrs.get_int("blocksize", 1);
  const bool dcr = ctx.attrs.get_string("mode", "DCR") == "DCR";
  const Shape& s = *y.shape;
  const std::int64_t c_out = s[1], h_in = s[2] / b, w_in = s[3] / b, c_in = c_out * b * b;
  std::vector<std::int64_t> index(static_cast<std::size_t>(y.numel));
  std::size_t o = 0;
  for (std::int64_t n = 0; n < s[0]; ++n) {
    for (std::int64_t c = 0; c < c_out; ++c) {
      for (std::int64_t h = 0; h < s[2]; ++h) {
        for (std::int64_t w = 0; w < s[3]; ++w) {
          const std::int64_t i = h % b, j = w % b;
          const std::int64_t ch = dcr ? (i * b + j) * c_out + c : c * b * b + i * b + j;
          index[o++] = ((n * c_in + ch) * h_in + h / b) * w_in + w / b;
        }
      }
    }
  }
  copy_indexed(x.data, y.data, dtype_size(x.dtype), index);
}

// Output channel (i·b + j)·C + c at (h, w) reads input (n, c, h·b + i, w·b + j).
void space_to_depth_kernel(KernelContext& ctx) {
  const TensorView &x = ctx.inputs[0], &y = ctx.outputs[0];
  const std::int64_t b = ctx.attrs.get_int("blocksize", 1);
  const Shape& s = *x.shape;
  const std::int64_t c_in = s[1], h_out = s[2] / b, w_out = s[3] / b;
  std::vector<std::int64_t> index(static_cast<std::size_t>(y.numel));
  std::size_t o = 0;
  for (std::int64_t n = 0; n < s[0]; ++n) {
    for (std::int64_t co = 0; co < c_in * b * b; ++co) {
      const std::int64_t c = co % c_in, i = co / c_in / b, j = co / c_in % b;
      for (std::int64_t h = 0; h < h_out; ++h) {
        for (std::int64_t w = 0; w < w_out; ++w) {
          index[o++] = ((n * c_in + c) * s[2] + h * b + i) * s[3] + w * b + j;
        }
      }
    }
  }
  copy_indexed(x.data, y.data, dtype_size(x.dtype), index);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kFlatten,
                              .category = OpCategory::kDataMovement,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_flatten,
                              .cost = movement_cost,
                              .is_view = true});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kSqueeze,
                              .category = OpCategory::kDataMovement,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_squeeze,
                              .cost = movement_cost,
                              .is_view = true});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kUnsqueeze,
                              .category = OpCategory::kDataMovement,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_unsqueeze,
                              .cost = movement_cost,
                              .is_view = true});
NPUSCOPE_REGISTER_OP(OpSchema{.type = "Identity",
                              .category = OpCategory::kDataMovement,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_identity,
                              .cost = movement_cost,
                              .is_view = true});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kExpand,
                              .category = OpCategory::kDataMovement,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_expand,
                              .cost = movement_cost});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kDepthToSpace,
                              .category = OpCategory::kDataMovement,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_depth_to_space,
                              .cost = movement_cost});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kSpaceToDepth,
                              .category = OpCategory::kDataMovement,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_space_to_depth,
                              .cost = movement_cost});

NPUSCOPE_REGISTER_KERNEL_FOR_BOTH(kFlatten, copy_kernel);
NPUSCOPE_REGISTER_KERNEL_FOR_BOTH(kSqueeze, copy_kernel);
NPUSCOPE_REGISTER_KERNEL_FOR_BOTH(kUnsqueeze, copy_kernel);
NPUSCOPE_REGISTER_KERNEL_FOR_BOTH("Identity", copy_kernel);
NPUSCOPE_REGISTER_KERNEL_FOR_BOTH(kExpand, expand_kernel);
NPUSCOPE_REGISTER_KERNEL_FOR_BOTH(kDepthToSpace, depth_to_space_kernel);
NPUSCOPE_REGISTER_KERNEL_FOR_BOTH(kSpaceToDepth, space_to_depth_kernel);

}  // namespace npuscope::emulator::kernels

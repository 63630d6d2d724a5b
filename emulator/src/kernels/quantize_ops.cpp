// Linear quantisation (ONNX opsets 10-13, torch.quantize_per_tensor / per_channel, Ascend's
// AscendQuant / AscendDequant):
//   QuantizeLinear         x (float), y_scale, y_zero_point (optional: u8 0) -> y = saturate(
//                          round_half_even(x / y_scale) + y_zero_point) in the zero point's dtype
//                          (u8 or i8).
//   DequantizeLinear       x (u8, i8 or i32), x_scale, x_zero_point (optional: 0) -> (x - zero_point)
//                          * x_scale in the scale's dtype.
//   DynamicQuantizeLinear  x (float) -> y (u8), y_scale, y_zero_point: the scale and zero point that
//                          map [min(x, 0), max(x, 0)] onto [0, 255], then QuantizeLinear.
// Scale and zero point are scalars (per tensor) or 1-D along 'axis' (default 1; per channel).
// Both backends compute in f32, as the ONNX reference (numpy on float32) and the NPU do, so that a
// value halfway between two steps rounds the same way in the golden run. Vector ops.
#include <algorithm>
#include <cmath>
#include <string>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kQuantize[] = "QuantizeLinear", kDequantize[] = "DequantizeLinear", kDynamic[] = "DynamicQuantizeLinear";

// Checks scale (input 1) and zero point (input 2, if present) against x: scalars or [x's axis dim].
void check_params(std::span<const TensorMeta> in, const Attrs& attrs, const char* op) {
  require_floating(in, 1, op);
  const Shape& x = in[0].shape;
  const Shape& s = in[1].shape;
  if (shape_numel(s) != 1 || s.size() > 1) {
    const auto axis =
        static_cast<std::size_t>(normalize_axis(attrs.get_int("axis", 1), static_cast<std::int64_t>(x.size()), op));
    if (s.size() != 1 || s[0] != x[axis]) {
      fail(op, "the scale must be a scalar or 1-D of x's dim " + std::to_string(axis) + " (" + std::to_string(x[axis]) +
                   "), got " + shape_str(s) + " for x " + shape_str(x));
    }
  }
  const bool per_tensor = shape_numel(s) == 1 && s.size() <= 1;
  if (in.size() > 2 && in[2].present && in[2].shape != s &&
      !(per_tensor && in[2].numel() == 1 && in[2].shape.size() <= 1)) {
    fail(op, "the zero point must have the scale's shape " + shape_str(s) + ", got " + shape_str(in[2].shape));
  }
}

std::vector<TensorMeta> infer_quantize(std::span<const TensorMeta> in, const Attrs& attrs) {
  require_floating(in, 0, kQuantize);
  check_params(in, attrs, kQuantize);
  const DType out = in.size() > 2 && in[2].present ? in[2].dtype : DType::kU8;
  if (out != DType::kU8 && out != DType::kI8) {
    fail(kQuantize, "the zero point must be u8 or i8, got " + std::string(dtype_name(out)));
  }
  return {{in[0].shape, out}};
}

std::vector<TensorMeta> infer_dequantize(std::span<const TensorMeta> in, const Attrs& attrs) {
  const DType t = in[0].dtype;
  if (t != DType::kU8 && t != DType::kI8 && t != DType::kI32) {
    fail(kDequantize, "x must be u8, i8 or i32, got " + std::string(dtype_name(t)));
  }
  check_params(in, attrs, kDequantize);
  if (in.size() > 2 && in[2].present && in[2].dtype != t) {
    fail(kDequantize, "the zero point must have x's dtype " + std::string(dtype_name(t)) + ", got " +
                          std::string(dtype_name(in[2].dtype)));
  }
  return {{in[0].shape, in[1].dtype}};
}

std::vector<TensorMeta> infer_dynamic(std::span<const TensorMeta> in, const Attrs&) {
  require_floating(in, 0, kDynamic);
  return {{in[0].shape, DType::kU8}, {{}, DType::kF32}, {{}, DType::kU8}};
}

// Per element: the index of its scale (0 per tensor; its coordinate along axis per channel).
struct ChannelOf {
  std::int64_t inner = 1, dim = 1;
  std::int64_t operator()(std::int64_t i) const { return (i / inner) % dim; }
};

ChannelOf channel_of(const TensorView& x, const TensorView& scale, const Attrs& attrs) {
  if (scale.numel == 1 && scale.shape->size() <= 1) return {};
  const auto axis = static_cast<std::size_t>(
      normalize_axis(attrs.get_int("axis", 1), static_cast<std::int64_t>(x.shape->size()), ""));
  ChannelOf c{1, (*x.shape)[axis]};
  for (std::size_t d = axis + 1; d < x.shape->size(); ++d) c.inner *= (*x.shape)[d];
  return c;
}

std::vector<std::int64_t> zero_points(const KernelContext& ctx, std::int64_t n) {
  std::vector<std::int64_t> zp(static_cast<std::size_t>(n), 0);
  if (ctx.inputs.size() > 2 && ctx.inputs[2].data != nullptr) load_i64(ctx.inputs[2], zp.data());
  return zp;
}

// saturate(round_half_even(x / scale) + zero_point) for one element, in f32.
std::int64_t quantize_one(float x, float scale, std::int64_t zp, std::int64_t lo, std::int64_t hi) {
  const float q = std::nearbyint(x / scale) + static_cast<float>(zp);
  if (!(q == q)) return std::clamp<std::int64_t>(zp, lo, hi);  // NaN: the zero point
  return static_cast<std::int64_t>(std::clamp(q, static_cast<float>(lo), static_cast<float>(hi)));
}

void quantize_into(const std::vector<float>& x, const std::vector<float>& scale, const std::vector<std::int64_t>& zp,
                   const ChannelOf& ch, const TensorView& y) {
  const bool u8 = y.dtype == DType::kU8;
  const std::int64_t lo = u8 ? 0 : -128, hi = u8 ? 255 : 127;
  std::vector<std::int64_t> q(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const auto c = static_cast<std::size_t>(ch(static_cast<std::int64_t>(i)));
    q[i] = quantize_one(x[i], scale[c], zp[c], lo, hi);
  }
  store_i64(y, q.data());
}

void quantize_kernel(KernelContext& ctx) {
  const TensorView &x = ctx.inputs[0], &s = ctx.inputs[1];
  const std::vector<float> xv = load<float>(x, ctx), sv = load<float>(s, ctx);
  quantize_into(xv, sv, zero_points(ctx, s.numel), channel_of(x, s, ctx.attrs), ctx.outputs[0]);
}

void dequantize_kernel(KernelContext& ctx) {
  const TensorView &x = ctx.inputs[0], &s = ctx.inputs[1];
  std::vector<std::int64_t> xv(static_cast<std::size_t>(x.numel));
  load_i64(x, xv.data());
  const std::vector<float> sv = load<float>(s, ctx);
  const std::vector<std::int64_t> zp = zero_points(ctx, s.numel);
  const ChannelOf ch = channel_of(x, s, ctx.attrs);
  std::vector<float> y(xv.size());
  for (std::size_t i = 0; i < y.size(); ++i) {
    const auto c = static_cast<std::size_t>(ch(static_cast<std::int64_t>(i)));
    y[i] = static_cast<float>(xv[i] - zp[c]) * sv[c];
  }
  store<float>(ctx.outputs[0], y.data(), ctx);
}

// The ONNX reference's arithmetic, in f32: scale = (max - min) / 255 over a range that holds 0 (1 /
// 255 when x is all zeros), zero point = round(clamp(0 - min / scale, 0, 255)).
void dynamic_kernel(KernelContext& ctx) {
  const std::vector<float> x = load<float>(ctx.inputs[0], ctx);
  float lo = 0, hi = 0;
  for (float v : x) lo = std::min(lo, v), hi = std::max(hi, v);
  const float scale = (hi == lo ? 1.0f : hi - lo) / 255.0f;
  const auto zp = static_cast<std::int64_t>(std::nearbyint(std::clamp(0.0f - lo / scale, 0.0f, 255.0f)));
  quantize_into(x, {scale}, {zp}, ChannelOf{}, ctx.outputs[0]);
  store_f32_raw(ctx.outputs[1], &scale);
  store_i64(ctx.outputs[2], &zp);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kQuantize,
                              .category = OpCategory::kVector,
                              .min_inputs = 2,
                              .max_inputs = 3,
                              .infer = infer_quantize,
                              .cost = [](std::span<const TensorMeta> in, std::span<const TensorMeta> out,
                                         const Attrs&) { return vector_cost(in, out, 3); }});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kDequantize,
                              .category = OpCategory::kVector,
                              .min_inputs = 2,
                              .max_inputs = 3,
                              .infer = infer_dequantize,
                              .cost = [](std::span<const TensorMeta> in, std::span<const TensorMeta> out,
                                         const Attrs&) { return vector_cost(in, out, 2); }});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kDynamic,
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_dynamic,
                              .cost = [](std::span<const TensorMeta> in, std::span<const TensorMeta> out,
                                         const Attrs&) { return vector_cost(in, out, 5); }});
NPUSCOPE_REGISTER_KERNEL_FOR_BOTH(kQuantize, quantize_kernel);
NPUSCOPE_REGISTER_KERNEL_FOR_BOTH(kDequantize, dequantize_kernel);
NPUSCOPE_REGISTER_KERNEL_FOR_BOTH(kDynamic, dynamic_kernel);

}  // namespace npuscope::emulator::kernels

// ONNX integer matrix products as emulator ops (Note [ONNX adapters]):
//   MatMulInteger  (A - a_zero_point) @ (B - b_zero_point) in i32: Cast, Sub, an i32 MatMul (the
//                  NPU's cube has no i32 path in the emulator, so it runs as an AI CPU task, exact);
//                  a_zero_point is a scalar or one per row of A, b_zero_point a scalar or one per
//                  column of B.
//   QLinearMatMul  the same product, scaled by a_scale · b_scale / y_scale (worked out on the host)
//                  and requantised by QuantizeLinear with y_zero_point, as the ONNX reference does.
//   ConvInteger    Conv of (x - x_zero_point) and (w - w_zero_point) in i32; w_zero_point a scalar or
//                  one per output channel. The centred operands go through f64 (Cast, Sub) and the
//                  node's Conv (convolve(): 1-D, 2-D, 3-D, groups, pads, auto_pad, dilations):
//                  |x - zp| <= 255, so every product and every sum below 2^53 is an integer in f64
//                  and dgemm adds them exactly; the NPU has no f64, so it is an AI CPU task, exact.
//   QLinearConv    the same sum plus the i32 bias B, times S = x_scale * w_scale / y_scale (w_scale
//                  a scalar or one per output channel; S in f32 as the ONNX reference's numpy
//                  float32 arrays give it, the product in f64 as numpy's int * float32), rounded
//                  half to even, plus y_zero_point, saturated to u8/i8: Mul, Round, Add, Clip, Cast
//                  in f64, exact like the reference.
// (QuantizeLinear and DequantizeLinear themselves, the QDQ format most quantisers write, are
// emulator ops: kernels/quantize_ops.cpp.)
#include <string>
#include <vector>

#include "onnx_adapter.h"

namespace npuscope::emulator::onnx_import {
namespace {

Tensor op1(const NodeContext& ctx, const char* type, std::vector<Tensor> in, const Attrs& attrs = {}) {
  return call_op1(type, std::move(in), attrs, ctx.call());
}

Tensor cast(const NodeContext& ctx, const Tensor& t, DType to) {
  return op1(ctx, "Cast", {t}, {{"to", static_cast<std::int64_t>(to)}});
}

// t itself, which must be u8 or i8 (`what` names it in the error).
const Tensor& eight_bit(const NodeContext& ctx, const Tensor& t, const char* what) {
  if (t.dtype() != DType::kU8 && t.dtype() != DType::kI8) {
    ctx.fail(std::string(what) + " must be u8 or i8, got " + std::string(dtype_name(t.dtype())));
  }
  return t;
}

Tensor to_i32(const NodeContext& ctx, const Tensor& t) {
  return cast(ctx, eight_bit(ctx, t, "integer operands"), DType::kI32);
}

// x - zero_point in i32; a per-row zero point of A ([M]) is shaped [M, 1] to broadcast along rows.
Tensor centred(const NodeContext& ctx, const Tensor& x, std::size_t zp_input, bool per_row) {
  Tensor x32 = to_i32(ctx, x);
  if (!ctx.has_input(zp_input)) return x32;
  Tensor zp = to_i32(ctx, ctx.input(zp_input));
  if (per_row && zp.numel() > 1) {
    zp = op1(ctx, "Reshape", {zp}, {{"shape", Shape{zp.numel(), 1}}});
  }
  return op1(ctx, "Sub", {x32, zp});
}

Tensor integer_product(const NodeContext& ctx, std::size_t a, std::size_t a_zp, std::size_t b, std::size_t b_zp) {
  if (!ctx.has_input(a) || !ctx.has_input(b)) ctx.fail("needs both matrix operands");
  return op1(ctx, "MatMul", {centred(ctx, ctx.input(a), a_zp, true), centred(ctx, ctx.input(b), b_zp, false)});
}

std::vector<Tensor> matmul_integer(NodeContext& ctx) { return {integer_product(ctx, 0, 2, 1, 3)}; }

double scalar(const NodeContext& ctx, std::size_t i, const char* what) {
  if (!ctx.has_input(i) || ctx.input(i).numel() != 1) ctx.fail(std::string(what) + " must be one value");
  return ctx.input_floats(i)[0];
}

// Inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point.
std::vector<Tensor> qlinear_matmul(NodeContext& ctx) {
  const double scale = scalar(ctx, 1, "a_scale") * scalar(ctx, 4, "b_scale") / scalar(ctx, 6, "y_scale");
  const Tensor c =
      op1(ctx, "Cast", {integer_product(ctx, 0, 2, 3, 5)}, {{"to", static_cast<std::int64_t>(DType::kF32)}});
  const Tensor m = Tensor::from_floats(std::vector<float>{static_cast<float>(scale)}, {}, DType::kF32, ctx.device);
  const Tensor one = Tensor::from_floats(std::vector<float>{1.0f}, {}, DType::kF32, ctx.device);
  std::vector<Tensor> q{op1(ctx, "Mul", {c, m}), one};
  if (ctx.has_input(7)) q.push_back(ctx.input(7));
  return {op1(ctx, "QuantizeLinear", q)};
}

// ---- ConvInteger, QLinearConv ------------------------------------------------------------------

// Input i, which the node must give, u8 or i8.
const Tensor& quantized(const NodeContext& ctx, std::size_t i, const char* what) {
  if (!ctx.has_input(i)) ctx.fail(std::string("needs input ") + std::to_string(i) + " (" + what + ")");
  return eight_bit(ctx, ctx.input(i), what);
}

// A per-channel operand [M] of w shaped [M, 1, ..., 1] to broadcast over w [M, C/group, k...] or
// over the output [N, M, spatial...] (at dim 1: `lead` = 1). A scalar or one-value operand stays.
Tensor per_channel(const NodeContext& ctx, const Tensor& t, std::int64_t channels, int rank, int lead,
                   const char* what) {
  if (t.numel() == 1) return t.ndim() == 0 ? t : op1(ctx, "Reshape", {t}, {{"shape", Shape{}}});
  if (t.ndim() != 1 || t.numel() != channels) {
    ctx.fail(std::string(what) + " must be one value or one per output channel (" + std::to_string(channels) +
             "), got shape " + shape_str(t.shape()));
  }
  Shape shape(static_cast<std::size_t>(rank - lead), 1);
  shape[0] = channels;
  return op1(ctx, "Reshape", {t}, {{"shape", shape}});
}

// x - x_zero_point in f64 (x_zero_point: one value) and w - w_zero_point (one value or one per
// output channel), then the node's convolution with the bias `b` (f64 or undefined).
Tensor centred_conv(const NodeContext& ctx, std::size_t x_in, std::size_t x_zp, std::size_t w_in, std::size_t w_zp,
                    const Tensor& b) {
  const Tensor& x = quantized(ctx, x_in, "x");
  const Tensor& w = quantized(ctx, w_in, "w");
  if (w.ndim() < 3) ctx.fail("w must be [M, C/group, kernel...], got shape " + shape_str(w.shape()));
  Tensor xc = cast(ctx, x, DType::kF64);
  if (ctx.has_input(x_zp)) {
    const Tensor& zp = quantized(ctx, x_zp, "x_zero_point");
    if (zp.numel() != 1) ctx.fail("x_zero_point must be one value, got shape " + shape_str(zp.shape()));
    xc = op1(ctx, "Sub", {xc, cast(ctx, zp, DType::kF64)});
  }
  Tensor wc = cast(ctx, w, DType::kF64);
  if (ctx.has_input(w_zp)) {
    const Tensor zp = cast(ctx, quantized(ctx, w_zp, "w_zero_point"), DType::kF64);
    wc = op1(ctx, "Sub", {wc, per_channel(ctx, zp, w.dim(0), w.ndim(), 0, "w_zero_point")});
  }
  return convolve(ctx, xc, wc, b);
}

// Inputs: x, w, x_zero_point, w_zero_point.
std::vector<Tensor> conv_integer(NodeContext& ctx) {
  return {cast(ctx, centred_conv(ctx, 0, 2, 1, 3, Tensor()), DType::kI32)};
}

// Inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B.
std::vector<Tensor> qlinear_conv(NodeContext& ctx) {
  Tensor bias;
  if (ctx.has_input(8)) {
    if (ctx.input(8).dtype() != DType::kI32)
      ctx.fail("B must be i32, got " + std::string(dtype_name(ctx.input(8).dtype())));
    bias = cast(ctx, ctx.input(8), DType::kF64);
  }
  const Tensor acc = centred_conv(ctx, 0, 2, 3, 5, bias);
  const auto x_scale = static_cast<float>(scalar(ctx, 1, "x_scale"));
  const auto y_scale = static_cast<float>(scalar(ctx, 6, "y_scale"));
  if (!ctx.has_input(4)) ctx.fail("needs input 4 (w_scale)");
  const std::vector<double> w_scale = ctx.input_floats(4);
  std::vector<float> s(w_scale.size());
  for (std::size_t i = 0; i < s.size(); ++i) s[i] = x_scale * static_cast<float>(w_scale[i]) / y_scale;  // in f32
  Tensor scale = Tensor::from_floats(s, ctx.input(4).shape(), DType::kF32, ctx.device);
  scale = per_channel(ctx, cast(ctx, scale, DType::kF64), acc.dim(1), acc.ndim(), 1, "w_scale");
  Tensor y = op1(ctx, "Round", {op1(ctx, "Mul", {acc, scale})});
  DType out = DType::kU8;
  if (ctx.has_input(7)) {
    const Tensor& zp = quantized(ctx, 7, "y_zero_point");
    if (zp.numel() != 1) ctx.fail("y_zero_point must be one value, got shape " + shape_str(zp.shape()));
    out = zp.dtype();
    y = op1(ctx, "Add", {y, cast(ctx, zp, DType::kF64)});
  }
  const bool u8 = out == DType::kU8;
  y = op1(ctx, "Clip", {y}, {{"min", u8 ? 0.0 : -128.0}, {"max", u8 ? 255.0 : 127.0}});
  return {cast(ctx, y, out)};
}

}  // namespace

NPUSCOPE_REGISTER_ONNX_ADAPTER("ConvInteger", conv_integer);
NPUSCOPE_REGISTER_ONNX_ADAPTER("QLinearConv", qlinear_conv);
NPUSCOPE_REGISTER_ONNX_ADAPTER("MatMulInteger", matmul_integer);
NPUSCOPE_REGISTER_ONNX_ADAPTER("QLinearMatMul", qlinear_matmul);

}  // namespace npuscope::emulator::onnx_import

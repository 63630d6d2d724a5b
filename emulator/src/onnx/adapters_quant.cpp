// ONNX integer matrix products as emulator ops (Note [ONNX adapters]):
//   MatMulInteger  (A - a_zero_point) @ (B - b_zero_point) in i32: Cast, Sub, an i32 MatMul (the
//                  NPU's cube has no i32 path in the emulator, so it runs as an AI CPU task, exact);
//                  a_zero_point is a scalar or one per row of A, b_zero_point a scalar or one per
//                  column of B.
//   QLinearMatMul  the same product, scaled by a_scale · b_scale / y_scale (worked out on the host)
//                  and requantised by QuantizeLinear with y_zero_point, as the ONNX reference does.
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

Tensor to_i32(const NodeContext& ctx, const Tensor& t) {
  if (t.dtype() != DType::kU8 && t.dtype() != DType::kI8) {
    ctx.fail("integer operands must be u8 or i8, got " + std::string(dtype_name(t.dtype())));
  }
  return op1(ctx, "Cast", {t}, {{"to", static_cast<std::int64_t>(DType::kI32)}});
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

}  // namespace

NPUSCOPE_REGISTER_ONNX_ADAPTER("MatMulInteger", matmul_integer);
NPUSCOPE_REGISTER_ONNX_ADAPTER("QLinearMatMul", qlinear_matmul);

}  // namespace npuscope::emulator::onnx_import

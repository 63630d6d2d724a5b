// ONNX adapters for the index and matrix ops whose operands ONNX passes as inputs (Note [ONNX
// adapters]): TopK's k, Range's start/limit/delta, OneHot's depth, Trilu's k, CumSum's axis; NonZero
// and Compress (their output size is read on the host first), EyeLike's ONNX dtype, Hardmax before opset 13 (over
// the input flattened to 2-D at 'axis') and Scatter (opsets 9-10: ScatterElements by another name).
#include <cmath>
#include <string>
#include <vector>

#include "onnx_adapter.h"

namespace npuscope::emulator::onnx_import {
namespace {

using Ints = std::vector<std::int64_t>;

std::vector<Tensor> run(NodeContext& ctx, const char* type, std::vector<Tensor> inputs, const Attrs& attrs) {
  return call_op(type, std::move(inputs), attrs, ctx.call());
}

// A scalar operand (input i) as one integer: integer inputs exactly (a k of INT64_MAX stays
// INT64_MAX, not 2^63 through a double), float ones truncated when in int64's range.
std::int64_t scalar_int(NodeContext& ctx, std::size_t i, const char* what) {
  if (!ctx.has_input(i)) ctx.fail(std::string("needs the ") + what + " input");
  if (ctx.input(i).numel() != 1) {
    ctx.fail(std::string(what) + " must hold one value, got " + std::to_string(ctx.input(i).numel()));
  }
  if (!is_floating(ctx.input(i).dtype())) return ctx.input_ints(i)[0];
  const double v = ctx.input_floats(i)[0];
  if (!(v > -0x1p63 && v < 0x1p63)) {
    ctx.fail(std::string(what) + " " + std::to_string(v) + " is not an integer in int64's range");
  }
  return static_cast<std::int64_t>(v);
}

// TopK-10+: k is input 1.
std::vector<Tensor> topk(NodeContext& ctx) {
  Attrs a = ctx.attrs;
  if (ctx.opset >= 10) a.set("k", scalar_int(ctx, 1, "k"));
  return run(ctx, "TopK", {ctx.input(0)}, a);
}

// Range: three scalar inputs; integer dtypes are read exactly.
std::vector<Tensor> range(NodeContext& ctx) {
  Attrs a;
  const char* names[] = {"start", "limit", "delta"};
  for (std::size_t i = 0; i < 3; ++i) {
    if (!ctx.has_input(i)) ctx.fail(std::string("needs the ") + names[i] + " input");
    if (is_floating(ctx.input(i).dtype())) {
      a.set(names[i], ctx.input_floats(i).at(0));
    } else {
      a.set(names[i], ctx.input_ints(i).at(0));
    }
  }
  return run(ctx, "Range", {ctx.input(0)}, a);
}

// OneHot: depth is input 1 (cast to an integer); indices and values stay inputs.
std::vector<Tensor> onehot(NodeContext& ctx) {
  Attrs a = ctx.attrs;
  a.set("depth", scalar_int(ctx, 1, "depth"));
  return run(ctx, "OneHot", {ctx.input(0), ctx.input(2)}, a);
}

// NonZero: the output size depends on the values, so they are counted on the host first (as a
// framework synchronises for nonzero()).
std::vector<Tensor> nonzero(NodeContext& ctx) {
  std::int64_t count = 0;
  for (double v : ctx.input_floats(0)) count += v != 0;  // NaN is non-zero
  Attrs a = ctx.attrs;
  a.set("count", count);
  return run(ctx, "NonZero", {ctx.input(0)}, a);
}

// Compress: the output size depends on the condition, counted on the host as for NonZero (the
// slices the condition reaches along the axis, or over the flattened input without one).
std::vector<Tensor> compress(NodeContext& ctx) {
  if (!ctx.has_input(0) || !ctx.has_input(1)) ctx.fail("needs input and condition");
  const Tensor& x = ctx.input(0);
  std::int64_t reach = x.numel();
  if (ctx.attrs.has("axis")) {
    const std::int64_t axis = ctx.attrs.get_int("axis", 0);
    if (axis < -x.ndim() || axis >= x.ndim()) {
      ctx.fail("axis " + std::to_string(axis) + " is out of range for " + shape_str(x.shape()));
    }
    reach = x.shape()[static_cast<std::size_t>(axis < 0 ? axis + x.ndim() : axis)];
  }
  const auto cond = ctx.input_floats(1);
  std::int64_t count = 0;
  for (std::size_t i = 0; i < cond.size() && static_cast<std::int64_t>(i) < reach; ++i) count += cond[i] != 0;
  Attrs a = ctx.attrs;
  a.set("count", count);
  return run(ctx, "Compress", {x, ctx.input(1)}, a);
}

// EyeLike's 'dtype' is an ONNX TensorProto type; the emulator op takes a DType.
std::vector<Tensor> eye_like(NodeContext& ctx) {
  Attrs a = ctx.attrs;
  if (a.has("dtype")) {
    const DType t = dtype_from_onnx(onnx_type_attr(ctx, "dtype", 1), ctx.name);
    a.set("dtype", static_cast<std::int64_t>(t));
  }
  return run(ctx, "EyeLike", {ctx.input(0)}, a);
}

std::vector<Tensor> trilu(NodeContext& ctx) {
  Attrs a = ctx.attrs;
  if (ctx.has_input(1)) a.set("k", scalar_int(ctx, 1, "k"));
  return run(ctx, "Trilu", {ctx.input(0)}, a);
}

std::vector<Tensor> cumsum(NodeContext& ctx) {
  Attrs a = ctx.attrs;
  a.set("axis", scalar_int(ctx, 1, "axis"));
  return run(ctx, "CumSum", {ctx.input(0)}, a);
}

// Hardmax before opset 13 works on the input flattened to 2-D at 'axis' (default 1).
std::vector<Tensor> hardmax(NodeContext& ctx) {
  if (ctx.opset >= 13) return run(ctx, "Hardmax", {ctx.input(0)}, ctx.attrs);
  const Tensor& x = ctx.input(0);
  const Tensor flat = call_op1("Flatten", {x}, {{"axis", ctx.attrs.get_int("axis", 1)}}, ctx.call());
  const Tensor y = call_op1("Hardmax", {flat}, {{"axis", std::int64_t{1}}}, ctx.call());
  return run(ctx, "Reshape", {y}, {{"shape", x.shape()}, {"allowzero", std::int64_t{1}}});
}

std::vector<Tensor> scatter(NodeContext& ctx) {
  return run(ctx, "ScatterElements", {ctx.input(0), ctx.input(1), ctx.input(2)}, ctx.attrs);
}

}  // namespace

NPUSCOPE_REGISTER_ONNX_ADAPTER("TopK", topk);
NPUSCOPE_REGISTER_ONNX_ADAPTER("Range", range);
NPUSCOPE_REGISTER_ONNX_ADAPTER("OneHot", onehot);
NPUSCOPE_REGISTER_ONNX_ADAPTER("NonZero", nonzero);
NPUSCOPE_REGISTER_ONNX_ADAPTER("Compress", compress);
NPUSCOPE_REGISTER_ONNX_ADAPTER("EyeLike", eye_like);
NPUSCOPE_REGISTER_ONNX_ADAPTER("Trilu", trilu);
NPUSCOPE_REGISTER_ONNX_ADAPTER("CumSum", cumsum);
NPUSCOPE_REGISTER_ONNX_ADAPTER("Hardmax", hardmax);
NPUSCOPE_REGISTER_ONNX_ADAPTER("Scatter", scatter);

}  // namespace npuscope::emulator::onnx_import

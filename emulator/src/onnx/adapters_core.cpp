// Adapters for ops that produce constants or read only metadata: Constant, ConstantOfShape, Shape,
// Size; and Cast/CastLike, whose `to` is an ONNX type number rather than our DType.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>

#include "onnx_adapter.h"

namespace npuscope::emulator::onnx_import {
namespace {

Tensor on_device(const Tensor& host, const NodeContext& ctx) {
  return ctx.device.is_npu() ? host.to(ctx.device) : host;
}

std::vector<Tensor> constant(NodeContext& ctx) {
  if (const onnx::TensorProto* t = ctx.tensor_attr("value"))
    return {on_device(tensor_from_proto(*t, ctx.model_path), ctx)};
  const Attrs& a = ctx.attrs;
  if (a.has("value_float")) {
    const float v = static_cast<float>(a.get_float("value_float", 0));
    return {on_device(Tensor::from_floats(std::vector<float>{v}, {}, DType::kF32), ctx)};
  }
  if (a.has("value_floats")) {
    std::vector<float> v;
    for (double d : a.get_floats("value_floats")) v.push_back(static_cast<float>(d));
    const auto n = static_cast<std::int64_t>(v.size());
    return {on_device(Tensor::from_floats(v, {n}, DType::kF32), ctx)};
  }
  if (a.has("value_int")) {
    return {on_device(Tensor::from_ints(std::vector<std::int64_t>{a.get_int("value_int", 0)}, {}, DType::kI64), ctx)};
  }
  if (a.has("value_ints")) {
    const auto v = a.get_ints("value_ints");
    return {on_device(Tensor::from_ints(v, {static_cast<std::int64_t>(v.size())}, DType::kI64), ctx)};
  }
  ctx.fail("needs a 'value' tensor (string and sparse constants are not supported)");
}

std::vector<Tensor> constant_of_shape(NodeContext& ctx) {
  const std::vector<std::int64_t> shape = ctx.input_ints(0);
  Tensor value = Tensor::zeros({1}, DType::kF32);
  if (const onnx::TensorProto* t = ctx.tensor_attr("value")) value = tensor_from_proto(*t, ctx.model_path);
  if (value.numel() != 1) ctx.fail("'value' must hold exactly one element");
  Tensor out = Tensor::empty(shape, value.dtype());
  const std::size_t elem = dtype_size(value.dtype());
  for (std::int64_t i = 0; i < out.numel(); ++i) std::memcpy(out.raw_data() + i * elem, value.raw_data(), elem);
  return {on_device(out, ctx)};
}

std::vector<Tensor> shape_of(NodeContext& ctx) {
  const Shape& s = ctx.input(0).shape();
  const auto rank = static_cast<std::int64_t>(s.size());
  auto clamp = [&](std::int64_t v) { return std::clamp(v < 0 ? v + rank : v, std::int64_t{0}, rank); };
  const std::int64_t start = clamp(ctx.attrs.get_int("start", 0));
  const std::int64_t end = clamp(ctx.attrs.get_int("end", rank));
  std::vector<std::int64_t> dims;
  for (std::int64_t i = start; i < end; ++i) dims.push_back(s[static_cast<std::size_t>(i)]);
  return {on_device(Tensor::from_ints(dims, {static_cast<std::int64_t>(dims.size())}, DType::kI64), ctx)};
}

std::vector<Tensor> size_of(NodeContext& ctx) {
  return {on_device(Tensor::from_ints(std::vector<std::int64_t>{ctx.input(0).numel()}, {}, DType::kI64), ctx)};
}

std::vector<Tensor> cast_to(NodeContext& ctx, DType to) {
  Attrs attrs;
  attrs.set("to", static_cast<std::int64_t>(to));
  return call_op("Cast", {ctx.input(0)}, attrs, ctx.call());
}

std::vector<Tensor> cast(NodeContext& ctx) {
  if (!ctx.attrs.has("to")) ctx.fail("needs the attribute 'to'");
  return cast_to(ctx, dtype_from_onnx(onnx_type_attr(ctx, "to", 0), ctx.model_path + ": node '" + ctx.name + "'"));
}

std::vector<Tensor> cast_like(NodeContext& ctx) {
  if (!ctx.has_input(1)) ctx.fail("needs the target_type input");
  return cast_to(ctx, ctx.input(1).dtype());
}

}  // namespace

NPUSCOPE_REGISTER_ONNX_ADAPTER("Constant", constant);
NPUSCOPE_REGISTER_ONNX_ADAPTER("ConstantOfShape", constant_of_shape);
NPUSCOPE_REGISTER_ONNX_ADAPTER("Shape", shape_of);
NPUSCOPE_REGISTER_ONNX_ADAPTER("Size", size_of);
NPUSCOPE_REGISTER_ONNX_ADAPTER("Cast", cast);
NPUSCOPE_REGISTER_ONNX_ADAPTER("CastLike", cast_like);

}  // namespace npuscope::emulator::onnx_import

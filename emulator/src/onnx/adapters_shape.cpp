// ONNX adapters for the shape and data-movement ops whose newer opsets pass operands as inputs
// (Note [ONNX adapters]): Reshape, Slice, Split, Squeeze, Unsqueeze, Expand, Tile, Pad; and Dropout
// (inference: the identity, plus an all-true mask when the node asks for it) and Identity.
#include <string>
#include <vector>

#include "onnx_adapter.h"

namespace npuscope::emulator::onnx_import {
namespace {

using Ints = std::vector<std::int64_t>;

// The node's attributes without `name` (an empty optional operand means "absent").
Attrs without(const Attrs& attrs, const std::string& name) {
  Attrs out;
  for (const auto& [n, v] : attrs.items()) {
    if (n != name) out.set(n, v);
  }
  return out;
}

std::vector<Tensor> run(NodeContext& ctx, const char* type, std::vector<Tensor> inputs, const Attrs& attrs) {
  return call_op(type, std::move(inputs), attrs, ctx.call());
}

// Input `i` (when present) becomes the attribute `name`.
Attrs with_input_attr(NodeContext& ctx, std::size_t i, const char* name) {
  Attrs a = ctx.attrs;
  if (ctx.has_input(i)) a.set(name, ctx.input_ints(i));
  return a;
}

// Reshape-5+: the shape is input 1 ('allowzero' from opset 14 passes through).
std::vector<Tensor> reshape(NodeContext& ctx) {
  if (ctx.opset >= 5 && !ctx.has_input(1)) ctx.fail("needs the shape input");
  return run(ctx, "Reshape", {ctx.input(0)}, with_input_attr(ctx, 1, "shape"));
}

// Slice-10+: starts, ends, axes, steps are inputs 1-4; before: attributes.
std::vector<Tensor> slice(NodeContext& ctx) {
  Attrs a = ctx.attrs;
  if (ctx.opset >= 10) {
    if (!ctx.has_input(1) || !ctx.has_input(2)) ctx.fail("needs the starts and ends inputs");
    a.set("starts", ctx.input_ints(1));
    a.set("ends", ctx.input_ints(2));
    if (ctx.has_input(3)) a.set("axes", ctx.input_ints(3));
    if (ctx.has_input(4)) a.set("steps", ctx.input_ints(4));
  }
  return run(ctx, "Slice", {ctx.input(0)}, a);
}

// Split: sizes from the attribute (< 13) or input 1 (13+); without them, 'num_outputs' (18) or the
// node's output count gives equal parts.
std::vector<Tensor> split(NodeContext& ctx) {
  Attrs a = ctx.attrs;
  if (ctx.opset >= 13 && ctx.has_input(1)) a.set("split", ctx.input_ints(1));
  if (a.has("split") && a.get_ints("split").empty() && ctx.num_outputs > 0) a = without(a, "split");
  if (!a.has("split") && !a.has("num_outputs")) a.set("num_outputs", static_cast<std::int64_t>(ctx.num_outputs));
  return run(ctx, "Split", {ctx.input(0)}, a);
}

// Squeeze-13+ / Unsqueeze-13+: axes are input 1.
std::vector<Tensor> squeeze(NodeContext& ctx) {
  return run(ctx, "Squeeze", {ctx.input(0)}, with_input_attr(ctx, 1, "axes"));
}
std::vector<Tensor> unsqueeze(NodeContext& ctx) {
  if (ctx.opset >= 13 && !ctx.has_input(1)) ctx.fail("needs the axes input");
  return run(ctx, "Unsqueeze", {ctx.input(0)}, with_input_attr(ctx, 1, "axes"));
}

std::vector<Tensor> expand(NodeContext& ctx) {
  if (!ctx.has_input(1)) ctx.fail("needs the shape input");
  return run(ctx, "Expand", {ctx.input(0)}, with_input_attr(ctx, 1, "shape"));
}

std::vector<Tensor> tile(NodeContext& ctx) {
  if (!ctx.has_input(1)) ctx.fail("needs the repeats input");
  return run(ctx, "Tile", {ctx.input(0)}, with_input_attr(ctx, 1, "repeats"));
}

// Pad-11+: pads (input 1), constant_value (input 2, optional), axes (input 3, opset 18: pads then
// name only those axes). Before 11: the 'pads' and 'value' attributes.
std::vector<Tensor> pad(NodeContext& ctx) {
  Attrs a = ctx.attrs;
  if (ctx.opset < 11) return run(ctx, "Pad", {ctx.input(0)}, a);
  if (!ctx.has_input(1)) ctx.fail("needs the pads input");
  Ints pads = ctx.input_ints(1);
  if (ctx.has_input(2)) {
    const auto value = ctx.input_floats(2);
    if (!value.empty()) a.set("value", value[0]);
  }
  if (ctx.has_input(3)) {
    const Ints axes = ctx.input_ints(3);
    const auto rank = static_cast<std::int64_t>(ctx.input(0).ndim());
    if (pads.size() != 2 * axes.size()) ctx.fail("pads must have 2 values per listed axis");
    Ints full(static_cast<std::size_t>(2 * rank), 0);
    for (std::size_t i = 0; i < axes.size(); ++i) {
      const std::int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
      if (axis < 0 || axis >= rank) ctx.fail("axis " + std::to_string(axes[i]) + " is out of range");
      full[static_cast<std::size_t>(axis)] = pads[i];
      full[static_cast<std::size_t>(axis + rank)] = pads[i + axes.size()];
    }
    pads = full;
  }
  a.set("pads", pads);
  return run(ctx, "Pad", {ctx.input(0)}, a);
}

// Dropout in inference is the identity; its mask (when asked for) is all true: bool from opset 10,
// the input's dtype before. A training-mode node that drops something is random: refused.
std::vector<Tensor> dropout(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  double ratio = ctx.attrs.get_float("ratio", 0.5);
  bool training = false;  // opsets 7-11 have no training mode
  if (ctx.opset >= 12) {
    if (ctx.has_input(1)) ratio = ctx.input_floats(1).at(0);
    training = ctx.has_input(2) && ctx.input_ints(2).at(0) != 0;
  }
  if (training && ratio != 0) {
    ctx.fail("training-mode Dropout (ratio " + std::to_string(ratio) + ") is random; only inference is supported");
  }
  std::vector<Tensor> out = run(ctx, "Identity", {x}, {});
  if (ctx.num_outputs > 1) {
    const Ints ones(static_cast<std::size_t>(x.numel()), 1);
    out.push_back(Tensor::from_ints(ones, x.shape(), ctx.opset >= 10 ? DType::kBool : x.dtype(), ctx.device));
  }
  return out;
}

// ONNX Bernoulli draws each element from its input's probability: random, as training-mode Dropout
// is, so refused (the emulator's own Bernoulli op is aten's, with one p for every element, and must
// not run in its place by the default rule).
std::vector<Tensor> bernoulli(NodeContext& ctx) {
  ctx.fail("Bernoulli draws random values; only deterministic (inference) graphs are supported");
}

std::vector<Tensor> identity(NodeContext& ctx) { return run(ctx, "Identity", {ctx.input(0)}, {}); }

}  // namespace

NPUSCOPE_REGISTER_ONNX_ADAPTER("Reshape", reshape);
NPUSCOPE_REGISTER_ONNX_ADAPTER("Slice", slice);
NPUSCOPE_REGISTER_ONNX_ADAPTER("Split", split);
NPUSCOPE_REGISTER_ONNX_ADAPTER("Squeeze", squeeze);
NPUSCOPE_REGISTER_ONNX_ADAPTER("Unsqueeze", unsqueeze);
NPUSCOPE_REGISTER_ONNX_ADAPTER("Expand", expand);
NPUSCOPE_REGISTER_ONNX_ADAPTER("Tile", tile);
NPUSCOPE_REGISTER_ONNX_ADAPTER("Pad", pad);
NPUSCOPE_REGISTER_ONNX_ADAPTER("Dropout", dropout);
NPUSCOPE_REGISTER_ONNX_ADAPTER("Identity", identity);
NPUSCOPE_REGISTER_ONNX_ADAPTER("Bernoulli", bernoulli);

}  // namespace npuscope::emulator::onnx_import

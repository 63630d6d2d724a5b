// Adapters for the element-wise ops whose ONNX form differs from the emulator op (see Note [ONNX
// adapters]). The others (LeakyRelu, Mod, Equal, Min, ...) run by the default rule.
//   Clip  opset < 11: bounds are float attributes defaulting to ±FLT_MAX (so ±inf is clamped to the
//         largest float, as ONNX Runtime's Clip-6 does); opset >= 11: optional scalar inputs 1
//         (min) and 2 (max) of the data's type, unbounded when left out. Integer bounds are passed
//         as int64 attributes, so that int64 data is clamped exactly.
#include <cfloat>
#include <string>
#include <vector>

#include "onnx_adapter.h"

namespace npuscope::emulator::onnx_import {
namespace {

// Input i (a one-element bound) as the attribute `name`.
void bound_from_input(NodeContext& ctx, std::size_t i, const char* name, Attrs& attrs) {
  if (!ctx.has_input(i)) return;
  if (ctx.input(i).numel() != 1) {
    ctx.fail(std::string(name) + " must hold one value, got shape " + shape_str(ctx.input(i).shape()));
  }
  if (ctx.input(i).dtype() != ctx.input(0).dtype()) {
    ctx.fail(std::string(name) + " must have the input's dtype (" + std::string(dtype_name(ctx.input(0).dtype())) +
             "), got " + std::string(dtype_name(ctx.input(i).dtype())));
  }
  if (is_floating(ctx.input(0).dtype())) {
    attrs.set(name, ctx.input_floats(i)[0]);
  } else {
    attrs.set(name, ctx.input_ints(i)[0]);
  }
}

std::vector<Tensor> clip(NodeContext& ctx) {
  if (!ctx.has_input(0)) ctx.fail("input 0 is required");
  Attrs attrs;
  if (ctx.opset < 11) {
    attrs.set("min", ctx.attrs.get_float("min", -FLT_MAX));
    attrs.set("max", ctx.attrs.get_float("max", FLT_MAX));
  } else {
    bound_from_input(ctx, 1, "min", attrs);
    bound_from_input(ctx, 2, "max", attrs);
  }
  return call_op("Clip", {ctx.input(0)}, attrs, ctx.call());
}

}  // namespace

NPUSCOPE_REGISTER_ONNX_ADAPTER("Clip", clip);

}  // namespace npuscope::emulator::onnx_import

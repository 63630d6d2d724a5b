// The ONNX adapter for Unique (Note [ONNX adapters]): its output shapes depend on the values, so the
// number of unique values or slices is counted on the host first and passed as 'count' (as a
// framework synchronises for unique()), as NonZero's adapter does.
#include <string>
#include <vector>

#include "kernels/unique_util.h"
#include "onnx_adapter.h"

namespace npuscope::emulator::onnx_import {
namespace {

std::vector<Tensor> unique(NodeContext& ctx) {
  if (!ctx.has_input(0)) ctx.fail("needs input 0 (X)");
  const Tensor& x = ctx.input(0);
  const bool sorted = ctx.attrs.get_int("sorted", 1) != 0;
  std::int64_t outer = 1, n = x.numel(), inner = 1;
  if (ctx.attrs.has("axis")) {
    const auto rank = static_cast<std::int64_t>(x.shape().size());
    std::int64_t axis = ctx.attrs.get_int("axis", 0);
    if (axis < -rank || axis >= rank) {
      ctx.fail("axis " + std::to_string(axis) + " is out of range for an input " + shape_str(x.shape()));
    }
    if (axis < 0) axis += rank;
    for (std::int64_t d = 0; d < rank; ++d) {
      const std::int64_t size = x.shape()[static_cast<std::size_t>(d)];
      if (d < axis) outer *= size;
      if (d > axis) inner *= size;
    }
    n = x.shape()[static_cast<std::size_t>(axis)];
  }
  const auto groups = kernels::unique_groups(x.to_doubles(), outer, n, inner, sorted);
  Attrs a = ctx.attrs;
  a.set("count", static_cast<std::int64_t>(groups.first.size()));
  return call_op("Unique", {x}, a, ctx.call());
}

}  // namespace

NPUSCOPE_REGISTER_ONNX_ADAPTER("Unique", unique);

}  // namespace npuscope::emulator::onnx_import

// ONNX adapters for the reductions: ReduceSum takes its axes as input 1 from opset 13, the other
// reductions from opset 18 (before: the 'axes' attribute). Either way the emulator op gets the
// 'axes' attribute; 'keepdims' and 'noop_with_empty_axes' pass through (Note [ONNX adapters]).
#include "onnx_adapter.h"

namespace npuscope::emulator::onnx_import {
namespace {

// An axes input, when the node has one, wins over the attribute (a node has only one of them).
std::vector<Tensor> reduce(NodeContext& ctx) {
  Attrs a = ctx.attrs;
  if (ctx.has_input(1)) a.set("axes", ctx.input_ints(1));
  return call_op(ctx.op_type, {ctx.input(0)}, a, ctx.call());
}

}  // namespace

NPUSCOPE_REGISTER_ONNX_ADAPTER("ReduceSum", reduce);
NPUSCOPE_REGISTER_ONNX_ADAPTER("ReduceMean", reduce);
NPUSCOPE_REGISTER_ONNX_ADAPTER("ReduceMax", reduce);
NPUSCOPE_REGISTER_ONNX_ADAPTER("ReduceMin", reduce);
NPUSCOPE_REGISTER_ONNX_ADAPTER("ReduceProd", reduce);
NPUSCOPE_REGISTER_ONNX_ADAPTER("ReduceL1", reduce);
NPUSCOPE_REGISTER_ONNX_ADAPTER("ReduceL2", reduce);
NPUSCOPE_REGISTER_ONNX_ADAPTER("ReduceSumSquare", reduce);
NPUSCOPE_REGISTER_ONNX_ADAPTER("ReduceLogSum", reduce);
NPUSCOPE_REGISTER_ONNX_ADAPTER("ReduceLogSumExp", reduce);

}  // namespace npuscope::emulator::onnx_import

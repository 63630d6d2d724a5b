// Adapters for the recurrent ops LSTM, GRU and RNN (see Note [ONNX adapters]). The emulator ops take
// ONNX's inputs and attributes (Note [Recurrent ops] in kernels/rnn_util.h) except `activations`, a
// STRINGS attribute, which the importer does not convert: it is passed as one comma-separated
// string. Every output is computed; the node binds those it names.
#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "onnx_adapter.h"

namespace npuscope::emulator::onnx_import {
namespace {

std::vector<Tensor> recurrent(NodeContext& ctx) {
  Attrs attrs = ctx.attrs;
  for (const auto& a : ctx.node->attribute()) {
    if (a.name() != "activations") continue;
    if (a.type() != onnx::AttributeProto::STRINGS) ctx.fail("'activations' must be a list of strings");
    std::string list;
    for (const std::string& name : a.strings()) {
      if (name.find(',') != std::string::npos) ctx.fail("activation '" + name + "' is not a function name");
      list += (list.empty() ? "" : ",") + name;
    }
    attrs.set("activations", list);
  }
  if (!ctx.has_input(0) || !ctx.has_input(1) || !ctx.has_input(2)) ctx.fail("inputs X, W and R are required");
  return call_op(ctx.op_type, ctx.device_inputs(), attrs, ctx.call());
}

}  // namespace

NPUSCOPE_REGISTER_ONNX_ADAPTER("LSTM", recurrent);
NPUSCOPE_REGISTER_ONNX_ADAPTER("GRU", recurrent);
NPUSCOPE_REGISTER_ONNX_ADAPTER("RNN", recurrent);

}  // namespace npuscope::emulator::onnx_import

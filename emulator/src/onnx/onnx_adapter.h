// How one ONNX node becomes emulator op calls.
//
// Note [ONNX adapters]
// Most ONNX ops run as the emulator op of the same name with the node's attributes passed through
// (the default rule: the emulator's ops use ONNX's op and attribute names). An adapter is needed
// where ONNX differs from the eager op: another name (Conv -> Conv2d), operands that newer opsets
// pass as inputs but the kernel takes as attributes (Reshape's shape, Slice's starts/ends, Pad's
// pads, the Reduce axes...), opset-dependent defaults (Softmax before opset 13), ops computed on the
// host (Shape, Size, Constant), or several emulator ops for one node. Adapters register themselves
// beside their code with NPUSCOPE_REGISTER_ONNX_ADAPTER; they may throw ModelError naming the node.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "npuscope/emulator/attrs.h"
#include "npuscope/emulator/dispatch.h"
#include "npuscope/emulator/onnx_model.h"
#include "npuscope/emulator/tensor.h"

namespace onnx {
class NodeProto;
class AttributeProto;
class TensorProto;
}  // namespace onnx

namespace npuscope::emulator::onnx_import {

struct NodeContext {
  const onnx::NodeProto* node = nullptr;
  std::string name;  // the op instance name (node name, or "<OpType>_<index>")
  std::string op_type;
  std::int64_t opset = 0;  // of the default domain
  DeviceRef device;
  // Undefined where the node leaves an optional input empty. In an npu run a host value (Note [Shape
  // nodes on the host] in host_nodes.h) stays a cpu tensor here until input(i) or device_inputs()
  // uploads it: read tensors through those, never through inputs[i].
  mutable std::vector<Tensor> inputs;
  // Beside `inputs` in an npu run: each input's host value, else undefined. input_ints and
  // input_floats read it.
  std::vector<Tensor> host_inputs;
  // Set by an npu run for a node on the device: input i's host value on the device, uploaded once per run.
  std::function<Tensor(std::size_t)> upload;
  Attrs attrs;          // scalar and list attributes, converted (TENSOR/GRAPH ones left out)
  int num_outputs = 0;  // outputs the node declares (incl. empty optional ones)
  std::string model_path;

  // The call options every emulator op of this node gets: its instance name.
  CallOptions call() const { return CallOptions{.name = name}; }
  // Input i on `device`, or an undefined tensor when absent.
  const Tensor& input(std::size_t i) const;
  // Every input on `device` (for an op that takes them all).
  const std::vector<Tensor>& device_inputs() const;
  bool has_input(std::size_t i) const { return i < inputs.size() && inputs[i].defined(); }
  // The values of input i read to the host (a shape, axes, pads...). Throws ModelError if absent.
  std::vector<std::int64_t> input_ints(std::size_t i) const;
  std::vector<double> input_floats(std::size_t i) const;
  // A TENSOR attribute (Constant's value, ConstantOfShape's value), or nullptr.
  const onnx::TensorProto* tensor_attr(const char* attr_name) const;
  // ModelError("<model>: node '<name>' (<OpType>): <what>").
  [[noreturn]] void fail(const std::string& what) const;

 private:
  const Tensor& readable_input(std::size_t i) const;
};

using AdapterFn = std::vector<Tensor> (*)(NodeContext& ctx);

// The adapter for an op type, or nullptr (then the default rule applies if the emulator has an op of
// that name).
AdapterFn find_adapter(const std::string& op_type);
std::vector<std::string> adapter_op_types();
bool register_adapter(const char* op_type, AdapterFn fn, const char* file, int line);

// An int attribute holding an ONNX TensorProto data type, checked to fit an int (a cast would turn
// 2^32 + 1 into FLOAT). Throws ModelError naming the node.
int onnx_type_attr(const NodeContext& ctx, const char* name, std::int64_t fallback);

// Converts a TensorProto (raw_data or typed fields, external data not supported) to a cpu tensor.
Tensor tensor_from_proto(const onnx::TensorProto& proto, const std::string& context);

// Runs the emulator op `type` with ctx's inputs and attributes (the default rule).
std::vector<Tensor> run_default(NodeContext& ctx, const char* type);

// ONNX Conv of x [N, C, spatial...] (1-D, 2-D or 3-D) with w and the optional bias b, by the node's
// attributes (strides, pads or auto_pad, dilations, group, kernel_shape): the Conv node's own work,
// which ConvInteger and QLinearConv do on their centred operands. Throws ModelError naming the node.
Tensor convolve(const NodeContext& ctx, const Tensor& x, const Tensor& w, const Tensor& b);

}  // namespace npuscope::emulator::onnx_import

#define NPUSCOPE_REGISTER_ONNX_ADAPTER(op_type, fn)                                                 \
  [[maybe_unused]] static const bool NPUSCOPE_CONCAT(npuscope_onnx_adapter_registered_, __LINE__) = \
      ::npuscope::emulator::onnx_import::register_adapter(op_type, fn, __FILE__, __LINE__)

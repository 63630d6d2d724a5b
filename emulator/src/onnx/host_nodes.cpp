// See Note [Shape nodes on the host] in host_nodes.h.
#include "host_nodes.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <string_view>

namespace npuscope::emulator::onnx_import {
namespace {

// Deterministic ops whose integer results are exact on both backends: what shape arithmetic uses.
// clang-format off
constexpr std::string_view kHostOps[] = {
    "Abs", "Add", "And", "Cast", "Concat", "ConstantOfShape", "Div", "Equal", "Expand", "Flatten", "Gather",
    "Greater", "GreaterOrEqual", "Identity", "Less", "LessOrEqual", "Max", "Min", "Mod", "Mul", "Neg", "Not", "Or",
    "Range", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSum", "Reshape", "ScatterND", "Sign", "Slice", "Split",
    "Squeeze", "Sub", "Tile", "Transpose", "Unsqueeze", "Where", "Xor"};
// clang-format on

bool small_integer(const Tensor& t) { return t.defined() && !is_floating(t.dtype()) && t.numel() <= kMaxHostElements; }

}  // namespace

bool runs_on_host(const onnx::NodeProto& node, std::span<const Tensor> host_inputs) {
  if (!node.domain().empty() && node.domain() != "ai.onnx") return false;
  const std::string& type = node.op_type();
  if (type == "Constant" || type == "Shape" || type == "Size") return true;
  if (std::find(std::begin(kHostOps), std::end(kHostOps), type) == std::end(kHostOps)) return false;
  return !host_inputs.empty() && std::all_of(host_inputs.begin(), host_inputs.end(), small_integer);
}

RunValues::RunValues(DeviceRef device, std::unordered_map<std::string, Tensor> on_device,
                     const std::unordered_map<std::string, Tensor>& host_constants)
    : device_(device), on_device_(std::move(on_device)), host_constants_(host_constants) {}

Tensor RunValues::host_value(const std::string& name) const {
  if (!device_.is_npu()) return {};
  if (auto it = host_.find(name); it != host_.end()) return it->second;
  auto it = host_constants_.find(name);
  return it != host_constants_.end() ? it->second : Tensor();
}

const Tensor& RunValues::device_value(const std::string& name, const NodeContext& ctx) {
  if (auto it = on_device_.find(name); it != on_device_.end()) return it->second;
  const Tensor on_host = host_value(name);
  if (!on_host.defined())
    ctx.fail("input '" + name + "' is not produced by any earlier node (graph not in topological order?)");
  return on_device_.emplace(name, on_host.to(device_)).first->second;
}

bool RunValues::bind(const onnx::NodeProto& node, NodeContext& ctx) {
  scratch_.clear();
  for (const auto& in : node.input()) {
    if (!in.empty()) scratch_.push_back(host_value(in));
  }
  const bool on_host = device_.is_npu() && runs_on_host(node, scratch_);
  ctx.device = on_host ? DeviceRef::cpu() : device_;
  for (const auto& in : node.input()) {
    Tensor on_host_value = in.empty() ? Tensor() : host_value(in);
    if (in.empty()) {
      ctx.inputs.emplace_back();
    } else if (on_host_value.defined() && (on_host || !on_device_.count(in))) {
      ctx.inputs.push_back(on_host_value);  // a device node uploads it when it takes it as a tensor
    } else {
      ctx.inputs.push_back(device_value(in, ctx));  // for a host node, a Shape or Size reads its metadata
    }
    ctx.host_inputs.push_back(std::move(on_host_value));
  }
  // Trailing empty optional inputs carry nothing: drop them so that input counts match the ops.
  while (!ctx.inputs.empty() && !ctx.inputs.back().defined()) {
    ctx.inputs.pop_back();
    ctx.host_inputs.pop_back();
  }
  if (device_.is_npu() && !on_host)
    ctx.upload = [this, &node, &ctx](std::size_t i) { return device_value(node.input(static_cast<int>(i)), ctx); };
  return on_host;
}

void RunValues::set_output(const std::string& name, Tensor t, bool on_host) {
  (on_host ? host_ : on_device_)[name] = std::move(t);
}

Tensor RunValues::result(const std::string& name) {
  if (auto it = on_device_.find(name); it != on_device_.end()) return it->second;
  const Tensor on_host = host_value(name);
  return on_host.defined() ? on_host.to(device_) : Tensor();
}

}  // namespace npuscope::emulator::onnx_import

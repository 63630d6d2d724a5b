// Which nodes of an ONNX run on an NPU compute on the host (Note [Shape nodes on the host]), and a
// run's values on the device and on the host.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>

#include "npuscope/emulator/tensor.h"
#include "onnx_adapter.h"

namespace npuscope::emulator::onnx_import {

// Note [Shape nodes on the host]
// An exported transformer computes its reshapes from its tensors' shapes at run time: Shape ->
// Gather -> Unsqueeze -> Concat -> Reshape, Slice bounds, window counts from Div and Mod (swin_t:
// 6,623 nodes, most of them on shapes). On an npu each such node ran as a device task, and each
// node that reads a value on the host (Reshape's shape, Slice's starts, Unsqueeze's axes:
// NodeContext::input_ints) copied it back from the device, a synchronisation that drained the
// queue: about 2,500 per swin_t pass, which made the npu run 1.5x slower than the cpu one (255 vs
// 172 ms). Runtimes keep these nodes off the device (ONNX Runtime places them on the CPU for its
// CUDA and CANN providers; ATC folds them when it compiles a model), and so does an npu run here:
// a node runs on the host (its NodeContext on the cpu device, its ops on the golden kernels, traced
// as host tasks) when
//   - it is a Constant, or reads only its input's metadata (Shape, Size); or
//   - its op is one of the integer-exact ops in host_nodes.cpp, it has an input, and every input is
//     a host value of an integer or bool dtype with at most kMaxHostElements elements.
// Its outputs are host values. A device node that takes one as a tensor (NodeContext::input) gets
// it uploaded once per run (an asynchronous copy, no synchronisation); one that reads it
// (input_ints / input_floats) reads the host copy, and nothing is uploaded for it. Initializers are
// host values too (the run keeps their cpu copies). Integer results are the same on both backends
// (the device computes them in f32, exactly at the magnitudes of shapes and indices; the golden in
// f64). The only floating-point values computed on the host are a Cast from integers, which both
// backends round once to nearest (Note [Exact Cast]), and ConstantOfShape's fill, which the host
// did before too: a model's outputs keep their bits. Token ids, masks and other integer data of
// more than kMaxHostElements values stay on the device. swin_t on npu: 255 -> 130 ms a pass (2
// OpenMP threads, with Note [Completion wake-ups] in device.cpp), ~970 device tasks a pass instead
// of ~2,430, and no copy back.
inline constexpr std::int64_t kMaxHostElements = 1024;

// Whether `node` computes on the host; `host_inputs` has one entry per input the node is given (absent
// optional inputs left out): its host value, or an undefined tensor for a value on the device.
bool runs_on_host(const onnx::NodeProto& node, std::span<const Tensor> host_inputs);

// The values of one run by name: on the run's device and, in an npu run, on the host.
class RunValues {
 public:
  // `on_device`: the initializers on the run's device; `host_constants`: their cpu copies.
  RunValues(DeviceRef device, std::unordered_map<std::string, Tensor> on_device,
            const std::unordered_map<std::string, Tensor>& host_constants);
  // A graph input, on the run's device.
  void set_input(const std::string& name, Tensor t) { on_device_[name] = std::move(t); }
  // Places `node` (runs_on_host) and gives ctx its device, inputs (trailing empty ones dropped),
  // host_inputs and upload; returns whether it runs on the host. Fails ctx when an input was never
  // produced.
  bool bind(const onnx::NodeProto& node, NodeContext& ctx);
  // An output of a node bound with bind(), which said whether it ran on the host.
  void set_output(const std::string& name, Tensor t, bool on_host);
  // A graph output on the run's device (a host value uploaded), or undefined if never produced.
  Tensor result(const std::string& name);

 private:
  Tensor host_value(const std::string& name) const;
  // A host value is uploaded at its first use on the device, once per run.
  const Tensor& device_value(const std::string& name, const NodeContext& ctx);

  DeviceRef device_;
  std::unordered_map<std::string, Tensor> on_device_, host_;
  const std::unordered_map<std::string, Tensor>& host_constants_;
  std::vector<Tensor> scratch_;  // bind's host values of a node's inputs
};

}  // namespace npuscope::emulator::onnx_import

// ONNX models on the emulator: load `model.onnx`, run it node by node through the same eager ops a
// C++ workload calls, on `npu:N` or `cpu`.
//
// Node names become op names (an unnamed node is "<OpType>_<index>"), so an NPU run and a CPU golden
// run of one model match op by op. Before anything runs, load() checks that every node's op type is
// supported and lists all unsupported ones in one error. The protobuf types stay inside the
// emulator: this header only speaks Tensor.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/tensor.h"

namespace npuscope::emulator {

// A model file is unreadable, malformed, uses unsupported ops, or was given wrong inputs. The
// message names the file, the node or the input.
class ModelError : public EmulatorError {
 public:
  using EmulatorError::EmulatorError;
};

// A graph input or output as declared: dims < 0 are symbolic (dim_param, or unknown).
struct OnnxValueInfo {
  std::string name;
  DType dtype = DType::kF32;
  Shape shape;                          // -1 for a symbolic or unknown dim
  std::vector<std::string> dim_params;  // the symbolic names ("" where the dim is fixed or unnamed)
  bool has_shape = false;
};

struct OnnxRunOptions {
  DeviceRef device = DeviceRef::cpu();
};

class OnnxModel {
 public:
  // Throws ModelError (unreadable / malformed file, opset above 18, unsupported ops listed all
  // at once, an old-opset form that cannot be brought forward). A model of opset 1-6 is rewritten
  // to opset 7 first, as ONNX's version converter would (Note [Bringing old opsets forward]).
  static OnnxModel load(const std::string& path);
  ~OnnxModel();
  OnnxModel(OnnxModel&&) noexcept;
  OnnxModel& operator=(OnnxModel&&) noexcept;

  const std::string& path() const;
  // The default-domain opset the graph runs at (7 for a model brought forward from an older one).
  std::int64_t opset() const;
  // The default-domain opset the file declares (below opset() for a model brought forward).
  std::int64_t declared_opset() const;
  // Graph inputs that are not initializers, in declaration order.
  const std::vector<OnnxValueInfo>& inputs() const;
  const std::vector<OnnxValueInfo>& outputs() const;
  std::size_t node_count() const;

  // Runs the graph. `inputs` maps graph input names to tensors (on any device: they are copied to
  // the run's device). Checks each input's dtype and shape against the declaration, binding symbolic
  // dims consistently; a missing, unknown or mismatched input is a ModelError naming it. Returns the
  // graph outputs in declaration order, on the run's device.
  std::vector<Tensor> run(const std::map<std::string, Tensor>& inputs, const OnnxRunOptions& options = {}) const;

  // Uploads the initializers (weights) to `device` now; run() does it on its first use of a device.
  // Lets a caller keep the one-time upload out of what it times, as a deployed model's weights are.
  void upload_weights(DeviceRef device) const;

 private:
  struct Impl;
  explicit OnnxModel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// ONNX op types the importer can run (sorted).
std::vector<std::string> supported_onnx_ops();

// Reads a serialized onnx.TensorProto (.pb, as in the ONNX test data). Throws ModelError.
Tensor load_tensor_proto_file(const std::string& path);

// ONNX TensorProto data type <-> DType. Throws ModelError for a type the emulator does not have.
DType dtype_from_onnx(int onnx_type, const std::string& context);
int onnx_from_dtype(DType dtype);

}  // namespace npuscope::emulator

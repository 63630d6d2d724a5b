// See model.h. The host's side follows device.cpp and dispatch.cpp (Note [Calibrated cost model] in
// cost_model.h); the device's side is the op's registered cost function through estimate_kernel.
#include "npuscope/calibration/model.h"

#include <algorithm>

#include "npuscope/calibration/errors.h"
#include "npuscope/emulator/cost_model.h"
#include "npuscope/emulator/errors.h"

namespace npuscope::calibration {
namespace {

using emulator::Backend;
using emulator::OpRegistry;

// The kernel's device time in ns, as the cost model charges it, before rounding to whole ns.
double device_ns(const emulator::DeviceSpec& spec, const DataPoint& point) {
  const OpRegistry& registry = OpRegistry::instance();
  const emulator::OpSchema* schema = registry.find_schema(point.op);
  if (schema == nullptr) throw CalibrationError("point " + point.id + ": the emulator has no op '" + point.op + "'");
  const int n = static_cast<int>(point.inputs.size());
  if (n < schema->min_inputs || (schema->max_inputs >= 0 && n > schema->max_inputs)) {
    throw CalibrationError("point " + point.id + ": " + point.op + " takes " + std::to_string(schema->min_inputs) +
                           (schema->max_inputs == schema->min_inputs ? "" : " or more") + " inputs, got " +
                           std::to_string(n));
  }
  std::vector<emulator::TensorMeta> outputs;
  emulator::KernelCost cost;
  try {
    outputs = schema->infer(point.inputs, point.attrs);
    cost = schema->cost(point.inputs, outputs, point.attrs);
  } catch (const emulator::EmulatorError& e) {
    throw CalibrationError("point " + point.id + ": " + e.what());
  }
  if (point.block_dim != 0) cost.block_dim = point.block_dim;
  // The dispatcher's rule: no NPU kernel for these inputs -> the CPU kernel as an AI CPU task.
  const emulator::KernelEntry* npu = registry.kernel(point.op, Backend::kNpu);
  if (npu == nullptr || (npu->supports != nullptr && !npu->supports(point.inputs, point.attrs))) {
    cost.unit = emulator::ComputeUnit::kAiCpu;
  }
  emulator::DType dtype = point.inputs.empty() ? emulator::DType::kF32 : point.inputs[0].dtype;
  if (dtype == emulator::DType::kF32 && cost.unit == emulator::ComputeUnit::kCube && !spec.cube_fp32) {
    dtype = emulator::DType::kF16;  // no f32 cube path: f32 matmul runs in f16
  }
  const emulator::CostEstimate e = emulator::estimate_kernel(spec, cost, dtype);
  return static_cast<double>(e.overhead_ns) + std::max(e.compute_ns, e.memory_ns);
}

double issue_ns(const emulator::DeviceSpec& spec) {
  return static_cast<double>(spec.op_issue_ns) + static_cast<double>(spec.host_launch_ns);
}

}  // namespace

double modelled_us(const emulator::DeviceSpec& spec, const DataPoint& point) {
  switch (point.method) {
    case Method::kDevice: return device_ns(spec, point) / 1e3;
    case Method::kHostIssue: return issue_ns(spec) / 1e3;
    case Method::kCopy: {
      const double bytes = point.inputs.empty() ? 0 : static_cast<double>(point.inputs[0].nbytes());
      return (static_cast<double>(spec.copy_overhead_ns) + bytes / spec.host_link_bandwidth * 1e9) / 1e3;
    }
    case Method::kWall: {
      // `repeats` eager ops, then one synchronize: the host issues, each task starts launch_latency
      // after its issue or when the one before it ends, and the host returns sync_latency after the last.
      const double device = device_ns(spec, point);
      const int repeats = std::max(point.repeats, 1);
      double host = 0, last_end = 0;
      for (int r = 0; r < repeats; ++r) {
        host += issue_ns(spec);
        last_end = std::max(host + static_cast<double>(spec.launch_latency_ns), last_end) + device;
      }
      return (std::max(host, last_end) + static_cast<double>(spec.sync_latency_ns)) / repeats / 1e3;
    }
  }
  return 0;
}

}  // namespace npuscope::calibration

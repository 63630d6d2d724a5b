// See model.h. The host's side follows device.cpp and dispatch.cpp (Note [Calibrated cost model] in
// cost_model.h); the device's side is the op's registered cost function through estimate_kernel.
#include "npuscope/calibration/model.h"

#include <algorithm>

#include "npuscope/calibration/errors.h"
#include "npuscope/emulator/cost_model.h"
#include "npuscope/emulator/dispatch.h"
#include "npuscope/emulator/errors.h"

namespace npuscope::calibration {
namespace {

using emulator::OpRegistry;

// The kernel's device time in ns, as the cost model charges it, before rounding to whole ns.
double device_ns(const emulator::DeviceSpec& spec, const DataPoint& point) {
  const OpRegistry& registry = OpRegistry::instance();
  const emulator::OpSchema* schema = registry.find_schema(point.op);
  if (schema == nullptr) throw CalibrationError("point " + point.id + ": the emulator has no op '" + point.op + "'");
  // The op as call_op would run it on this device in its default precision mode (fallbacks included).
  emulator::LaunchPlan plan;
  try {
    emulator::check_input_count(*schema, point.inputs.size());
    const std::vector<emulator::TensorMeta> outputs = schema->infer(point.inputs, point.attrs);
    // The device's own cost where the op has one, as call_op takes it (TransData's runs and set-up).
    const emulator::OpDeviceRules* rules = schema->device;
    emulator::KernelCost cost = rules != nullptr && rules->device_cost != nullptr
                                    ? rules->device_cost(point.inputs, outputs, point.attrs, spec)
                                    : schema->cost(point.inputs, outputs, point.attrs);
    if (point.block_dim != 0) cost.block_dim = point.block_dim;
    // Note [Hot inputs of a timed loop]: a wall point times the same op over and over, so its inputs
    // are in the L2 as far as it holds them; a profiler's kernel (dev) reads cold.
    if (point.method == Method::kWall) cost.hot_bytes = cost.bytes - cost.bytes_written;
    // A profile's kernel reading what the kernels just before it wrote (Note [L2 residency]).
    if (point.hot_input_bytes > 0) cost.hot_bytes = std::max(cost.hot_bytes, point.hot_input_bytes);
    plan =
        emulator::plan_npu_launch(*schema, point.inputs, outputs, point.attrs, cost, spec.default_precision_mode, spec);
  } catch (const emulator::EmulatorError& e) {
    throw CalibrationError("point " + point.id + ": " + e.what());
  }
  const emulator::CostEstimate e = emulator::estimate_kernel(spec, plan.cost, plan.compute_dtype);
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

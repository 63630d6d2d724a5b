// See the formula in cost_model.h.
#include "npuscope/emulator/cost_model.h"

#include <algorithm>
#include <cmath>

namespace npuscope::emulator {
namespace {

// Bytes one vector block streams before another block is worth launching (UB-sized chunks).
constexpr double kVectorBytesPerBlock = 64.0 * 1024;
// AI CPU reads device memory far below HBM speed.
constexpr double kAiCpuBandwidth = 10e9;

std::uint32_t cores_of(const DeviceSpec& spec, ComputeUnit unit) {
  return static_cast<std::uint32_t>(unit == ComputeUnit::kCube ? spec.cube_cores : spec.vector_cores);
}

// pad_to in double: a shape near INT64_MAX must not overflow the int64 sum.
double padded(std::int64_t v, int to) { return std::ceil(static_cast<double>(v) / to) * to; }

// ns as whole ns, saturating at kMaxTaskNs (NaN, from 0 work over a 0 rate, counts as 0).
std::uint64_t saturated_ns(double ns) {
  if (!(ns > 0)) return 0;
  const double up = std::ceil(ns);
  return up >= static_cast<double>(kMaxTaskNs) ? kMaxTaskNs : static_cast<std::uint64_t>(up);
}

}  // namespace

double unit_peak_flops(const DeviceSpec& spec, ComputeUnit unit, DType dtype) {
  switch (unit) {
    case ComputeUnit::kCube:
      if (dtype == DType::kI8 || dtype == DType::kU8) return spec.cube_peak(true);
      if (dtype == DType::kF32) return spec.cube_peak_f16() * spec.cube_f32_rate;  // HF32 on 910B
      return spec.cube_peak_f16();
    case ComputeUnit::kVector:
      // The vector unit processes a fixed width of bytes per cycle: half the elements of f32 as of
      // f16, twice as many of int8.
      return spec.vector_peak_f16() * 2.0 / static_cast<double>(dtype_size(dtype));
    case ComputeUnit::kAiCpu: return spec.aicpu_flops;
  }
  return 1;
}

double memory_seconds(const DeviceSpec& spec, double bytes) {
  const double hbm = spec.memory_bandwidth * spec.memory_efficiency;
  if (spec.l2_bandwidth <= 0 || spec.l2_bytes == 0) return bytes / hbm;
  const double in_l2 = std::min(bytes, static_cast<double>(spec.l2_bytes));
  return in_l2 / spec.l2_bandwidth + (bytes - in_l2) / hbm;
}

CostEstimate estimate_kernel(const DeviceSpec& spec, const KernelCost& cost, DType dtype) {
  CostEstimate e;
  e.peak_flops = unit_peak_flops(spec, cost.unit, dtype);

  if (cost.unit == ComputeUnit::kAiCpu) {
    e.block_dim = 1;
    e.padded_flops = cost.flops;
    e.overhead_ns = spec.aicpu_overhead_ns;
    e.compute_ns = cost.flops / spec.aicpu_flops * 1e9;
    e.memory_ns = cost.bytes / kAiCpuBandwidth * 1e9;
  } else {
    const std::uint32_t cores = cores_of(spec, cost.unit);
    double efficiency;
    if (cost.unit == ComputeUnit::kCube) {
      const std::int64_t m = std::max<std::int64_t>(cost.m, 1), n = std::max<std::int64_t>(cost.n, 1);
      const std::int64_t k = std::max<std::int64_t>(cost.k, 1), batch = std::max<std::int64_t>(cost.batch, 1);
      e.padded_flops =
          2.0 * static_cast<double>(batch) * padded(m, spec.cube_m) * padded(n, spec.cube_n) * padded(k, spec.cube_k);
      const double tiles = static_cast<double>(batch) * std::ceil(static_cast<double>(m) / spec.cube_base_m) *
                           std::ceil(static_cast<double>(n) / spec.cube_base_n);
      e.block_dim = cost.block_dim ? cost.block_dim : static_cast<std::uint32_t>(std::min<double>(tiles, cores));
      const double used_cores = std::min<double>(e.block_dim, cores);
      const double waves = std::ceil(tiles / used_cores);
      const double kp = padded(k, spec.cube_k);
      // Note [Calibrated cost model]: the last wave of tiles may leave cores idle, each tile pays the
      // K-loop's fill, and operands beyond the L2 are re-read from HBM. used / cores is applied below.
      efficiency = spec.cube_efficiency * (tiles / (waves * used_cores)) * (kp / (kp + spec.cube_k_fill));
      if (spec.l2_bytes > 0 && cost.bytes > static_cast<double>(spec.l2_bytes)) {
        efficiency /= 1 + spec.cube_l2_miss_penalty * (cost.bytes / static_cast<double>(spec.l2_bytes) - 1);
      }
    } else {
      e.padded_flops = cost.flops;
      const double blocks = std::ceil(cost.bytes / kVectorBytesPerBlock);
      e.block_dim = cost.block_dim ? cost.block_dim : static_cast<std::uint32_t>(std::clamp<double>(blocks, 1, cores));
      efficiency = spec.vector_efficiency;
    }
    const double used = std::min<double>(e.block_dim, cores) / cores;
    e.overhead_ns = spec.kernel_overhead_ns + (e.block_dim > 1 ? spec.multi_core_launch_ns : 0);
    e.compute_ns = e.padded_flops / (e.peak_flops * efficiency * used) * 1e9;
    // Half the cores are enough to saturate device memory.
    const double bandwidth_share = std::min(1.0, 2.0 * std::min<double>(e.block_dim, cores) / cores);
    e.memory_ns = memory_seconds(spec, cost.bytes) / bandwidth_share * 1e9;
  }
  e.memory_bound = e.memory_ns > e.compute_ns;
  e.duration_ns = std::min(kMaxTaskNs, e.overhead_ns + saturated_ns(std::max(e.compute_ns, e.memory_ns)));
  return e;
}

std::uint64_t estimate_copy_ns(const DeviceSpec& spec, std::uint64_t bytes, bool device_to_device) {
  const double b = static_cast<double>(bytes);
  const double seconds = device_to_device ? memory_seconds(spec, 2 * b) : b / spec.host_link_bandwidth;  // read + write
  return std::min(kMaxTaskNs, spec.copy_overhead_ns + saturated_ns(seconds * 1e9));
}

}  // namespace npuscope::emulator

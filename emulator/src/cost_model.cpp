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

namespace {

// memory_seconds · 1e9 / share, as one division (it runs per task: Note [One division per term]).
double memory_ns(const DeviceSpec& spec, double bytes, double share) {
  const double hbm = spec.memory_bandwidth * spec.memory_efficiency;
  if (spec.l2_bandwidth <= 0 || spec.l2_bytes == 0) return bytes * 1e9 / (hbm * share);
  const double in_l2 = std::min(bytes, static_cast<double>(spec.l2_bytes));
  return (in_l2 * hbm + (bytes - in_l2) * spec.l2_bandwidth) * 1e9 / (spec.l2_bandwidth * hbm * share);
}

}  // namespace

double memory_seconds(const DeviceSpec& spec, double bytes) { return memory_ns(spec, bytes, 1.0) * 1e-9; }

// Note [One division per term]
// estimate_kernel runs on the launch path of every task. Written as the factors of Note [Calibrated
// cost model] it took 13 divisions; the factors multiply out so that the compute and the memory
// term each take one (used cores cancel from the wave utilisation and the core share):
//   efficiency · used = cube_efficiency · tiles/(waves·used_cores) · kp/(kp+fill) · used_cores/cores
//                     = cube_efficiency · tiles · kp / (waves · (kp+fill) · cores)
// bench/cost_model_bench.cpp holds it against the plain roofline it replaced.
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
    const double cores = cores_of(spec, cost.unit);
    double used_cores;
    if (cost.unit == ComputeUnit::kCube) {
      const std::int64_t m = std::max<std::int64_t>(cost.m, 1), n = std::max<std::int64_t>(cost.n, 1);
      const std::int64_t k = std::max<std::int64_t>(cost.k, 1), batch = std::max<std::int64_t>(cost.batch, 1);
      const double kp = padded(k, spec.cube_k);
      e.padded_flops = 2.0 * static_cast<double>(batch) * padded(m, spec.cube_m) * padded(n, spec.cube_n) * kp;
      const double tiles = static_cast<double>(batch) * std::ceil(static_cast<double>(m) / spec.cube_base_m) *
                           std::ceil(static_cast<double>(n) / spec.cube_base_n);
      e.block_dim = cost.block_dim ? cost.block_dim : static_cast<std::uint32_t>(std::min(tiles, cores));
      used_cores = std::min<double>(e.block_dim, cores);
      const double waves = std::ceil(tiles / used_cores);
      // Note [Calibrated cost model]: the last wave of tiles may leave cores idle, each tile pays the
      // K-loop's fill, and operands beyond the L2 are re-read from HBM.
      double work = e.padded_flops * waves * (kp + spec.cube_k_fill) * cores;
      double rate = e.peak_flops * spec.cube_efficiency * tiles * kp;
      if (spec.l2_bytes > 0 && cost.bytes > static_cast<double>(spec.l2_bytes)) {
        const double l2 = static_cast<double>(spec.l2_bytes);
        work *= l2 + spec.cube_l2_miss_penalty * (cost.bytes - l2);  // · 1/l2, folded into the rate
        rate *= l2;
      }
      e.compute_ns = work * 1e9 / rate;
    } else {
      e.padded_flops = cost.flops;
      const double blocks = std::ceil(cost.bytes / kVectorBytesPerBlock);
      e.block_dim = cost.block_dim ? cost.block_dim : static_cast<std::uint32_t>(std::clamp(blocks, 1.0, cores));
      used_cores = std::min<double>(e.block_dim, cores);
      e.compute_ns = e.padded_flops * cores * 1e9 / (e.peak_flops * spec.vector_efficiency * used_cores);
    }
    e.overhead_ns = spec.kernel_overhead_ns + (e.block_dim > 1 ? spec.multi_core_launch_ns : 0) +
                    saturated_ns(cost.fixed_ns);
    // Half the cores are enough to saturate device memory.
    e.memory_ns = memory_ns(spec, cost.bytes, std::min(1.0, 2.0 * used_cores / cores));
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

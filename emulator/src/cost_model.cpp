// See the formula in cost_model.h.
#include "npuscope/emulator/cost_model.h"

#include <algorithm>
#include <cmath>

namespace npuscope::emulator {
namespace {

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

// HBM (and L2) time of `read` bytes (of which `hot` the L2 holds) and `written` bytes over `share` of
// the bandwidth: reads and writes share one bus, so their times add. The L2 is write-back: writes up
// to its size land in it at l2_bandwidth (their eviction later overlaps other work), the rest go to
// HBM. One division (Note [One division per term]).
double memory_ns(const DeviceSpec& spec, double read, double written, double hot, double share) {
  const double rd = spec.memory_bandwidth * spec.memory_efficiency;
  const double wr = spec.memory_bandwidth * spec.memory_write_efficiency;
  if (spec.l2_bandwidth <= 0 || spec.l2_bytes == 0) return (read * wr + written * rd) * 1e9 / (rd * wr * share);
  const double l2_bytes = static_cast<double>(spec.l2_bytes);
  const double hot_read = std::min({hot, read, l2_bytes}), l2_written = std::min(written, l2_bytes);
  const double l2 = spec.l2_bandwidth;
  return ((read - hot_read) * wr * l2 + (written - l2_written) * rd * l2 + (hot_read + l2_written) * rd * wr) * 1e9 /
         (rd * wr * l2 * share);
}

// The bytes one cube core reads per second, for f32 operands or others (0: no cap).
double core_read_rate(const DeviceSpec& spec, DType dtype) {
  return spec.cube_core_read_bandwidth * (dtype == DType::kF32 ? spec.cube_f32_read_factor : 1.0);
}

struct CubeTiming {
  double compute_ns = 0, memory_ns = 0;
  std::uint32_t block_dim = 0;
};

// One tiling of a cube op: `tiles` output tiles in waves over the used cores, each the average tile's
// padded flops (with the K fill of old spec files) plus cube_tile_fill_ns.
CubeTiming cube_tiling(const DeviceSpec& spec, const KernelCost& cost, const CostEstimate& e, double tiles,
                       double cores, double kp, double read, double l2_factor, double core_rate) {
  CubeTiming t;
  t.block_dim = cost.block_dim ? cost.block_dim : static_cast<std::uint32_t>(std::min(tiles, cores));
  const double used = std::min<double>(t.block_dim, cores);
  const double waves = std::ceil(tiles / used);
  const double tile_ns = e.padded_flops * (kp + spec.cube_k_fill) * cores * l2_factor * 1e9 /
                         (e.peak_flops * spec.cube_efficiency * tiles * kp);
  // The fill drains the tile's output (L0C through the fixpipe): in proportion to its area.
  const double fill_ns =
      spec.cube_tile_fill_ns * e.padded_flops / (2 * kp * tiles * spec.cube_base_m * spec.cube_base_n);
  t.compute_ns = waves * (tile_ns + fill_ns);
  const double written = std::min(cost.bytes_written, cost.bytes);
  t.memory_ns = memory_ns(spec, read, written, cost.hot_bytes, std::min(1.0, 2.0 * used / cores));
  if (core_rate > 0) {
    t.memory_ns = std::max(t.memory_ns, (read - std::min(cost.hot_bytes, read)) * 1e9 / (used * core_rate));
  }
  return t;
}

// Note [Cube tiling search]
// CANN's matmul tiling shrinks the base block until the output tiles fill the cores (the shared
// profile runs 32x4096 outputs on 16-24 blocks; a 256^3 matmul on 2 blocks of 128x256 would leave 22
// cores idle). Candidates halve the larger of the base sides, down to cube_min_base, until the tiles
// fill the cores (finer tiles would re-read their panels, which the model does not count); the
// fastest wins. A given block dim (a profile's) takes the largest tiling with that many tiles.
void estimate_cube(const DeviceSpec& spec, const KernelCost& cost, DType dtype, double cores, CostEstimate& e) {
  const std::int64_t m = std::max<std::int64_t>(cost.m, 1), n = std::max<std::int64_t>(cost.n, 1);
  const std::int64_t k = std::max<std::int64_t>(cost.k, 1), batch = std::max<std::int64_t>(cost.batch, 1);
  const double kp = padded(k, spec.cube_k);
  const double mp = padded(m, spec.cube_m), np = padded(n, spec.cube_n);
  e.padded_flops = 2.0 * static_cast<double>(batch) * mp * np * kp;
  double l2_factor = 1;  // operands beyond the L2 are re-read from HBM
  if (spec.l2_bytes > 0 && cost.bytes > static_cast<double>(spec.l2_bytes)) {
    const double l2 = static_cast<double>(spec.l2_bytes);
    l2_factor = (l2 + spec.cube_l2_miss_penalty * (cost.bytes - l2)) / l2;
  }
  const double read = cost.bytes - std::min(cost.bytes_written, cost.bytes);
  const double core_rate = core_read_rate(spec, dtype);
  double bm = spec.cube_base_m, bn = spec.cube_base_n;
  const auto tiles_of = [&](double tm, double tn) {
    return static_cast<double>(batch) * std::ceil(static_cast<double>(m) / tm) * std::ceil(static_cast<double>(n) / tn);
  };
  CubeTiming best = cube_tiling(spec, cost, e, tiles_of(bm, bn), cores, kp, read, l2_factor, core_rate);
  double best_ns = std::max(best.compute_ns, best.memory_ns);
  bool found = cost.block_dim == 0 || tiles_of(bm, bn) >= cost.block_dim;
  const double floor = std::max(1, spec.cube_min_base);
  // Without a block dim, halving stops once the tiles fill the cores (finer tiles re-read panels).
  while (!found || (cost.block_dim == 0 && tiles_of(bm, bn) < cores)) {
    // Halve the larger side still above the floor and the (padded) shape; stop when neither can shrink.
    const bool halve_n = bn >= bm && bn / 2 >= floor && bn / 2 >= spec.cube_n && bn < 2 * np;
    const bool halve_m = !halve_n && bm / 2 >= floor && bm / 2 >= spec.cube_m && bm < 2 * mp;
    if (halve_n) {
      bn /= 2;
    } else if (halve_m) {
      bm /= 2;
    } else if (bn / 2 >= floor && bn / 2 >= spec.cube_n && bn < 2 * np) {
      bn /= 2;
    } else {
      break;
    }
    const double tiles = tiles_of(bm, bn);
    const CubeTiming t = cube_tiling(spec, cost, e, tiles, cores, kp, read, l2_factor, core_rate);
    const double ns = std::max(t.compute_ns, t.memory_ns);
    if (cost.block_dim != 0) {
      best = t;
      found = tiles >= cost.block_dim;
    } else if (ns < best_ns) {
      best = t;
      best_ns = ns;
    }
  }
  e.block_dim = best.block_dim;
  e.compute_ns = best.compute_ns;
  e.memory_ns = best.memory_ns;
}

// Note [Kernel cost terms]
// The vector unit's spec-dependent terms (Note [Calibrated cost model]): extra passes and the f16
// upcast as fixed time, softmax re-reads and strided reads as more memory time, a pooling argmax as
// scalar compute, a multi-block reduction's combine as a fixed cost.
void estimate_vector(const DeviceSpec& spec, const KernelCost& cost, DType dtype, double cores, CostEstimate& e) {
  e.padded_flops = cost.flops;
  const double blocks = std::ceil(cost.bytes / spec.vector_block_bytes);
  e.block_dim = cost.block_dim ? cost.block_dim : static_cast<std::uint32_t>(std::clamp(blocks, 1.0, cores));
  const double used = std::min<double>(e.block_dim, cores);
  double stages = cost.stages;
  double peak = e.peak_flops;
  if (cost.precision_upcast && spec.vector_f16_upcast && (dtype == DType::kF16 || dtype == DType::kBF16)) {
    stages += 2;  // casts in and out
    peak = unit_peak_flops(spec, ComputeUnit::kVector, DType::kF32);
  }
  e.compute_ns = e.padded_flops * cores * 1e9 / (peak * spec.vector_efficiency * used);
  if (cost.argmax_taps > 0 && spec.pool_argmax_tap_cycles > 0) {
    e.compute_ns += cost.argmax_taps * spec.pool_argmax_tap_cycles * 1e9 / (spec.clock_hz * used);
  }
  const double written = std::min(cost.bytes_written, cost.bytes);
  double read = cost.bytes - written;
  if (cost.softmax) read *= spec.softmax_passes;
  if (cost.strided) read /= spec.reduce_strided_efficiency;
  e.memory_ns = memory_ns(spec, read, written, cost.hot_bytes, std::min(1.0, 2.0 * used / cores));
  e.overhead_ns =
      saturated_ns(stages * spec.vector_stage_ns + (cost.cross_core && used > 1 ? spec.reduce_cross_core_ns : 0));
}

}  // namespace

double memory_seconds(const DeviceSpec& spec, double bytes) {
  const double hbm = spec.memory_bandwidth * spec.memory_efficiency;
  if (spec.l2_bandwidth <= 0 || spec.l2_bytes == 0) return bytes / hbm;
  const double in_l2 = std::min(bytes, static_cast<double>(spec.l2_bytes));
  return (in_l2 * hbm + (bytes - in_l2) * spec.l2_bandwidth) / (spec.l2_bandwidth * hbm);
}

// Note [One division per term]
// estimate_kernel runs on the launch path of every task. Written as the factors of Note [Calibrated
// cost model] it took 13 divisions; the factors multiply out so that the compute and the memory
// term each take one (used cores cancel from the wave utilisation and the core share):
//   efficiency · used = cube_efficiency · tiles/(waves·used_cores) · kp/(kp+fill) · used_cores/cores
//                     = cube_efficiency · tiles · kp / (waves · (kp+fill) · cores)
// The cube's tiling search (Note [Cube tiling search]) evaluates a handful of tilings only when
// cube_min_base is below the base block. bench/cost_model_bench.cpp holds it against the plain
// roofline it replaced.
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
    if (cost.unit == ComputeUnit::kCube) {
      if (cost.hf32 && spec.conv_hf32 && dtype == DType::kF32)
        e.peak_flops = spec.cube_peak_f16() * spec.cube_hf32_rate;
      estimate_cube(spec, cost, dtype, cores, e);
    } else {
      estimate_vector(spec, cost, dtype, cores, e);
    }
    e.overhead_ns +=
        spec.kernel_overhead_ns + (e.block_dim > 1 ? spec.multi_core_launch_ns : 0) + saturated_ns(cost.fixed_ns);
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

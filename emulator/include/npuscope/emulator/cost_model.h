// The cost model: how long a task takes on the emulated NPU (see DESIGN.md "Cost model").
//
//   duration = overhead + max(flops / (peak(unit, dtype) · efficiency · utilisation), memory time)
//
// Note [Calibrated cost model]
// The terms are the ones published 910B measurements show (shared/CALIBRATION.md; the table of
// modelled against measured is docs/calibration.md, made by `npuscope calibrate`), and each
// constant is a DeviceSpec field, so a spec file can refit them:
// - Cube: shapes are padded to the fractal (16x16x16). The output is cut into base blocks
//   (cube_base_m x cube_base_n) that run in waves over the cores; the last wave may leave cores idle,
//   so 32 tiles on 24 cores take two waves at 67%. Each tile pays a fixed cube_tile_fill_ns (loading
//   its first panels, draining its output through the fixpipe), so small K and small tiles lose; the
//   older multiplicative fill (a depth K costs K + cube_k_fill) stays for spec files that set it. The
//   tiling is searched: base blocks halve down to cube_min_base while that fills more cores, and the
//   fastest wins (a given block dim takes the largest tiling that has as many tiles). Operands beyond
//   the L2 cost 1 + cube_l2_miss_penalty per L2 size beyond it (panels re-read from HBM). f32 runs at
//   cube_f32_rate of f16, or cube_hf32_rate for convolutions when conv_hf32 (torch_npu allows HF32
//   for convs, not matmuls). One core reads at most cube_core_read_bandwidth (times
//   cube_f32_read_factor for f32 operands, converted ND->NZ on load), so few-block GEMMs are
//   read-bound below the HBM speed. cube_efficiency is what is left on a large aligned shape.
// - Vector: throughput per dtype from the unit's width (f32 half of f16, int8 twice), times
//   vector_efficiency; work over fewer blocks than cores leaves the rest idle. Each internal pass
//   beyond the first costs vector_stage_ns; precision-sensitive ops on f16/bf16 compute in f32 with
//   two more passes (vector_f16_upcast); softmax reads its input softmax_passes times; a reduction
//   over more than one block pays reduce_cross_core_ns to combine partials, and reads along a strided
//   axis at reduce_strided_efficiency; a pooling argmax spends pool_argmax_tap_cycles per output tap.
// - Memory: reads at memory_bandwidth · memory_efficiency, writes at memory_write_efficiency (one bus:
//   the times add); reads the L2 holds (inputs written just before: KernelCost::hot_bytes) and
//   writes up to the L2's size (write-back) at l2_bandwidth. One core cannot saturate HBM (bandwidth scales with blocks
//   until half the cores are busy).
// - Fixed costs: a device floor per kernel (kernel_overhead_ns), plus multi_core_launch_ns when it
//   runs on more than one core. On the host (device.cpp, dispatch.cpp): op_issue_ns to prepare an op,
//   host_launch_ns per launch, sync_latency_ns per synchronize, copies at host_link_bandwidth.
#pragma once

#include <cstdint>

#include "npuscope/emulator/device_spec.h"
#include "npuscope/emulator/dtype.h"

namespace npuscope::emulator {

enum class ComputeUnit : std::uint8_t { kCube, kVector, kAiCpu };

// What a kernel reports about one launch. Shapes for cube work go in m/n/k/batch (flops are then
// derived, padded); other units give flops directly.
struct KernelCost {
  ComputeUnit unit = ComputeUnit::kVector;
  double flops = 0;                             // useful flops (unpadded)
  double bytes = 0;                             // bytes read + written in device memory
  std::uint32_t block_dim = 0;                  // 0: derived from the work size
  std::int64_t m = 0, n = 0, k = 0, batch = 1;  // cube only
  double fixed_ns = 0;                          // the op's own fixed device time beyond the kernel floor
  // Note [Kernel cost terms]: what the spec-dependent terms of estimate_kernel need to know of the op.
  double bytes_written = 0;       // the part of `bytes` written (memory_write_efficiency); the rest is read
  double hot_bytes = 0;           // the part of the reads the L2 holds (inputs written just before)
  double argmax_taps = 0;         // outputs x window taps of a pooling argmax (pool_argmax_tap_cycles each)
  std::uint8_t stages = 0;        // vector passes beyond the first (vector_stage_ns each)
  bool precision_upcast = false;  // f16/bf16 computed in f32 with casts in and out (vector_f16_upcast)
  bool cross_core = false;        // a reduction that combines partials across blocks (reduce_cross_core_ns)
  bool strided = false;           // reads along an axis that is not innermost (reduce_strided_efficiency)
  bool softmax = false;           // reads its input softmax_passes times (max, sum, normalise)
  bool hf32 = false;              // an f32 cube op that CANN runs in HF32 when allowed (conv_hf32)
};

struct CostEstimate {
  std::uint64_t duration_ns = 0;
  std::uint64_t overhead_ns = 0;
  double compute_ns = 0;
  double memory_ns = 0;
  double padded_flops = 0;  // the flops the cube really spends (fractal padding)
  std::uint32_t block_dim = 0;
  double peak_flops = 0;  // peak of the unit for this dtype, all cores
  bool memory_bound = false;
};

// The longest a single task may last (10^15 ns, about 11.6 days): the cost model saturates there, so
// that no in-range spec and no work size can overflow the int64 virtual clock (Note [Spec value
// ranges] in device_spec.cpp). A task this long is reported like any other.
inline constexpr std::uint64_t kMaxTaskNs = 1'000'000'000'000'000;

// Cube and vector peaks per dtype (flop/s, whole device).
double unit_peak_flops(const DeviceSpec& spec, ComputeUnit unit, DType compute_dtype);

CostEstimate estimate_kernel(const DeviceSpec& spec, const KernelCost& cost, DType compute_dtype);

// Seconds to move `bytes` through device memory: what the L2 holds at l2_bandwidth, the rest at the
// effective HBM read bandwidth (one block's share aside). Copies and collectives use it.
double memory_seconds(const DeviceSpec& spec, double bytes);

// Host <-> device or device <-> device copy (the latter reads and writes device memory).
std::uint64_t estimate_copy_ns(const DeviceSpec& spec, std::uint64_t bytes, bool device_to_device);

// Rounds v up to a multiple of `to`.
constexpr std::int64_t pad_to(std::int64_t v, std::int64_t to) { return (v + to - 1) / to * to; }

}  // namespace npuscope::emulator

// The cost model: how long a task takes on the emulated NPU (see DESIGN.md "Cost model").
//
//   duration = overhead + max(flops / (peak(unit, dtype) · utilisation), bytes / bandwidth)
//
// Cube shapes are padded up to the fractal (16×16×16), so misaligned shapes cost more; work split
// over fewer blocks than cores leaves the rest idle (utilisation = block_dim / cores), and a single
// core cannot saturate HBM (bandwidth scales with blocks until half the cores are busy).
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

// Host <-> device or device <-> device copy.
std::uint64_t estimate_copy_ns(const DeviceSpec& spec, std::uint64_t bytes, bool device_to_device);

// Rounds v up to a multiple of `to`.
constexpr std::int64_t pad_to(std::int64_t v, std::int64_t to) { return (v + to - 1) / to * to; }

}  // namespace npuscope::emulator

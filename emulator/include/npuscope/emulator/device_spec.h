// What an emulated NPU is: cores, clocks, memory, bandwidths and the cost-model constants.
//
// Presets carry public figures (see shared/REFERENCE.md); all of them are approximate, and the
// source of each is commented in device_spec.cpp. A user may pass a JSON spec file that starts from
// a preset ("base") and overrides any field by its name below.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "npuscope/emulator/numerics.h"

namespace npuscope::emulator {

struct DeviceSpec {
  std::string name;  // preset or file name, e.g. "ascend910b"
  std::string description;

  // Compute units.
  int cube_cores = 0;    // AI cores with a cube unit
  int vector_cores = 0;  // vector cores (910B: separate; older chips: the AI cores' vector units)
  double clock_hz = 0;
  int cube_m = 16, cube_n = 16, cube_k = 16;  // cube fractal
  bool cube_fp32 = false;                     // f32 cube path (910B); without it f32 matmul runs in f16
  bool bf16 = false;                          // bf16 support
  double vector_flops_per_cycle_f16 = 128;    // per vector core; f32 is half
  double cube_efficiency = 0.85;              // achievable fraction of the cube peak on large aligned shapes
  // Cube tiling (cost_model.cpp): the output tile one core computes at a time (MatMul's base block),
  // and the K-loop's fill and drain per tile in K elements (a tile of depth K costs K + fill).
  int cube_base_m = 128, cube_base_n = 256;
  double cube_k_fill = 512;
  double vector_efficiency = 0.70;  // likewise for the vector unit

  // Memory.
  std::uint64_t memory_bytes = 0;  // device (HBM / LPDDR) capacity
  double memory_bandwidth = 0;     // bytes per second
  double host_link_bandwidth = 0;  // host <-> device copies, bytes per second (PCIe)
  std::uint64_t ub_bytes = 0, l0a_bytes = 0, l0b_bytes = 0, l0c_bytes = 0, l1_bytes = 0, l2_bytes = 0;

  // Latencies and the AI CPU (for ops with no NPU kernel).
  std::uint64_t launch_latency_ns = 0;   // host launch -> earliest device start
  std::uint64_t kernel_overhead_ns = 0;  // fixed cost of any AI core / vector task
  std::uint64_t copy_overhead_ns = 0;    // fixed cost of a memcpy task
  std::uint64_t host_launch_ns = 0;      // host-side cost of one launch call, added to host time
  std::uint64_t aicpu_overhead_ns = 0;   // fixed cost of an AI CPU task
  double aicpu_flops = 0;                // AI CPU throughput, flop/s

  // Numerics defaults.
  OverflowMode default_overflow_mode = OverflowMode::kInfNan;
  bool supports_inf_nan = true;  // 910 / 310P: saturation only
  PrecisionMode default_precision_mode = PrecisionMode::kMustKeepOriginDtype;

  // Derived peaks (flop/s).
  double cube_peak_f16() const;  // cores × M·N·K × 2 × clock
  double cube_peak(bool int8) const;
  double vector_peak_f16() const;
};

// Names of the built-in presets: ascend910b (the 910B2), ascend910b1..ascend910b4, ascend910,
// ascend310p, tiny.
std::vector<std::string> preset_names();

// A built-in preset. Throws SpecError listing the presets for an unknown name.
DeviceSpec preset_spec(std::string_view name);

// A preset name, or the path of a JSON spec file ({"base": "ascend910b", "memory_bytes": ...}).
// Throws SpecError naming the file and the field for unreadable files, unknown fields and bad values.
DeviceSpec load_spec(std::string_view preset_or_path);

// Checks every numeric value against its documented range (Note [Spec value ranges] in
// device_spec.cpp) and the overflow mode against the chip; throws SpecError naming the spec (its
// file for a spec file), the field, the value and the range.
void validate_spec(const DeviceSpec& spec);

// The ranges as the Markdown table docs/emulator.md carries (a test keeps the two equal).
std::string spec_ranges_markdown();

}  // namespace npuscope::emulator

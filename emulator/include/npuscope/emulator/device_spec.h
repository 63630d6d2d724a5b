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
  double vector_flops_per_cycle_f16 = 128;    // per vector core; per dtype in proportion to its size (f32 half)
  // Calibration constants (Note [Calibrated cost model] in cost_model.h; the fitted values and their
  // sources are in device_spec.cpp and docs/calibration.md). A spec file may refit any of them.
  double cube_efficiency = 1.0;  // fraction of the cube peak that tiling and K fill leave (the ceiling)
  // Cube tiling: the output tile one core computes at a time (MatMul's base block), and the K-loop's
  // fill and drain per tile in K elements (a tile of depth K costs K + fill).
  int cube_base_m = 128, cube_base_n = 256;
  double cube_k_fill = 512;
  double cube_f32_rate = 0.25;        // f32 cube throughput (HF32 on 910B) as a fraction of f16's
  double cube_l2_miss_penalty = 0.1;  // extra cube time per L2 size of operands beyond the L2
  // Cube terms of issue 39 (Note [Calibrated cost model]); the defaults leave the formula as it was.
  double cube_tile_fill_ns = 0;         // fixed time of one output tile (first panels in, output out)
  int cube_min_base = 4096;             // the tiling search halves base blocks down to this (>= base: none)
  double cube_hf32_rate = 0.25;         // HF32 cube throughput as a fraction of f16's
  bool conv_hf32 = false;               // f32 convolutions run in HF32 (torch_npu's default allows it)
  double cube_core_read_bandwidth = 0;  // bytes/s one cube core reads (0: no per-core cap)
  double cube_f32_read_factor = 1;      // the per-core read rate of f32 operands, relative
  double vector_efficiency = 0.70;      // achievable fraction of the vector peak
  // Vector terms of issue 39; the defaults leave the formula as it was.
  double vector_block_bytes = 65536;       // bytes (read + written) per vector block before another is launched
  double vector_stage_ns = 0;              // each internal pass of a vector kernel beyond the first
  bool vector_f16_upcast = false;          // precision-sensitive f16/bf16 ops compute in f32 (+2 cast passes)
  double softmax_passes = 1;               // reads of a softmax's input (max, sum, normalise)
  double reduce_cross_core_ns = 0;         // combining a reduction's partials across blocks
  double reduce_strided_efficiency = 1;    // read efficiency of a reduction along a non-innermost axis
  double pool_argmax_tap_cycles = 0;       // cycles per output and window tap of a pooling argmax, per core
  double memory_efficiency = 0.85;         // effective HBM read bandwidth as a fraction of the specified one
  double memory_write_efficiency = 0.85;   // effective HBM write bandwidth, likewise
  double l2_bandwidth = 0;                 // bytes/s for the part of a working set the L2 holds (0: no L2 term)
  std::uint64_t multi_core_launch_ns = 0;  // extra fixed cost of a kernel that runs on more than one core
  // Multiplies every compute task's device time (not copies or collectives): a throttled or degraded
  // chip, the straggler of a multi-rank job (the samples' --slow-rank). 1: as the model says.
  double compute_slowdown = 1.0;
  // Private formats (Note [Private formats] in formats.h): CANN keeps convolution operands in
  // NC1HWC0 / FRACTAL_Z and inserts TransData tasks to convert them from and back to NCHW. A
  // TransData costs its fixed part plus its bytes at HBM speed scaled by how contiguous its runs are
  // (a run of at least transdata_burst_bytes streams at full speed; shorter runs proportionally less).
  bool private_formats = false;
  std::uint64_t transdata_fixed_ns = 0;
  double transdata_burst_bytes = 1;

  // Memory.
  std::uint64_t memory_bytes = 0;  // device (HBM / LPDDR) capacity
  double memory_bandwidth = 0;     // bytes per second, as specified
  double host_link_bandwidth = 0;  // host <-> device copies, bytes per second (PCIe)
  std::uint64_t ub_bytes = 0, l0a_bytes = 0, l0b_bytes = 0, l0c_bytes = 0, l1_bytes = 0, l2_bytes = 0;

  // Latencies and the AI CPU (for ops with no NPU kernel).
  std::uint64_t launch_latency_ns = 0;   // host launch -> earliest device start
  std::uint64_t kernel_overhead_ns = 0;  // fixed cost of any AI core / vector task (the device floor)
  std::uint64_t copy_overhead_ns = 0;    // fixed cost of a memcpy task
  std::uint64_t host_launch_ns = 0;      // host-side cost of one launch call, added to host time
  std::uint64_t op_issue_ns = 0;         // host-side cost of preparing one op (workspace, tiling) on an NPU
  std::uint64_t sync_latency_ns = 0;     // a synchronize returns this long after the device finished
  std::uint64_t aicpu_overhead_ns = 0;   // fixed cost of an AI CPU task
  double aicpu_flops = 0;                // AI CPU throughput, flop/s

  // Links between devices, for collectives (shared/CALIBRATION.md C1-C3; used by the multi-rank model).
  int ranks_per_node = 8;                   // devices on one server's HCCS mesh
  double intra_node_link_bandwidth = 0;     // bytes/s between two devices of a server, per pair (HCCS)
  double inter_node_bandwidth = 0;          // bytes/s per device across servers (RoCE)
  double p2p_bandwidth = 0;                 // bytes/s of one device-to-device copy inside a server
  std::uint64_t collective_latency_ns = 0;  // fixed cost of one collective step

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

// Whether `name` is a built-in preset (else load_spec takes it for a spec file's path).
bool is_preset(std::string_view name);

// A built-in preset. Throws SpecError listing the presets for an unknown name.
DeviceSpec preset_spec(std::string_view name);

// A preset name, or the path of a JSON spec file ({"base": "ascend910b", "memory_bytes": ...}).
// Throws SpecError naming the file and the field for unreadable files, unknown fields and bad values.
DeviceSpec load_spec(std::string_view preset_or_path);

// Checks every numeric value against its documented range (Note [Spec value ranges] in
// device_spec.cpp) and the overflow mode against the chip; throws SpecError naming the spec (its
// file for a spec file), the field, the value and the range.
void validate_spec(const DeviceSpec& spec);

// The numeric fields by their spec-file names, for refitting a spec (npuscope calibrate --fit):
// their names in table order, a field's value, its inclusive range and whether it holds integers,
// and setting one (integral fields are rounded; the caller keeps values in range). SpecError for a
// name that is not a numeric field.
std::vector<std::string> spec_numeric_fields();
double spec_field(const DeviceSpec& spec, std::string_view field);
void set_spec_field(DeviceSpec& spec, std::string_view field, double value);
struct SpecFieldInfo {
  double min = 0, max = 0;
  bool integral = false;
};
SpecFieldInfo spec_field_info(std::string_view field);

// The ranges as the Markdown table docs/emulator.md carries (a test keeps the two equal).
std::string spec_ranges_markdown();

}  // namespace npuscope::emulator

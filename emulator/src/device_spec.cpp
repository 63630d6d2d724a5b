// Device presets and spec files. Every figure is approximate; sources are in shared/REFERENCE.md
// (CANN platform config files quoted publicly, vendor datasheets) and noted beside each value.
#include "npuscope/emulator/device_spec.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <variant>

#include "npuscope/emulator/errors.h"

namespace npuscope::emulator {

double DeviceSpec::cube_peak_f16() const {
  return static_cast<double>(cube_cores) * cube_m * cube_n * cube_k * 2.0 * clock_hz;
}
double DeviceSpec::cube_peak(bool int8) const { return int8 ? 2.0 * cube_peak_f16() : cube_peak_f16(); }
double DeviceSpec::vector_peak_f16() const { return vector_cores * vector_flops_per_cycle_f16 * clock_hz; }

namespace {

constexpr std::uint64_t kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024;

DeviceSpec ascend910b() {
  DeviceSpec s;
  s.name = "ascend910b";
  s.description = "Ascend 910B2-like (approximate public figures)";
  s.cube_cores = 24;    // AI cores (cube), platform config
  s.vector_cores = 48;  // 2 vector cores per AI core on 910B
  s.clock_hz = 1.8e9;   // platform config
  s.cube_fp32 = true;   // 910B cube: f32 x f32 -> f32 (and HF32)
  s.bf16 = true;
  s.memory_bytes = 64 * kGiB;    // HBM
  s.memory_bandwidth = 1.6e12;   // specified (CALIBRATION.md hardware facts)
  s.host_link_bandwidth = 25e9;  // PCIe 4.0 x16: 24.9 GB/s host->device measured (C3)
  s.ub_bytes = 192 * kKiB;
  s.l0a_bytes = 64 * kKiB;
  s.l0b_bytes = 64 * kKiB;
  s.l0c_bytes = 128 * kKiB;
  s.l1_bytes = 512 * kKiB;
  s.l2_bytes = 192 * kMiB;
  // Calibrated against shared/CALIBRATION.md (docs/calibration.md has the table these give).
  // The terms of issue 39 each rest on a published point and the shared 910B profile's kernels
  // (docs/calibration.md "The terms" says which).
  s.cube_efficiency = 0.97;   // 2048^3 251 TF (G2), 4096^3 315 TF (G3)
  s.cube_k_fill = 0;          // replaced by cube_tile_fill_ns
  s.cube_tile_fill_ns = 800;  // G1-G3's rise with size; real MatMulV2/V3 K=32: 1.3-1.6 us per wave
  // No retiling without a block dim: issue 39 finds the old 5.6 us for a 256^3 f16 matmul 41% slow, which
  // 2 tiles of 128x256 with the tile fill give; retiling to fill the cores would make it 2.4 us.
  s.cube_min_base = 256;
  s.cube_f32_rate = 0.25;              // true f32: 84.5 vs 315 TF at 4096^3 (G5)
  s.cube_hf32_rate = 0.5;              // real Conv2D / BackpropInput / Filter: 90-137 TF f32 (HF32 Eligible)
  s.conv_hf32 = true;                  // torch_npu: ACL_ALLOW_HF32 conv "1", matmul "0"
  s.cube_core_read_bandwidth = 85e9;   // G15 (8 blocks, 10.6 MB in 15.5 us)
  s.cube_f32_read_factor = 0.33;       // real f32 MatMulV2 m=32: 22-37 GB/s per block on 16-24 blocks
  s.cube_l2_miss_penalty = 0.09;       // 8192^3 305 TF, 10240^3 275 TF once operands leave the L2 (G4)
  s.vector_block_bytes = 4096;         // real Mul 4096 f32 on 4 blocks, 64x3x11x11 on 23, Relu 32x4096 on 47
  s.vector_stage_ns = 540;             // swiglu 4x32 f32 2.51 us, f16 4.18 us (E4, E4b); real Mul/Cast 1.3-1.8 us
  s.vector_f16_upcast = true;          // E4 f16 slower than E4b f32 on the same shape
  s.softmax_passes = 3;                // max, sum, normalise over rows that leave the UB
  s.reduce_cross_core_ns = 12000;      // real ReduceSum [32,4096] axis 0 20.4 us, LogSoftmaxV2 17.6, NLLLoss 12.2
  s.reduce_strided_efficiency = 0.45;  // real ReduceSum [32,C,HW] axes (0,2)
  s.pool_argmax_tap_cycles = 1.0;      // real MaxPoolWithArgmaxV1 (aiv_scalar_ratio 0.67-0.80)
  s.memory_efficiency = 0.89;          // reads: 1.43 TB/s over 4 GiB (E1)
  s.memory_write_efficiency = 0.5;     // writes beyond the L2: swiglu 256-655 MB out (E3, E3b)
  s.l2_bandwidth = 1.75e12;            // a 135 MB working set under the L2 measured at ~1.75 TB/s
  s.launch_latency_ns = 3000;
  s.kernel_overhead_ns = 1200;   // smallest device kernels 1.18-1.28 us (S1)
  s.multi_core_launch_ns = 200;  // real Mul on 4 blocks 0.2 us above one block; Relu 1 MB on 47 blocks 2.8 us
  // The 57 TransData kernels of the shared 910B profile (docs/calibration_from_profile.md), fitted
  // alone on rank 0 (`calibrate --from-profile --fit --fit-fields transdata_fixed_ns,transdata_burst_bytes`:
  // 8486 ns, 243 B): NCHW<->NC1HWC0 moves runs of H*W*4 bytes, mostly L2-hot; NCHW<->FRACTAL_Z costs
  // ~55 ps per element, runs of one 32-byte C0 block each paying a burst (Note [TransData cost]).
  s.private_formats = true;
  s.transdata_fixed_ns = 8500;
  s.transdata_burst_bytes = 256;
  s.copy_overhead_ns = 2000;
  s.host_launch_ns = 8000;    // HTA: typical CPU launch cost 5-20 us
  s.op_issue_ns = 12000;      // with host_launch_ns: ~20 us per eager op under torch_npu (H8)
  s.sync_latency_ns = 10000;  // eager add + synchronize 69-74 us (E6)
  // Links (C1-C3): all_gather algbw 36 / 73 / 147 GiB/s on 2 / 4 / 8 ranks grows with the ranks, as a
  // full mesh with ~18.4 GiB/s per pair gives; one RoCE port of 200 Gb/s per NPU across servers.
  s.ranks_per_node = 8;
  s.intra_node_link_bandwidth = 19.7e9;
  s.inter_node_bandwidth = 25e9;
  s.p2p_bandwidth = 54.7e9;  // P2P copy between two cards (C3)
  s.collective_latency_ns = 20000;
  s.aicpu_overhead_ns = 20000;
  s.aicpu_flops = 4e9;
  s.default_overflow_mode = OverflowMode::kInfNan;  // INF_NAN is the 910B default
  s.supports_inf_nan = true;
  s.default_precision_mode = PrecisionMode::kMustKeepOriginDtype;
  return s;
}

// The 910B SKUs (shared/CALIBRATION.md "Hardware facts"; all approximate): B1 and B2 have 24 AI
// cores (48 vector), B3 and B4 20 (40); the cube clock is 1.8-1.85 GHz, ~1.5 GHz on B4, so that
// 16x16x16 f16 per cycle per core gives B2 ~354, B3 ~295, B4 ~246 TFLOP/s. HBM is 64 GiB at a
// specified 1.6 TB/s with a 192 MiB L2 on B2 (and, unconfirmed, B1 and B3); B4 has 32 GiB at 0.8 TB/s
// and a 96 MiB L2.
DeviceSpec ascend910b_sku(const char* name, const char* sku, int cube_cores, double clock_hz) {
  DeviceSpec s = ascend910b();
  s.name = name;
  s.description = std::string("Ascend ") + sku + "-like (approximate public figures)";
  s.cube_cores = cube_cores;
  s.vector_cores = 2 * cube_cores;
  s.clock_hz = clock_hz;
  return s;
}

DeviceSpec ascend910b1() { return ascend910b_sku("ascend910b1", "910B1", 24, 1.85e9); }  // top of 1.8-1.85 GHz
DeviceSpec ascend910b2() { return ascend910b_sku("ascend910b2", "910B2", 24, 1.8e9); }   // ~354 TFLOP/s f16
DeviceSpec ascend910b3() { return ascend910b_sku("ascend910b3", "910B3", 20, 1.8e9); }   // ~295 TFLOP/s f16
DeviceSpec ascend910b4() {
  DeviceSpec s = ascend910b_sku("ascend910b4", "910B4", 20, 1.5e9);  // ~246 TFLOP/s f16
  s.memory_bytes = 32 * kGiB;
  s.memory_bandwidth = 0.8e12;
  s.l2_bytes = 96 * kMiB;
  return s;
}

DeviceSpec ascend910() {
  DeviceSpec s = ascend910b();
  s.name = "ascend910";
  s.description = "Ascend 910-like (approximate public figures)";
  s.cube_cores = 32;    // 32 AI cores
  s.vector_cores = 32;  // the AI cores' own vector units
  s.clock_hz = 1.0e9;   // 32 x 4096 x 2 x 1.0 GHz ~ 262 TFLOP/s vs 256 official
  s.cube_fp32 = false;  // f16 cube only: f32 matmul runs in f16
  s.bf16 = false;
  s.memory_bytes = 32 * kGiB;
  s.memory_bandwidth = 1.2e12;  // unconfirmed
  s.ub_bytes = 256 * kKiB;
  s.l0c_bytes = 256 * kKiB;
  s.l1_bytes = 1 * kMiB;
  s.l2_bytes = 32 * kMiB;                               // unconfirmed
  s.default_overflow_mode = OverflowMode::kSaturation;  // saturation only
  s.supports_inf_nan = false;
  s.default_precision_mode = PrecisionMode::kAllowFp32ToFp16;
  return s;
}

DeviceSpec ascend310p() {
  DeviceSpec s = ascend910();
  s.name = "ascend310p";
  s.description = "Ascend 310P3-like (approximate public figures)";
  s.cube_cores = 8;
  s.vector_cores = 7;
  s.clock_hz = 1.07e9;           // 8 x 4096 x 2 x 1.07 GHz ~ 70 TFLOP/s (unconfirmed)
  s.memory_bytes = 24 * kGiB;    // LPDDR4X
  s.memory_bandwidth = 204.8e9;  // datasheet
  s.host_link_bandwidth = 12e9;  // PCIe 4.0 x8 (unconfirmed)
  s.ub_bytes = 256 * kKiB;       // unconfirmed
  s.l2_bytes = 0;
  s.l2_bandwidth = 0;
  return s;
}

DeviceSpec tiny() {
  DeviceSpec s = ascend910b();
  s.name = "tiny";
  s.description = "A small device for tests: little memory, few cores";
  s.cube_cores = 2;
  s.vector_cores = 4;
  s.clock_hz = 1.0e9;
  s.memory_bytes = 64 * kMiB;
  s.memory_bandwidth = 100e9;
  s.host_link_bandwidth = 10e9;
  s.l2_bytes = 4 * kMiB;
  s.l2_bandwidth = 0;         // hand-computed test figures need no L2 term
  s.private_formats = false;  // tests count tasks: no TransData unless a test asks for it
  // The cost terms of before issue 39 (hand-computed test figures): the struct's neutral values.
  const DeviceSpec neutral;
  s.cube_k_fill = 384;
  s.cube_tile_fill_ns = neutral.cube_tile_fill_ns;
  s.cube_min_base = neutral.cube_min_base;
  s.conv_hf32 = neutral.conv_hf32;
  s.cube_core_read_bandwidth = neutral.cube_core_read_bandwidth;
  s.cube_f32_read_factor = neutral.cube_f32_read_factor;
  s.vector_stage_ns = neutral.vector_stage_ns;
  s.vector_block_bytes = neutral.vector_block_bytes;
  s.vector_f16_upcast = neutral.vector_f16_upcast;
  s.softmax_passes = neutral.softmax_passes;
  s.reduce_cross_core_ns = neutral.reduce_cross_core_ns;
  s.reduce_strided_efficiency = neutral.reduce_strided_efficiency;
  s.pool_argmax_tap_cycles = neutral.pool_argmax_tap_cycles;
  s.memory_efficiency = s.memory_write_efficiency = 0.85;
  s.multi_core_launch_ns = 1500;
  return s;
}

// One table of the spec's fields, used to read files, to check values and to document the ranges
// (Note [Spec value ranges]). Numeric fields carry their inclusive range and unit; the others none.
using FieldRef = std::variant<int DeviceSpec::*, double DeviceSpec::*, std::uint64_t DeviceSpec::*, bool DeviceSpec::*,
                              std::string DeviceSpec::*, OverflowMode DeviceSpec::*, PrecisionMode DeviceSpec::*>;
struct Field {
  const char* name;
  FieldRef ref;
  double min = 0, max = 0;  // inclusive; both 0 for non-numeric fields
  const char* unit = "";
};

// Note [Spec value ranges]
// Every numeric spec value has a range wide enough for any plausible NPU (and for tests that shrink
// one) but narrow enough that virtual time cannot overflow: with the smallest peak (1 core, 1x1x1
// cube, 1 MHz, efficiency 0.01) and the largest overheads (1 s), a kernel still costs a finite
// double that the cost model saturates at kMaxTaskNs (cost_model.h), and a launch latency or
// overhead of at most 1 s added to an int64 virtual clock leaves ~292 years of headroom. Before
// these ranges a latency of 2^64-1 wrapped virtual time ("memory -16231 ns") and clock_hz 1e-308
// was accepted. docs/emulator.md lists the table generated by spec_ranges_markdown().
constexpr double kMaxNs = 1e9, kMaxRate = 1e15, kMaxBytes = 1e15;
const Field kFields[] = {
    {"name", &DeviceSpec::name},
    {"description", &DeviceSpec::description},
    {"cube_cores", &DeviceSpec::cube_cores, 1, 1024, "cores"},
    {"vector_cores", &DeviceSpec::vector_cores, 1, 1024, "cores"},
    {"clock_hz", &DeviceSpec::clock_hz, 1e6, 1e11, "Hz"},
    {"cube_m", &DeviceSpec::cube_m, 1, 256, "elements"},
    {"cube_n", &DeviceSpec::cube_n, 1, 256, "elements"},
    {"cube_k", &DeviceSpec::cube_k, 1, 256, "elements"},
    {"cube_fp32", &DeviceSpec::cube_fp32},
    {"bf16", &DeviceSpec::bf16},
    {"vector_flops_per_cycle_f16", &DeviceSpec::vector_flops_per_cycle_f16, 1, 1e6, "flop/cycle"},
    {"cube_efficiency", &DeviceSpec::cube_efficiency, 0.01, 1, "fraction"},
    {"cube_base_m", &DeviceSpec::cube_base_m, 1, 4096, "elements"},
    {"cube_base_n", &DeviceSpec::cube_base_n, 1, 4096, "elements"},
    {"cube_k_fill", &DeviceSpec::cube_k_fill, 0, 1e6, "elements"},
    {"cube_f32_rate", &DeviceSpec::cube_f32_rate, 0.01, 1, "fraction"},
    {"cube_l2_miss_penalty", &DeviceSpec::cube_l2_miss_penalty, 0, 100, "fraction"},
    {"cube_tile_fill_ns", &DeviceSpec::cube_tile_fill_ns, 0, 1e6, "ns"},
    {"cube_min_base", &DeviceSpec::cube_min_base, 1, 4096, "elements"},
    {"cube_hf32_rate", &DeviceSpec::cube_hf32_rate, 0.01, 1, "fraction"},
    {"conv_hf32", &DeviceSpec::conv_hf32},
    {"cube_core_read_bandwidth", &DeviceSpec::cube_core_read_bandwidth, 0, 1e12, "bytes/s"},
    {"cube_f32_read_factor", &DeviceSpec::cube_f32_read_factor, 0.01, 1, "fraction"},
    {"vector_efficiency", &DeviceSpec::vector_efficiency, 0.01, 1, "fraction"},
    {"vector_block_bytes", &DeviceSpec::vector_block_bytes, 64, 1e9, "bytes"},
    {"vector_stage_ns", &DeviceSpec::vector_stage_ns, 0, 1e6, "ns"},
    {"vector_f16_upcast", &DeviceSpec::vector_f16_upcast},
    {"softmax_passes", &DeviceSpec::softmax_passes, 1, 8, "passes"},
    {"reduce_cross_core_ns", &DeviceSpec::reduce_cross_core_ns, 0, 1e6, "ns"},
    {"reduce_strided_efficiency", &DeviceSpec::reduce_strided_efficiency, 0.01, 1, "fraction"},
    {"pool_argmax_tap_cycles", &DeviceSpec::pool_argmax_tap_cycles, 0, 1000, "cycles"},
    {"memory_efficiency", &DeviceSpec::memory_efficiency, 0.01, 1, "fraction"},
    {"memory_write_efficiency", &DeviceSpec::memory_write_efficiency, 0.01, 1, "fraction"},
    {"l2_bandwidth", &DeviceSpec::l2_bandwidth, 0, kMaxRate, "bytes/s"},
    {"multi_core_launch_ns", &DeviceSpec::multi_core_launch_ns, 0, kMaxNs, "ns"},
    {"compute_slowdown", &DeviceSpec::compute_slowdown, 1, 1000, "factor"},
    {"private_formats", &DeviceSpec::private_formats},
    {"transdata_fixed_ns", &DeviceSpec::transdata_fixed_ns, 0, kMaxNs, "ns"},
    {"transdata_burst_bytes", &DeviceSpec::transdata_burst_bytes, 1, 65536, "bytes"},
    {"memory_bytes", &DeviceSpec::memory_bytes, 4096, kMaxBytes, "bytes"},
    {"memory_bandwidth", &DeviceSpec::memory_bandwidth, 1e6, kMaxRate, "bytes/s"},
    {"host_link_bandwidth", &DeviceSpec::host_link_bandwidth, 1e6, kMaxRate, "bytes/s"},
    {"ub_bytes", &DeviceSpec::ub_bytes, 0, kMaxBytes, "bytes"},
    {"l0a_bytes", &DeviceSpec::l0a_bytes, 0, kMaxBytes, "bytes"},
    {"l0b_bytes", &DeviceSpec::l0b_bytes, 0, kMaxBytes, "bytes"},
    {"l0c_bytes", &DeviceSpec::l0c_bytes, 0, kMaxBytes, "bytes"},
    {"l1_bytes", &DeviceSpec::l1_bytes, 0, kMaxBytes, "bytes"},
    {"l2_bytes", &DeviceSpec::l2_bytes, 0, kMaxBytes, "bytes"},
    {"launch_latency_ns", &DeviceSpec::launch_latency_ns, 0, kMaxNs, "ns"},
    {"kernel_overhead_ns", &DeviceSpec::kernel_overhead_ns, 0, kMaxNs, "ns"},
    {"copy_overhead_ns", &DeviceSpec::copy_overhead_ns, 0, kMaxNs, "ns"},
    {"host_launch_ns", &DeviceSpec::host_launch_ns, 0, kMaxNs, "ns"},
    {"op_issue_ns", &DeviceSpec::op_issue_ns, 0, kMaxNs, "ns"},
    {"sync_latency_ns", &DeviceSpec::sync_latency_ns, 0, kMaxNs, "ns"},
    {"aicpu_overhead_ns", &DeviceSpec::aicpu_overhead_ns, 0, kMaxNs, "ns"},
    {"aicpu_flops", &DeviceSpec::aicpu_flops, 1e6, kMaxRate, "flop/s"},
    {"ranks_per_node", &DeviceSpec::ranks_per_node, 1, 65536, "devices"},
    {"intra_node_link_bandwidth", &DeviceSpec::intra_node_link_bandwidth, 1e6, kMaxRate, "bytes/s"},
    {"inter_node_bandwidth", &DeviceSpec::inter_node_bandwidth, 1e6, kMaxRate, "bytes/s"},
    {"p2p_bandwidth", &DeviceSpec::p2p_bandwidth, 1e6, kMaxRate, "bytes/s"},
    {"collective_latency_ns", &DeviceSpec::collective_latency_ns, 0, kMaxNs, "ns"},
    {"default_overflow_mode", &DeviceSpec::default_overflow_mode},
    {"supports_inf_nan", &DeviceSpec::supports_inf_nan},
    {"default_precision_mode", &DeviceSpec::default_precision_mode},
};

bool is_numeric(const Field& f) { return f.min != 0 || f.max != 0; }

// 4096 as "4096", 1e15 as "1e15", 0.01 as "0.01": short and exact for the table's values.
std::string format_bound(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e5) return std::to_string(static_cast<long long>(v));
  std::ostringstream out;
  out << v;
  std::string s = out.str();  // "1e+06" -> "1e6"
  if (const auto e = s.find("e+"); e != std::string::npos) {
    std::size_t digits = e + 2;
    while (digits + 1 < s.size() && s[digits] == '0') ++digits;
    s = s.substr(0, e + 1) + s.substr(digits);
  }
  return s;
}

std::string range_text(const Field& f) {
  return "[" + format_bound(f.min) + ", " + format_bound(f.max) + "] " + f.unit;
}

double numeric_value(const DeviceSpec& spec, const Field& f) {
  return std::visit(
      [&](auto member) -> double {
        using T = std::remove_reference_t<decltype(spec.*member)>;
        if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
          return static_cast<double>(spec.*member);
        } else {
          return 0;
        }
      },
      f.ref);
}

std::string field_names() {
  std::string out;
  for (const auto& f : kFields) out += (out.empty() ? "" : ", ") + std::string(f.name);
  return out;
}

void set_field(DeviceSpec& spec, const Field& field, const nlohmann::json& value, const std::string& file) {
  auto bad = [&](const char* wanted) {
    const std::string range = is_numeric(field) ? " in " + range_text(field) : "";
    return SpecError(file + ": field '" + field.name + "' must be " + wanted + range + ", got " + value.dump());
  };
  std::visit(
      [&](auto member) {
        using T = std::remove_reference_t<decltype(spec.*member)>;
        if constexpr (std::is_same_v<T, bool>) {
          if (!value.is_boolean()) throw bad("true or false");
          spec.*member = value.get<bool>();
        } else if constexpr (std::is_same_v<T, std::string>) {
          if (!value.is_string()) throw bad("a string");
          spec.*member = value.get<std::string>();
        } else if constexpr (std::is_same_v<T, OverflowMode> || std::is_same_v<T, PrecisionMode>) {
          if (!value.is_string()) throw bad("a string");
          try {
            if constexpr (std::is_same_v<T, OverflowMode>) {
              spec.*member = parse_overflow_mode(value.get<std::string>());
            } else {
              spec.*member = parse_precision_mode(value.get<std::string>());
            }
          } catch (const InvalidArgument& e) {
            throw SpecError(file + ": field '" + field.name + "': " + e.what());
          }
        } else if constexpr (std::is_floating_point_v<T>) {
          if (!value.is_number()) throw bad("a number");
          spec.*member = value.get<double>();
        } else {
          // Integral values only (68719476736.0 is fine, 2.5 is not), within the field's range.
          if (!value.is_number()) throw bad("an integer");
          const double v = value.get<double>();
          if (!(v >= 0) || v != std::floor(v) || !(v < static_cast<double>(std::numeric_limits<T>::max()) + 1.0)) {
            throw bad("an integer");
          }
          spec.*member = value.is_number_unsigned() ? static_cast<T>(value.get<std::uint64_t>()) : static_cast<T>(v);
        }
      },
      field.ref);
}

}  // namespace

namespace {

// Every preset, in the order help texts list them. ascend910b is the 910B2 it always modelled, under
// the name earlier traces and spec files use.
struct Preset {
  const char* name;
  DeviceSpec (*make)();
};
constexpr Preset kPresets[] = {{"ascend910b", ascend910b},   {"ascend910b1", ascend910b1},
                               {"ascend910b2", ascend910b2}, {"ascend910b3", ascend910b3},
                               {"ascend910b4", ascend910b4}, {"ascend910", ascend910},
                               {"ascend310p", ascend310p},   {"tiny", tiny}};

std::string preset_list() {
  std::string out;
  for (const Preset& p : kPresets) out += (out.empty() ? "" : ", ") + std::string(p.name);
  return out;
}

}  // namespace

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const Preset& p : kPresets) names.emplace_back(p.name);
  return names;
}

bool is_preset(std::string_view name) {
  return std::any_of(std::begin(kPresets), std::end(kPresets), [&](const Preset& p) { return name == p.name; });
}

DeviceSpec preset_spec(std::string_view name) {
  for (const Preset& p : kPresets) {
    if (name == p.name) return p.make();
  }
  throw SpecError("unknown device preset '" + std::string(name) + "': use one of " + preset_list() +
                  ", or the path of a JSON spec file");
}

void validate_spec(const DeviceSpec& s) {
  for (const Field& f : kFields) {
    if (!is_numeric(f)) continue;
    const double v = numeric_value(s, f);
    if (!(v >= f.min && v <= f.max)) {
      std::ostringstream got;
      got << v;
      throw SpecError("device spec '" + s.name + "': " + f.name + " = " + got.str() + " is out of range " +
                      range_text(f) + "; set it within the range (see docs/emulator.md \"Spec value ranges\")");
    }
  }
  if (!s.supports_inf_nan && s.default_overflow_mode == OverflowMode::kInfNan) {
    throw SpecError("device spec '" + s.name + "': default_overflow_mode is inf_nan but supports_inf_nan is false");
  }
}

namespace {

const Field& numeric_field(std::string_view name) {
  for (const Field& f : kFields) {
    if (name == f.name && is_numeric(f)) return f;
  }
  throw SpecError("'" + std::string(name) + "' is not a numeric device spec field (fields: " + field_names() + ")");
}

}  // namespace

std::vector<std::string> spec_numeric_fields() {
  std::vector<std::string> names;
  for (const Field& f : kFields) {
    if (is_numeric(f)) names.emplace_back(f.name);
  }
  return names;
}

double spec_field(const DeviceSpec& spec, std::string_view field) { return numeric_value(spec, numeric_field(field)); }

void set_spec_field(DeviceSpec& spec, std::string_view field, double value) {
  std::visit(
      [&](auto member) {
        using T = std::remove_reference_t<decltype(spec.*member)>;
        if constexpr (std::is_floating_point_v<T>) {
          spec.*member = value;
        } else if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
          spec.*member = static_cast<T>(std::llround(std::max(0.0, value)));
        }
      },
      numeric_field(field).ref);
}

SpecFieldInfo spec_field_info(std::string_view field) {
  const Field& f = numeric_field(field);
  return {f.min, f.max, !std::holds_alternative<double DeviceSpec::*>(f.ref)};
}

std::string spec_ranges_markdown() {
  std::string out = "| field | min | max | unit |\n|---|---|---|---|\n";
  for (const Field& f : kFields) {
    if (!is_numeric(f)) continue;
    out += std::string("| `") + f.name + "` | " + format_bound(f.min) + " | " + format_bound(f.max) + " | " + f.unit +
           " |\n";
  }
  return out;
}

DeviceSpec load_spec(std::string_view preset_or_path) {
  if (is_preset(preset_or_path)) return preset_spec(preset_or_path);
  const std::string file(preset_or_path);
  std::ifstream in(file);
  if (!in) {
    throw SpecError("cannot open device spec '" + file + "': not a preset (" + preset_list() +
                    ") and not a readable file");
  }
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw SpecError(file + ": not valid JSON (" + e.what() + ")");
  }
  if (!doc.is_object()) throw SpecError(file + ": the spec must be a JSON object");

  if (doc.contains("base") && !doc["base"].is_string()) throw SpecError(file + ": 'base' must be a preset name");
  DeviceSpec spec;
  try {
    spec = preset_spec(doc.contains("base") ? doc["base"].get<std::string>() : "ascend910b");
  } catch (const SpecError& e) {
    throw SpecError(file + ": 'base': " + e.what());
  }
  spec.name = file;
  for (const auto& [key, value] : doc.items()) {
    if (key == "base") continue;
    const Field* field = nullptr;
    for (const auto& f : kFields) {
      if (key == f.name) field = &f;
    }
    if (field == nullptr) throw SpecError(file + ": unknown field '" + key + "' (fields: " + field_names() + ")");
    set_field(spec, *field, value, file);
  }
  DeviceSpec named = spec;
  named.name = file;  // errors name the file even when the spec renames itself
  validate_spec(named);
  return spec;
}

}  // namespace npuscope::emulator

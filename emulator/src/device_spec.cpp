// Device presets and spec files. Every figure is approximate; sources are in shared/REFERENCE.md
// (CANN platform config files quoted publicly, vendor datasheets) and noted beside each value.
#include "npuscope/emulator/device_spec.h"

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
  s.memory_bandwidth = 1.6e12;   // unconfirmed
  s.host_link_bandwidth = 25e9;  // PCIe 4.0 x16, practical
  s.ub_bytes = 192 * kKiB;
  s.l0a_bytes = 64 * kKiB;
  s.l0b_bytes = 64 * kKiB;
  s.l0c_bytes = 128 * kKiB;
  s.l1_bytes = 512 * kKiB;
  s.l2_bytes = 192 * kMiB;
  s.launch_latency_ns = 3000;
  s.kernel_overhead_ns = 1500;
  s.copy_overhead_ns = 2000;
  s.host_launch_ns = 8000;  // HTA: typical CPU launch cost 5-20 us
  s.aicpu_overhead_ns = 20000;
  s.aicpu_flops = 4e9;
  s.default_overflow_mode = OverflowMode::kInfNan;  // INF_NAN is the 910B default
  s.supports_inf_nan = true;
  s.default_precision_mode = PrecisionMode::kMustKeepOriginDtype;
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
  return s;
}

// One table of the spec's fields, used to read files (and to list the names in errors).
using FieldRef = std::variant<int DeviceSpec::*, double DeviceSpec::*, std::uint64_t DeviceSpec::*, bool DeviceSpec::*,
                              std::string DeviceSpec::*, OverflowMode DeviceSpec::*, PrecisionMode DeviceSpec::*>;
struct Field {
  const char* name;
  FieldRef ref;
};
const Field kFields[] = {
    {"name", &DeviceSpec::name},
    {"description", &DeviceSpec::description},
    {"cube_cores", &DeviceSpec::cube_cores},
    {"vector_cores", &DeviceSpec::vector_cores},
    {"clock_hz", &DeviceSpec::clock_hz},
    {"cube_m", &DeviceSpec::cube_m},
    {"cube_n", &DeviceSpec::cube_n},
    {"cube_k", &DeviceSpec::cube_k},
    {"cube_fp32", &DeviceSpec::cube_fp32},
    {"bf16", &DeviceSpec::bf16},
    {"vector_flops_per_cycle_f16", &DeviceSpec::vector_flops_per_cycle_f16},
    {"cube_efficiency", &DeviceSpec::cube_efficiency},
    {"vector_efficiency", &DeviceSpec::vector_efficiency},
    {"memory_bytes", &DeviceSpec::memory_bytes},
    {"memory_bandwidth", &DeviceSpec::memory_bandwidth},
    {"host_link_bandwidth", &DeviceSpec::host_link_bandwidth},
    {"ub_bytes", &DeviceSpec::ub_bytes},
    {"l0a_bytes", &DeviceSpec::l0a_bytes},
    {"l0b_bytes", &DeviceSpec::l0b_bytes},
    {"l0c_bytes", &DeviceSpec::l0c_bytes},
    {"l1_bytes", &DeviceSpec::l1_bytes},
    {"l2_bytes", &DeviceSpec::l2_bytes},
    {"launch_latency_ns", &DeviceSpec::launch_latency_ns},
    {"kernel_overhead_ns", &DeviceSpec::kernel_overhead_ns},
    {"copy_overhead_ns", &DeviceSpec::copy_overhead_ns},
    {"host_launch_ns", &DeviceSpec::host_launch_ns},
    {"aicpu_overhead_ns", &DeviceSpec::aicpu_overhead_ns},
    {"aicpu_flops", &DeviceSpec::aicpu_flops},
    {"default_overflow_mode", &DeviceSpec::default_overflow_mode},
    {"supports_inf_nan", &DeviceSpec::supports_inf_nan},
    {"default_precision_mode", &DeviceSpec::default_precision_mode},
};

std::string field_names() {
  std::string out;
  for (const auto& f : kFields) out += (out.empty() ? "" : ", ") + std::string(f.name);
  return out;
}

void set_field(DeviceSpec& spec, const Field& field, const nlohmann::json& value, const std::string& file) {
  auto bad = [&](const char* wanted) {
    return SpecError(file + ": field '" + field.name + "' must be " + wanted + ", got " + value.dump());
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
          if (!value.is_number()) throw bad("a non-negative integer");
          const double v = value.get<double>();
          if (!(v >= 0) || v != std::floor(v) || !(v < static_cast<double>(std::numeric_limits<T>::max()) + 1.0)) {
            throw bad("a non-negative integer");
          }
          spec.*member = value.is_number_unsigned() ? static_cast<T>(value.get<std::uint64_t>()) : static_cast<T>(v);
        }
      },
      field.ref);
}

}  // namespace

std::vector<std::string> preset_names() { return {"ascend910b", "ascend910", "ascend310p", "tiny"}; }

DeviceSpec preset_spec(std::string_view name) {
  if (name == "ascend910b") return ascend910b();
  if (name == "ascend910") return ascend910();
  if (name == "ascend310p") return ascend310p();
  if (name == "tiny") return tiny();
  throw SpecError("unknown device preset '" + std::string(name) +
                  "': use ascend910b, ascend910, ascend310p or tiny, or the path of a JSON spec file");
}

void validate_spec(const DeviceSpec& s) {
  auto positive = [&](double v, const char* field) {
    if (!(v > 0)) throw SpecError("device spec '" + s.name + "': " + field + " must be positive");
  };
  positive(s.cube_cores, "cube_cores");
  positive(s.vector_cores, "vector_cores");
  positive(s.clock_hz, "clock_hz");
  positive(s.cube_m, "cube_m");
  positive(s.cube_n, "cube_n");
  positive(s.cube_k, "cube_k");
  positive(s.vector_flops_per_cycle_f16, "vector_flops_per_cycle_f16");
  positive(s.cube_efficiency, "cube_efficiency");
  positive(s.vector_efficiency, "vector_efficiency");
  positive(static_cast<double>(s.memory_bytes), "memory_bytes");
  positive(s.memory_bandwidth, "memory_bandwidth");
  positive(s.host_link_bandwidth, "host_link_bandwidth");
  positive(s.aicpu_flops, "aicpu_flops");
  if (s.cube_efficiency > 1 || s.vector_efficiency > 1) {
    throw SpecError("device spec '" + s.name + "': efficiencies must be at most 1");
  }
  if (!s.supports_inf_nan && s.default_overflow_mode == OverflowMode::kInfNan) {
    throw SpecError("device spec '" + s.name + "': default_overflow_mode is inf_nan but supports_inf_nan is false");
  }
}

DeviceSpec load_spec(std::string_view preset_or_path) {
  for (const auto& preset : preset_names()) {
    if (preset == preset_or_path) return preset_spec(preset_or_path);
  }
  const std::string file(preset_or_path);
  std::ifstream in(file);
  if (!in) {
    throw SpecError("cannot open device spec '" + file +
                    "': not a preset (ascend910b, ascend910, ascend310p, tiny) and not a readable file");
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
  validate_spec(spec);
  return spec;
}

}  // namespace npuscope::emulator

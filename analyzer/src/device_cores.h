// A device's cube and vector core counts: DEVICE_INFO's, or for a real profile that did not record
// them, what its device name says (msprof-analyze's block dim check reads them from the profile's
// info.json; the db export has only NPU_INFO's name).
#pragma once

#include <cstdint>
#include <string_view>

#include "npuscope/collector/trace_rows.h"

namespace npuscope::analyzer {

struct CoreCounts {
  std::int32_t cube = 0, vector = 0;  // 0: unknown
};

// Ascend910B, Ascend910B1..B4 (B1/B2 24 AI cores, B3/B4 20, two vector cores each: shared/REFERENCE.md,
// emulator/src/device_spec.cpp), Ascend910 (32 AI cores, their vector units); unknown otherwise.
inline CoreCounts core_counts(const collector::DeviceInfoRow& d) {
  if (d.cube_cores > 0) return {d.cube_cores, d.vector_cores};
  std::string_view n = d.name;
  if (n.starts_with("Ascend")) n.remove_prefix(6);
  if (n == "910B" || n == "910B1" || n == "910B2") return {24, 48};  // 910B: the A2's 910B2, as the emulator
  if (n == "910B3" || n == "910B4") return {20, 40};
  if (n == "910" || n == "910A" || n == "910ProB") return {32, 0};
  return {};
}

}  // namespace npuscope::analyzer

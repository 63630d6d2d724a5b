// NPU numerics settings, with CANN's names (see DESIGN.md "Numerics").
#pragma once

#include <cstdint>
#include <string_view>

namespace npuscope::emulator {

// ATC / torch_npu precision modes. Values are stored in traces: never renumber.
enum class PrecisionMode : std::uint8_t {
  kForceFp16 = 0,            // every f32 op computes in f16
  kAllowFp32ToFp16 = 1,      // f32 cube ops run in f16 where the cube has no f32 path
  kAllowMixPrecision = 2,    // cube and most vector ops f16; precision-sensitive ops stay f32
  kMustKeepOriginDtype = 3,  // never lower precision (an op the device cannot run falls back to AI CPU)
};

// aclrtFloatOverflowMode.
enum class OverflowMode : std::uint8_t {
  kInfNan = 0,      // IEEE results: overflow gives ±inf, invalid gives NaN
  kSaturation = 1,  // ±inf -> ±max of the dtype, NaN -> 0, and the float status flag is raised
};

std::string_view precision_mode_name(PrecisionMode m);
std::string_view overflow_mode_name(OverflowMode m);
// Throw InvalidArgument naming the accepted values.
PrecisionMode parse_precision_mode(std::string_view s);
OverflowMode parse_overflow_mode(std::string_view s);

}  // namespace npuscope::emulator

#include "npuscope/emulator/numerics.h"

#include <string>

#include "npuscope/emulator/errors.h"

namespace npuscope::emulator {

std::string_view precision_mode_name(PrecisionMode m) {
  switch (m) {
    case PrecisionMode::kForceFp16: return "force_fp16";
    case PrecisionMode::kAllowFp32ToFp16: return "allow_fp32_to_fp16";
    case PrecisionMode::kAllowMixPrecision: return "allow_mix_precision";
    case PrecisionMode::kMustKeepOriginDtype: return "must_keep_origin_dtype";
  }
  return "?";
}

std::string_view overflow_mode_name(OverflowMode m) { return m == OverflowMode::kInfNan ? "inf_nan" : "saturation"; }

PrecisionMode parse_precision_mode(std::string_view s) {
  for (auto m : {PrecisionMode::kForceFp16, PrecisionMode::kAllowFp32ToFp16, PrecisionMode::kAllowMixPrecision,
                 PrecisionMode::kMustKeepOriginDtype}) {
    if (precision_mode_name(m) == s) return m;
  }
  throw InvalidArgument("unknown precision mode '" + std::string(s) +
                        "': expected force_fp16, allow_fp32_to_fp16, allow_mix_precision or must_keep_origin_dtype");
}

OverflowMode parse_overflow_mode(std::string_view s) {
  if (s == "inf_nan" || s == "INF_NAN") return OverflowMode::kInfNan;
  if (s == "saturation" || s == "SATURATION") return OverflowMode::kSaturation;
  throw InvalidArgument("unknown overflow mode '" + std::string(s) + "': expected inf_nan or saturation");
}

}  // namespace npuscope::emulator

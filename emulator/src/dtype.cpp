#include "npuscope/emulator/dtype.h"

#include <limits>
#include <string>

#include "npuscope/emulator/errors.h"

namespace npuscope::emulator {

DType parse_dtype(std::string_view name) {
  if (const auto t = find_dtype(name)) return *t;
  std::string known;
  for (const DTypeInfo& d : kDTypes) known += (known.empty() ? "" : ", ") + std::string(d.name);
  throw InvalidArgument("unknown dtype '" + std::string(name) + "': expected one of " + known);
}

double dtype_max(DType t) {
  switch (t) {
    case DType::kF32: return std::numeric_limits<float>::max();
    case DType::kF16: return 65504.0;
    case DType::kBF16: return 3.3895313892515355e38;  // (2 - 2^-7) * 2^127
    case DType::kF64: return std::numeric_limits<double>::max();
    case DType::kI8: return 127;
    case DType::kU8: return 255;
    case DType::kI32: return 2147483647.0;
    case DType::kI64: return 9.2233720368547758e18;
    case DType::kBool: return 1;
  }
  return 0;
}

}  // namespace npuscope::emulator

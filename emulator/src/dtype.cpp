#include "npuscope/emulator/dtype.h"

#include <limits>
#include <string>

#include "npuscope/emulator/errors.h"

namespace npuscope::emulator {

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::kF32: return "f32";
    case DType::kF16: return "f16";
    case DType::kBF16: return "bf16";
    case DType::kI8: return "i8";
    case DType::kU8: return "u8";
    case DType::kI32: return "i32";
    case DType::kI64: return "i64";
    case DType::kBool: return "bool";
    case DType::kF64: return "f64";
  }
  return "?";
}

DType parse_dtype(std::string_view name) {
  struct Alias {
    std::string_view name;
    DType dtype;
  };
  static constexpr Alias kAliases[] = {
      {"f32", DType::kF32},  {"float32", DType::kF32},  {"float", DType::kF32},    {"fp32", DType::kF32},
      {"f16", DType::kF16},  {"float16", DType::kF16},  {"half", DType::kF16},     {"fp16", DType::kF16},
      {"bf16", DType::kBF16}, {"bfloat16", DType::kBF16}, {"i8", DType::kI8},      {"int8", DType::kI8},
      {"u8", DType::kU8},    {"uint8", DType::kU8},     {"i32", DType::kI32},      {"int32", DType::kI32},
      {"i64", DType::kI64},  {"int64", DType::kI64},    {"bool", DType::kBool},    {"f64", DType::kF64},
      {"float64", DType::kF64}, {"double", DType::kF64}, {"fp64", DType::kF64},
  };
  for (const auto& a : kAliases) {
    if (a.name == name) return a.dtype;
  }
  throw InvalidArgument("unknown dtype '" + std::string(name) +
                        "': expected one of f32, f16, bf16, i8, u8, i32, i64, bool, f64");
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

// Element types of emulated tensors. Values are stored in traces (TENSOR.dtype): never renumber.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace npuscope::emulator {

enum class DType : std::uint8_t {
  kF32 = 0,
  kF16 = 1,
  kBF16 = 2,
  kI8 = 3,
  kU8 = 4,
  kI32 = 5,
  kI64 = 6,
  kBool = 7,
  kF64 = 8,  // CPU golden side only
};
inline constexpr int kNumDTypes = 9;

constexpr std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::kF32: return 4;
    case DType::kF16: return 2;
    case DType::kBF16: return 2;
    case DType::kI8: return 1;
    case DType::kU8: return 1;
    case DType::kI32: return 4;
    case DType::kI64: return 8;
    case DType::kBool: return 1;
    case DType::kF64: return 8;
  }
  return 0;
}

constexpr bool is_floating(DType t) {
  return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16 || t == DType::kF64;
}

// Short lower-case names, as numpy and ONNX users read them: "f32", "f16", "bf16", ...
std::string_view dtype_name(DType t);
// Accepts our names and the common aliases ("float32", "float16", "half", "bfloat16", "int64"...).
// Throws InvalidArgument for anything else.
DType parse_dtype(std::string_view name);

// Largest finite value of a floating dtype (saturation target).
double dtype_max(DType t);

}  // namespace npuscope::emulator

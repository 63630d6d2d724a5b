// Exact IEEE binary16 -> float (subnormals, Inf, NaN) and the F16C check: shared by the emulator
// (float16.cpp) and the injection library (tensor statistics), which must not link the emulator.
#pragma once

#include <cstdint>
#include <cstring>

namespace npuscope::hooks {

inline float half_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t mant = h & 0x3ffu;
  std::uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    int e = -1;
    do {
      ++e;
      mant <<= 1;
    } while ((mant & 0x400u) == 0);
    bits = sign | static_cast<std::uint32_t>(112 - e) << 23 | ((mant & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// True when the CPU has the F16C (and AVX) instructions for bulk half conversions.
inline bool cpu_has_f16c() {
  static const bool value = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
  return value;
}

}  // namespace npuscope::hooks

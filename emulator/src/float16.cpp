// f16 conversions. The scalar routines are exact software implementations (round to nearest even,
// subnormals, inf/NaN); the bulk routines use F16C (VCVTPS2PH / VCVTPH2PS) when the CPU has it.
#include "npuscope/emulator/float16.h"

#include <immintrin.h>

#include "npuscope/runtime_hooks/half_bits.h"

namespace npuscope::emulator {

std::uint16_t float_to_half_bits(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));  // NaN
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds to inf (>= 65520)
  if (abs < 0x38800000u) {  // below the smallest normal half (2^-14): subnormal or zero
    if (abs < 0x33000000u) return static_cast<std::uint16_t>(sign);  // < 2^-25 rounds to 0 (2^-25 ties to 0)
    const std::uint32_t exp = abs >> 23;
    const std::uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    const std::uint32_t shift = 126 - exp;  // 14 + (127 - exp) - 1 + ... aligns to 2^-24 units
    std::uint32_t half = mant >> shift;
    const std::uint32_t rem = mant & ((1u << shift) - 1);
    const std::uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half & 1u))) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  // Normal: rebias exponent and round the mantissa to 10 bits.
  std::uint32_t h = ((abs - 0x38000000u) >> 13);
  const std::uint32_t rem = abs & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<std::uint16_t>(sign | h);
}

float half_bits_to_float(std::uint16_t h) { return hooks::half_bits_to_float(h); }

bool has_f16c() { return hooks::cpu_has_f16c(); }

__attribute__((target("f16c,avx"))) static void half_to_float_f16c(const std::uint16_t* src, float* dst,
                                                                   std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) dst[i] = half_bits_to_float(src[i]);
}

__attribute__((target("f16c,avx"))) static void float_to_half_f16c(const float* src, std::uint16_t* dst,
                                                                   std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
  }
  for (; i < n; ++i) dst[i] = float_to_half_bits(src[i]);
}

void half_to_float_n(const std::uint16_t* src, float* dst, std::size_t n) {
  if (has_f16c()) return half_to_float_f16c(src, dst, n);
  for (std::size_t i = 0; i < n; ++i) dst[i] = half_bits_to_float(src[i]);
}

void float_to_half_n(const float* src, std::uint16_t* dst, std::size_t n) {
  if (has_f16c()) return float_to_half_f16c(src, dst, n);
  for (std::size_t i = 0; i < n; ++i) dst[i] = float_to_half_bits(src[i]);
}

void bf16_to_float_n(const std::uint16_t* src, float* dst, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = bf16_bits_to_float(src[i]);
}

void float_to_bf16_n(const float* src, std::uint16_t* dst, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = float_to_bf16_bits(src[i]);
}

}  // namespace npuscope::emulator

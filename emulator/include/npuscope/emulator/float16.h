// IEEE binary16 and bfloat16 conversions, round-to-nearest-even, with NaN kept quiet.
//
// The scalar versions are exact software routines (used on edge cases and by tests); the bulk
// versions use the CPU's F16C instructions when present (checked once at run time) and the
// software routine otherwise. bf16 bulk conversion is plain integer arithmetic, vectorised by the
// compiler.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace npuscope::emulator {

std::uint16_t float_to_half_bits(float f);
float half_bits_to_float(std::uint16_t h);

inline std::uint16_t float_to_bf16_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even; overflow rounds to inf as IEEE does
  return static_cast<std::uint16_t>(u >> 16);
}

inline float bf16_bits_to_float(std::uint16_t h) {
  std::uint32_t u = static_cast<std::uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Rounds a float to the nearest f16 / bf16 value and back (the value an f16 store would keep).
inline float round_to_half(float f) { return half_bits_to_float(float_to_half_bits(f)); }
inline float round_to_bf16(float f) { return bf16_bits_to_float(float_to_bf16_bits(f)); }

void half_to_float_n(const std::uint16_t* src, float* dst, std::size_t n);
void float_to_half_n(const float* src, std::uint16_t* dst, std::size_t n);
void bf16_to_float_n(const std::uint16_t* src, float* dst, std::size_t n);
void float_to_bf16_n(const float* src, std::uint16_t* dst, std::size_t n);

// True when the bulk half conversions use F16C instructions on this CPU.
bool has_f16c();

}  // namespace npuscope::emulator

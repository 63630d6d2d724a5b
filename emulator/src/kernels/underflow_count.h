// Branch-free counts of results narrowed to f16/bf16 that lost all or most of their value
// (Note [Underflow counts] in kernel_util.h). Each loop is a compare per element summed into
// integers, which the compiler vectorises, run over a block the caller has just converted.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

namespace npuscope::emulator::kernels {

struct UnderflowCount {
  std::int64_t flushed = 0;    // finite non-zero wide value, zero narrowed value
  std::int64_t subnormal = 0;  // narrowed value subnormal (its exponent bits all zero, not zero)
};

// `wide` converted to `bits` (f16 when `half`, else bf16).
inline void count_narrowed(const float* wide, const std::uint16_t* bits, std::size_t n, bool half, UnderflowCount& c) {
  const std::uint16_t exponent = half ? 0x7c00u : 0x7f80u;
  std::int64_t flushed = 0, subnormal = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t w = std::bit_cast<std::uint32_t>(wide[i]) & 0x7fffffffu;
    const std::uint16_t b = bits[i] & 0x7fffu;
    flushed += static_cast<std::int64_t>((b == 0) & (w != 0));
    subnormal += static_cast<std::int64_t>((b != 0) & ((b & exponent) == 0));
  }
  c.flushed += flushed;
  c.subnormal += subnormal;
}

// One wide value `x` (double or float) and its narrowed value `r`; `min_normal` of the narrow dtype.
template <class T>
inline void count_narrowed_one(T x, float r, float min_normal, UnderflowCount& c) {
  const float a = r < 0 ? -r : r;
  c.flushed += static_cast<std::int64_t>((a == 0.0f) & (x != T(0)));
  c.subnormal += static_cast<std::int64_t>((a != 0.0f) & (a < min_normal));
}

}  // namespace npuscope::emulator::kernels

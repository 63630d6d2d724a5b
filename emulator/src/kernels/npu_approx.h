// The approximations an NPU vector kernel uses where the CPU golden uses the exact function (see
// DESIGN.md "Numerics"). Kept in one header so that kernels and tests name the same formulas.
//
// Note [NPU Gelu]
// Ascend's Gelu kernel evaluates the tanh form 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) and the
// tanh itself as a rational (Padé) approximant, in f32; the golden is the exact erf form
// 0.5·x·(1 + erf(x/√2)) in f64. The [7/6] Padé approximant of tanh grows like x/28 for large x, so it
// is clamped to ±1 beyond kPadeTanhClamp, where it first reaches 1. Measured on [-6, 6]: the Padé
// tanh differs from tanh by at most ≈1e-4, which moves Gelu by at most ≈1.8e-4; the tanh form
// itself differs from the erf form by at most ≈4.7e-4.
#pragma once

#include <cmath>

namespace npuscope::emulator::kernels {

// The point where the [7/6] Padé tanh reaches 1 (tanh(4.97) ≈ 0.99990).
inline constexpr double kPadeTanhClamp = 4.971786858528162;

// tanh(x) ≈ x(135135 + 17325x² + 378x⁴ + x⁶) / (135135 + 62370x² + 3150x⁴ + 28x⁶), clamped to ±1.
template <class T>
T pade_tanh(T x) {
  if (x >= T(kPadeTanhClamp)) return T(1);
  if (x <= T(-kPadeTanhClamp)) return T(-1);
  if (x != x) return x;
  const T x2 = x * x;
  const T num = x * (T(135135) + x2 * (T(17325) + x2 * (T(378) + x2)));
  const T den = T(135135) + x2 * (T(62370) + x2 * (T(3150) + x2 * T(28)));
  return num / den;
}

// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) with the given tanh.
template <class T, class Tanh>
T gelu_tanh_form(T x, Tanh tanh_fn) {
  constexpr T kSqrt2OverPi = T(0.7978845608028654);
  const T u = kSqrt2OverPi * (x + T(0.044715) * x * x * x);
  return T(0.5) * x * (T(1) + tanh_fn(u));
}

// x / (1 + e^(−1.702·x)): the sigmoid approximation of Gelu (FastGelu on both backends).
template <class T>
T fast_gelu(T x) {
  return x / (T(1) + std::exp(T(-1.702) * x));
}

}  // namespace npuscope::emulator::kernels

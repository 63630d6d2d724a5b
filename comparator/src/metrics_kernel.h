// The inner loops of compare_tensors (Note [Tensor metrics kernel] in tensor_metrics.cpp): sums,
// maxima and counts over one block of element pairs. Private to the comparator.
#pragma once

#include <cstddef>
#include <cstdint>

#include "npuscope/comparator/tensor_metrics.h"

namespace npuscope::comparator {

// Elements per block: a block of each side, decoded, fits in L1 with room to spare.
inline constexpr std::size_t kBlock = 2048;

// The cosine's "norm ~ 0" bound: float64's machine epsilon, 2^-52, as msprobe (Const.FLOAT_EPSILON =
// np.finfo(float).eps). Also RelErr's eps (relative_error_eps) when either side is f64 or no float.
inline constexpr double kEps = 2.220446049250313e-16;
// RelErr's eps when both sides are floats of 32 bits or fewer: float32's machine epsilon, 2^-23.
inline constexpr double kF32Eps = 1.1920928955078125e-07;

struct BlockSums {
  double nb = 0, nn = 0, bb = 0, dd = 0;  // sum n*b, n^2, b^2, (n - b)^2
  double max_abs = 0, max_rel = 0;        // max |n - b|, max RelErr
  std::int64_t rel_below_1e3 = 0;         // elements with RelErr < 0.001
  std::int64_t rel_below_5e3 = 0;         // ... < 0.005
  std::int64_t allclose_violations = 0;   // |n - b| > atol + rtol * |b|
};

// The block's sums, maxima and counts, assuming finite values: a NaN or Inf on either side makes
// `nn` or `bb` non-finite, which is how the caller knows to run zero_nan_inf and call again.
// `rel_eps` is RelErr's eps, added to both sides where b == 0 (relative_error_eps in
// tensor_metrics.cpp). Results do not depend on the instruction set the CPU offers (same lanes, same
// order, no FMA).
void block_sums(const float* n, const float* b, std::size_t count, const Tolerance& tol, double rel_eps,
                BlockSums& out);
void block_sums(const double* n, const double* b, std::size_t count, const Tolerance& tol, double rel_eps,
                BlockSums& out);

struct NanInfCounts {
  std::int64_t matched = 0;     // NaN with NaN, +inf with +inf, -inf with -inf
  std::int64_t mismatched = 0;  // anything else where either side is NaN/Inf
};

// Copies a block into out_n / out_b with 0 on both sides wherever either side is NaN or Inf
// (msprobe zeroes matched positions; mismatched ones make the comparison impossible anyway).
void zero_nan_inf(const float* n, const float* b, std::size_t count, float* out_n, float* out_b, NanInfCounts& c);
void zero_nan_inf(const double* n, const double* b, std::size_t count, double* out_n, double* out_b, NanInfCounts& c);

}  // namespace npuscope::comparator

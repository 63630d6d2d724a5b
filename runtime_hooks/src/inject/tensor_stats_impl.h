// Internals of tensor_stats.cpp shared with its AVX2 kernel (tensor_stats_avx2.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace npuscope::inject {

inline constexpr double kInfD = std::numeric_limits<double>::infinity();

// Running totals over the elements seen so far (Note [Tensor statistics]): sums, squares, min and
// max over the finite ones; n counts all, nan and inf the non-finite ones.
struct Acc {
  double sum = 0, sq = 0;
  double min = kInfD, max = -kInfD;
  std::int64_t n = 0, nan = 0, inf = 0;

  void merge(double s, double q, double lo, double hi, std::int64_t count, std::int64_t nans, std::int64_t infs) {
    sum += s;
    sq += q;
    min = std::min(min, lo);
    max = std::max(max, hi);
    n += count;
    nan += nans;
    inf += infs;
  }
};

// f32 elements into `acc` with AVX2 (the caller checks the CPU has it).
void accumulate_f32_avx2(const float* x, std::size_t n, Acc& acc);

}  // namespace npuscope::inject

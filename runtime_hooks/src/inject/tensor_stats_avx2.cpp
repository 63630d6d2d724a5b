// The f32 statistics loop with AVX2: 16 elements per step, sums and squares in f64 over eight
// independent accumulators (so no add waits for the previous one), min/max in f32. NaN and Inf are
// rare: a step with one takes a slower branch that counts them and masks them out. About 7x the
// portable loop (0.24 ns per element, from cache or memory, on the development machine).
#include <immintrin.h>

#include <cfloat>
#include <cmath>
#include <limits>

#include "tensor_stats_impl.h"

namespace npuscope::inject {
namespace {

struct Sums {
  __m256d s[4], q[4];
};

__attribute__((target("avx2"))) inline void add_f64(Sums& t, __m256 a, __m256 b) {
  const __m256d v[4] = {_mm256_cvtps_pd(_mm256_castps256_ps128(a)), _mm256_cvtps_pd(_mm256_extractf128_ps(a, 1)),
                        _mm256_cvtps_pd(_mm256_castps256_ps128(b)), _mm256_cvtps_pd(_mm256_extractf128_ps(b, 1))};
  for (int k = 0; k < 4; ++k) {
    t.s[k] = _mm256_add_pd(t.s[k], v[k]);
    t.q[k] = _mm256_add_pd(t.q[k], _mm256_mul_pd(v[k], v[k]));
  }
}

__attribute__((target("avx2"))) inline int count(__m256 mask) { return __builtin_popcount(_mm256_movemask_ps(mask)); }

}  // namespace

__attribute__((target("avx2"))) void accumulate_f32_avx2(const float* x, std::size_t n, Acc& acc) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 max_finite = _mm256_set1_ps(FLT_MAX);
  const __m256 pos_inf = _mm256_set1_ps(std::numeric_limits<float>::infinity());
  const __m256 neg_inf = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  Sums t;
  for (int k = 0; k < 4; ++k) t.s[k] = t.q[k] = _mm256_setzero_pd();
  __m256 lo = pos_inf, hi = neg_inf;
  std::int64_t nans = 0, non_finite = 0;
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256 a = _mm256_loadu_ps(x + i);
    __m256 b = _mm256_loadu_ps(x + i + 8);
    const __m256 fa = _mm256_cmp_ps(_mm256_and_ps(a, abs_mask), max_finite, _CMP_LE_OQ);  // finite lanes
    const __m256 fb = _mm256_cmp_ps(_mm256_and_ps(b, abs_mask), max_finite, _CMP_LE_OQ);
    if (_mm256_movemask_ps(_mm256_and_ps(fa, fb)) != 0xff) [[unlikely]] {
      non_finite += 16 - count(fa) - count(fb);
      nans += count(_mm256_cmp_ps(a, a, _CMP_UNORD_Q)) + count(_mm256_cmp_ps(b, b, _CMP_UNORD_Q));
      lo = _mm256_min_ps(lo, _mm256_min_ps(_mm256_blendv_ps(pos_inf, a, fa), _mm256_blendv_ps(pos_inf, b, fb)));
      hi = _mm256_max_ps(hi, _mm256_max_ps(_mm256_blendv_ps(neg_inf, a, fa), _mm256_blendv_ps(neg_inf, b, fb)));
      a = _mm256_and_ps(a, fa);  // non-finite lanes add 0
      b = _mm256_and_ps(b, fb);
    } else {
      lo = _mm256_min_ps(lo, _mm256_min_ps(a, b));
      hi = _mm256_max_ps(hi, _mm256_max_ps(a, b));
    }
    add_f64(t, a, b);
  }
  alignas(32) double s[4], q[4];
  alignas(32) float l[8], h[8];
  _mm256_store_pd(s, _mm256_add_pd(_mm256_add_pd(t.s[0], t.s[1]), _mm256_add_pd(t.s[2], t.s[3])));
  _mm256_store_pd(q, _mm256_add_pd(_mm256_add_pd(t.q[0], t.q[1]), _mm256_add_pd(t.q[2], t.q[3])));
  _mm256_store_ps(l, lo);
  _mm256_store_ps(h, hi);
  double lo_all = kInfD, hi_all = -kInfD;
  for (int k = 0; k < 8; ++k) {
    lo_all = std::min<double>(lo_all, l[k]);
    hi_all = std::max<double>(hi_all, h[k]);
  }
  acc.merge(s[0] + s[1] + s[2] + s[3], q[0] + q[1] + q[2] + q[3], lo_all, hi_all, static_cast<std::int64_t>(i), nans,
            non_finite - nans);
  for (; i < n; ++i) {  // the tail
    const float v = x[i];
    const bool finite = std::fabs(v) <= FLT_MAX;
    const double f = finite ? v : 0.0;
    acc.merge(f, f * f, finite ? f : kInfD, finite ? f : -kInfD, 1, v != v ? 1 : 0, !finite && v == v ? 1 : 0);
  }
}

}  // namespace npuscope::inject

// Note [Vector math] in vector_math.h.
#include "vector_math.h"

#include <immintrin.h>

#include <cmath>

#include "kernel_util.h"

// libmvec's names (the x86_64 vector function ABI): 'd' = AVX2, N8/N4 = lanes, v = one vector argument.
extern "C" {
[[gnu::target("avx2")]] __m256 _ZGVdN8v_expf(__m256);
[[gnu::target("avx2")]] __m256d _ZGVdN4v_exp(__m256d);
[[gnu::target("avx2")]] __m256 _ZGVdN8v_tanhf(__m256);
[[gnu::target("avx2")]] __m256d _ZGVdN4v_tanh(__m256d);
[[gnu::target("avx2")]] __m256d _ZGVdN4v_erf(__m256d);
[[gnu::target("avx2")]] __m256 _ZGVdN8v_erff(__m256);
}

namespace npuscope::emulator::kernels {
namespace {

// One lane type's loads, stores and the vector calls, for the loops below.
struct F8 {
  using T = float;
  static constexpr int kLanes = 8;
  [[gnu::target("avx2")]] static __m256 load(const float* p) { return _mm256_loadu_ps(p); }
  [[gnu::target("avx2")]] static void store(float* p, __m256 v) { _mm256_storeu_ps(p, v); }
  [[gnu::target("avx2")]] static __m256 exp(__m256 v) { return _ZGVdN8v_expf(v); }
  [[gnu::target("avx2")]] static __m256 tanh(__m256 v) { return _ZGVdN8v_tanhf(v); }
  [[gnu::target("avx2")]] static __m256 erf(__m256 v) { return _ZGVdN8v_erff(v); }
  [[gnu::target("avx2")]] static __m256 sigmoid(__m256 v) {
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 e = _ZGVdN8v_expf(_mm256_sub_ps(_mm256_setzero_ps(), v));
    return _mm256_div_ps(one, _mm256_add_ps(one, e));
  }
};
struct D4 {
  using T = double;
  static constexpr int kLanes = 4;
  [[gnu::target("avx2")]] static __m256d load(const double* p) { return _mm256_loadu_pd(p); }
  [[gnu::target("avx2")]] static void store(double* p, __m256d v) { _mm256_storeu_pd(p, v); }
  [[gnu::target("avx2")]] static __m256d exp(__m256d v) { return _ZGVdN4v_exp(v); }
  [[gnu::target("avx2")]] static __m256d tanh(__m256d v) { return _ZGVdN4v_tanh(v); }
  [[gnu::target("avx2")]] static __m256d erf(__m256d v) { return _ZGVdN4v_erf(v); }
  [[gnu::target("avx2")]] static __m256d sigmoid(__m256d v) {
    const __m256d one = _mm256_set1_pd(1.0);
    const __m256d e = _ZGVdN4v_exp(_mm256_sub_pd(_mm256_setzero_pd(), v));
    return _mm256_div_pd(one, _mm256_add_pd(one, e));
  }
};

enum class Fn { kExp, kTanh, kSigmoid, kErf };

template <Fn F, class T>
T scalar(T x) {
  if constexpr (F == Fn::kExp) return std::exp(x);
  if constexpr (F == Fn::kTanh) return std::tanh(x);
  if constexpr (F == Fn::kSigmoid) return T(1) / (T(1) + std::exp(-x));
  if constexpr (F == Fn::kErf) return std::erf(x);
}

// r[j] = F(a[j]) by whole vectors, then the scalar call for the tail.
template <Fn F, class L>
[[gnu::target("avx2")]] void map_avx2(const typename L::T* a, typename L::T* r, std::int64_t m) {
  std::int64_t j = 0;
  for (; j + L::kLanes <= m; j += L::kLanes) {
    const auto v = L::load(a + j);
    if constexpr (F == Fn::kExp) L::store(r + j, L::exp(v));
    if constexpr (F == Fn::kTanh) L::store(r + j, L::tanh(v));
    if constexpr (F == Fn::kSigmoid) L::store(r + j, L::sigmoid(v));
    if constexpr (F == Fn::kErf) L::store(r + j, L::erf(v));
  }
  for (; j < m; ++j) r[j] = scalar<F>(a[j]);
}

template <Fn F, class L>
void map(const typename L::T* a, typename L::T* r, std::int64_t m) {
  if (cpu_has_avx2()) return map_avx2<F, L>(a, r, m);
  for (std::int64_t j = 0; j < m; ++j) r[j] = scalar<F>(a[j]);
}

}  // namespace

void exp_n(const float* a, float* r, std::int64_t m) { map<Fn::kExp, F8>(a, r, m); }
void exp_n(const double* a, double* r, std::int64_t m) { map<Fn::kExp, D4>(a, r, m); }
void tanh_n(const float* a, float* r, std::int64_t m) { map<Fn::kTanh, F8>(a, r, m); }
void tanh_n(const double* a, double* r, std::int64_t m) { map<Fn::kTanh, D4>(a, r, m); }
void sigmoid_n(const float* a, float* r, std::int64_t m) { map<Fn::kSigmoid, F8>(a, r, m); }
void sigmoid_n(const double* a, double* r, std::int64_t m) { map<Fn::kSigmoid, D4>(a, r, m); }
void erf_n(const float* a, float* r, std::int64_t m) { map<Fn::kErf, F8>(a, r, m); }
void erf_n(const double* a, double* r, std::int64_t m) { map<Fn::kErf, D4>(a, r, m); }

}  // namespace npuscope::emulator::kernels

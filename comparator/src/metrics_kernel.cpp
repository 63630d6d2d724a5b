// The metrics kernel: one pass over a block with four f64 lanes (GCC vector extensions, so that the
// same source compiles to SSE2 or AVX2), picked at run time by what the CPU has. See Note [Tensor
// metrics kernel] in tensor_metrics.cpp.
#include "metrics_kernel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

namespace npuscope::comparator {

namespace {

// The helpers below take and return 32-byte vectors but are always inlined into one caller of one
// instruction set, so no call ever crosses the SSE/AVX ABI difference GCC warns about.
#pragma GCC diagnostic ignored "-Wpsabi"

using V4d = double __attribute__((vector_size(32)));
using V4i = std::int64_t __attribute__((vector_size(32)));
using V2d = double __attribute__((vector_size(16)));
using V2i = std::int64_t __attribute__((vector_size(16)));

template <class V>
struct IntOf;
template <>
struct IntOf<V4d> {
  using type = V4i;
};
template <>
struct IntOf<V2d> {
  using type = V2i;
};

// Four logical lanes: element i goes to lane i % 4, whatever the vector width (one V4d with AVX2,
// two V2d with SSE2, which keeps every accumulator in a register), so both versions add in the
// same order and give the same bits.
constexpr std::size_t kLanes = 4;

// Elements as doubles, element by element: GCC turns it into VCVTPS2PD ymm (AVX) or CVTPS2PD
// (SSE2); __builtin_convertvector on a float vector goes through the stack under AVX2.
template <class V, class T>
[[gnu::always_inline]] inline V load(const T* p) {
  const auto d = [p](std::size_t k) { return static_cast<double>(p[k]); };
  if constexpr (sizeof(V) == 4 * sizeof(double))
    return V{d(0), d(1), d(2), d(3)};
  else
    return V{d(0), d(1)};
}

template <class V>
[[gnu::always_inline]] inline V abs_of(const V& x) {
  using VI = typename IntOf<V>::type;
  return reinterpret_cast<V>(reinterpret_cast<VI>(x) & INT64_MAX);
}

// Per-lane accumulators of BlockSums. Comparison results are 0 / -1 per lane, hence the `-=`.
template <class V>
struct Lanes {
  using VI = typename IntOf<V>::type;
  static constexpr std::size_t kWidth = sizeof(V) / sizeof(double);
  static constexpr std::size_t kParts = kLanes / kWidth;

  V nb[kParts]{}, nn[kParts]{}, bb[kParts]{}, dd[kParts]{}, max_abs[kParts]{}, max_rel[kParts]{};
  VI below_1e3[kParts]{}, below_5e3[kParts]{}, violations[kParts]{};

  // Elements n[0..4) and b[0..4).
  template <class T>
  [[gnu::always_inline]] void add(const T* n, const T* b, const V& rtol, const V& atol, const V& eps) {
    for (std::size_t p = 0; p < kParts; ++p)
      add_part(p, load<V>(n + p * kWidth), load<V>(b + p * kWidth), rtol, atol, eps);
  }

  [[gnu::always_inline]] void add_part(std::size_t p, const V& n, const V& b, const V& rtol, const V& atol,
                                       const V& eps) {
    const V d = n - b;
    nb[p] += n * b;
    nn[p] += n * n;
    bb[p] += b * b;
    dd[p] += d * d;
    const V ad = abs_of(d);
    max_abs[p] = ad > max_abs[p] ? ad : max_abs[p];
    // RelErr: eps on both sides where b == 0, as msprobe computes it: |(n + e) - (b + e)| / |b + e|.
    const V e = reinterpret_cast<V>(reinterpret_cast<VI>(b == 0.0) & reinterpret_cast<VI>(eps));
    const V be = b + e;
    const V rel = abs_of((n + e) - be) / abs_of(be);
    max_rel[p] = rel > max_rel[p] ? rel : max_rel[p];
    below_1e3[p] -= reinterpret_cast<VI>(rel < 0.001);
    below_5e3[p] -= reinterpret_cast<VI>(rel < 0.005);
    violations[p] -= reinterpret_cast<VI>(ad > atol + rtol * abs_of(b));
  }

  template <class A>
  [[gnu::always_inline]] static auto lane(const A (&a)[kParts], std::size_t k) {
    return a[k / kWidth][k % kWidth];
  }
  [[gnu::always_inline]] static double sum(const V (&a)[kParts]) {
    return (lane(a, 0) + lane(a, 1)) + (lane(a, 2) + lane(a, 3));
  }
  [[gnu::always_inline]] static std::int64_t sum(const VI (&a)[kParts]) {
    return lane(a, 0) + lane(a, 1) + lane(a, 2) + lane(a, 3);
  }
  [[gnu::always_inline]] static double max(const V (&a)[kParts]) {
    const double x = std::max(lane(a, 0), lane(a, 1)), y = std::max(lane(a, 2), lane(a, 3));
    return std::max(x, y);
  }
};

template <class V, class T>
[[gnu::always_inline]] inline void sums_body(const T* n, const T* b, std::size_t count, const Tolerance& tol,
                                             double rel_eps, BlockSums& out) {
  const V rtol = V{} + tol.rtol, atol = V{} + tol.atol, eps = V{} + rel_eps;
  Lanes<V> l;
  std::size_t i = 0;
  for (; i + kLanes <= count; i += kLanes) l.add(n + i, b + i, rtol, atol, eps);
  const std::size_t rest = count - i;
  if (rest != 0) {
    // The tail padded with 0 == 0 pairs: they add nothing but a RelErr of 0, taken back below.
    T tail_n[kLanes] = {}, tail_b[kLanes] = {};
    std::memcpy(tail_n, n + i, rest * sizeof(T));
    std::memcpy(tail_b, b + i, rest * sizeof(T));
    l.add(tail_n, tail_b, rtol, atol, eps);
  }
  const auto pad = static_cast<std::int64_t>(rest == 0 ? 0 : kLanes - rest);
  out.nb = l.sum(l.nb);
  out.nn = l.sum(l.nn);
  out.bb = l.sum(l.bb);
  out.dd = l.sum(l.dd);
  out.max_abs = l.max(l.max_abs);
  out.max_rel = l.max(l.max_rel);
  out.rel_below_1e3 = l.sum(l.below_1e3) - pad;
  out.rel_below_5e3 = l.sum(l.below_5e3) - pad;
  out.allclose_violations = l.sum(l.violations);
}

template <class T>
using SumsFn = void (*)(const T*, const T*, std::size_t, const Tolerance&, double, BlockSums&);

template <class T>
void sums_generic(const T* n, const T* b, std::size_t count, const Tolerance& tol, double rel_eps, BlockSums& out) {
  sums_body<V2d>(n, b, count, tol, rel_eps, out);
}

// AVX2 without FMA on purpose: g++ contracts a * b + c into an FMA wherever the target has one, and
// one rounding fewer would make this version's sums and allclose bound differ from the generic one's.
template <class T>
__attribute__((target("avx2"))) void sums_avx2(const T* n, const T* b, std::size_t count, const Tolerance& tol,
                                               double rel_eps, BlockSums& out) {
  sums_body<V4d>(n, b, count, tol, rel_eps, out);
}

bool cpu_has_avx2() {
  static const bool value = __builtin_cpu_supports("avx2");
  return value;
}

template <class T>
SumsFn<T> pick_sums() {
  return cpu_has_avx2() ? &sums_avx2<T> : &sums_generic<T>;
}

template <class T>
void zero_body(const T* n, const T* b, std::size_t count, T* out_n, T* out_b, NanInfCounts& c) {
  for (std::size_t i = 0; i < count; ++i) {
    const T x = n[i], y = b[i];
    if (std::isfinite(x) && std::isfinite(y)) [[likely]] {
      out_n[i] = x;
      out_b[i] = y;
      continue;
    }
    const bool same = (std::isnan(x) && std::isnan(y)) || x == y;  // x == y: the same infinity
    ++(same ? c.matched : c.mismatched);
    out_n[i] = 0;
    out_b[i] = 0;
  }
}

}  // namespace

void block_sums(const float* n, const float* b, std::size_t count, const Tolerance& tol, double rel_eps,
                BlockSums& out) {
  static const SumsFn<float> fn = pick_sums<float>();
  fn(n, b, count, tol, rel_eps, out);
}

void block_sums(const double* n, const double* b, std::size_t count, const Tolerance& tol, double rel_eps,
                BlockSums& out) {
  static const SumsFn<double> fn = pick_sums<double>();
  fn(n, b, count, tol, rel_eps, out);
}

void zero_nan_inf(const float* n, const float* b, std::size_t count, float* out_n, float* out_b, NanInfCounts& c) {
  zero_body(n, b, count, out_n, out_b, c);
}

void zero_nan_inf(const double* n, const double* b, std::size_t count, double* out_n, double* out_b, NanInfCounts& c) {
  zero_body(n, b, count, out_n, out_b, c);
}

}  // namespace npuscope::comparator

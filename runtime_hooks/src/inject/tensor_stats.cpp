// See Note [Tensor statistics] in tensor_stats.h.
#include "tensor_stats.h"

#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>

namespace npuscope::inject {
namespace {

constexpr float kInfF = std::numeric_limits<float>::infinity();
constexpr double kInfD = std::numeric_limits<double>::infinity();
constexpr std::size_t kBlock = 1024;  // f16/bf16 elements widened per block (4 KiB of f32 on the stack)

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

void accumulate_f32(const float* x, std::size_t n, Acc& acc) {
  double sum = 0, sq = 0;
  float lo = kInfF, hi = -kInfF;
  std::int64_t nan = 0, inf = 0;
#pragma omp simd reduction(+ : sum, sq, nan, inf) reduction(min : lo) reduction(max : hi)
  for (std::size_t i = 0; i < n; ++i) {
    const float v = x[i];
    const bool finite = std::fabs(v) <= FLT_MAX;  // false for Inf and NaN
    const bool is_nan = v != v;
    nan += is_nan ? 1 : 0;
    inf += (!finite && !is_nan) ? 1 : 0;
    const double f = finite ? v : 0.0f;
    sum += f;
    sq += f * f;
    lo = std::min(lo, finite ? v : kInfF);
    hi = std::max(hi, finite ? v : -kInfF);
  }
  acc.merge(sum, sq, lo, hi, static_cast<std::int64_t>(n), nan, inf);
}

void accumulate_f64(const double* x, std::size_t n, Acc& acc) {
  double sum = 0, sq = 0, lo = kInfD, hi = -kInfD;
  std::int64_t nan = 0, inf = 0;
#pragma omp simd reduction(+ : sum, sq, nan, inf) reduction(min : lo) reduction(max : hi)
  for (std::size_t i = 0; i < n; ++i) {
    const double v = x[i];
    const bool finite = std::fabs(v) <= DBL_MAX;
    const bool is_nan = v != v;
    nan += is_nan ? 1 : 0;
    inf += (!finite && !is_nan) ? 1 : 0;
    const double f = finite ? v : 0.0;
    sum += f;
    sq += f * f;
    lo = std::min(lo, finite ? v : kInfD);
    hi = std::max(hi, finite ? v : -kInfD);
  }
  acc.merge(sum, sq, lo, hi, static_cast<std::int64_t>(n), nan, inf);
}

template <class T>
void accumulate_int(const T* x, std::size_t n, Acc& acc) {
  double sum = 0, sq = 0, lo = kInfD, hi = -kInfD;
#pragma omp simd reduction(+ : sum, sq) reduction(min : lo) reduction(max : hi)
  for (std::size_t i = 0; i < n; ++i) {
    const double v = static_cast<double>(x[i]);
    sum += v;
    sq += v * v;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  acc.merge(sum, sq, lo, hi, static_cast<std::int64_t>(n), 0, 0);
}

// Exact software f16 -> f32 (subnormals, Inf, NaN), for CPUs without F16C and block tails.
float half_to_float(std::uint16_t h) {
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

bool has_f16c() {
  static const bool value = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
  return value;
}

__attribute__((target("f16c,avx"))) void half_block_f16c(const std::uint16_t* src, float* dst, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) dst[i] = half_to_float(src[i]);
}

void half_block(const std::uint16_t* src, float* dst, std::size_t n) {
  if (has_f16c()) return half_block_f16c(src, dst, n);
  for (std::size_t i = 0; i < n; ++i) dst[i] = half_to_float(src[i]);
}

void bf16_block(const std::uint16_t* src, float* dst, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = std::bit_cast<float>(static_cast<std::uint32_t>(src[i]) << 16);
}

template <void (*Widen)(const std::uint16_t*, float*, std::size_t)>
void accumulate_16(const std::uint16_t* x, std::size_t n, Acc& acc) {
  alignas(64) float buf[kBlock];
  for (std::size_t i = 0; i < n; i += kBlock) {
    const std::size_t m = std::min(kBlock, n - i);
    Widen(x + i, buf, m);
    accumulate_f32(buf, m, acc);
  }
}

}  // namespace

std::uint32_t elem_size(std::uint8_t dtype) {
  switch (static_cast<ElemType>(dtype)) {
    case ElemType::kF32: return 4;
    case ElemType::kF16: return 2;
    case ElemType::kBF16: return 2;
    case ElemType::kI8: return 1;
    case ElemType::kU8: return 1;
    case ElemType::kI32: return 4;
    case ElemType::kI64: return 8;
    case ElemType::kBool: return 1;
    case ElemType::kF64: return 8;
  }
  return 0;
}

TensorStats compute_stats(const void* data, std::uint64_t bytes, std::uint8_t dtype) {
  TensorStats out;
  const std::uint32_t size = elem_size(dtype);
  if (size == 0 || data == nullptr) return out;
  const std::size_t n = bytes / size;
  Acc acc;
  switch (static_cast<ElemType>(dtype)) {
    case ElemType::kF32: accumulate_f32(static_cast<const float*>(data), n, acc); break;
    case ElemType::kF16: accumulate_16<half_block>(static_cast<const std::uint16_t*>(data), n, acc); break;
    case ElemType::kBF16: accumulate_16<bf16_block>(static_cast<const std::uint16_t*>(data), n, acc); break;
    case ElemType::kF64: accumulate_f64(static_cast<const double*>(data), n, acc); break;
    case ElemType::kI8: accumulate_int(static_cast<const std::int8_t*>(data), n, acc); break;
    case ElemType::kU8:
    case ElemType::kBool: accumulate_int(static_cast<const std::uint8_t*>(data), n, acc); break;
    case ElemType::kI32: accumulate_int(static_cast<const std::int32_t*>(data), n, acc); break;
    case ElemType::kI64: accumulate_int(static_cast<const std::int64_t*>(data), n, acc); break;
  }
  out.numel = acc.n;
  out.nan_count = acc.nan;
  out.inf_count = acc.inf;
  const std::int64_t finite = acc.n - acc.nan - acc.inf;
  if (finite > 0) {
    out.min = acc.min;
    out.max = acc.max;
    out.mean = acc.sum / static_cast<double>(finite);
    out.l2norm = std::sqrt(acc.sq);
  }
  return out;
}

}  // namespace npuscope::inject

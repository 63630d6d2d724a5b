// See Note [Tensor statistics] in tensor_stats.h.
#include "tensor_stats.h"

#include "npuscope/runtime_hooks/half_bits.h"

#include "tensor_stats_impl.h"

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

constexpr std::size_t kBlock = 1024;  // f16/bf16 elements widened per block (4 KiB of f32 on the stack)

// The portable loops keep kLanes independent partial results per quantity, so that no add waits
// for the previous one (a single-accumulator reduction is latency-bound, ~3x slower).
constexpr int kLanes = 16;

template <class T>
void accumulate_float(const T* x, std::size_t n, Acc& acc) {
  constexpr T kInf = std::numeric_limits<T>::infinity();
  double sum[kLanes] = {}, sq[kLanes] = {};
  T lo[kLanes], hi[kLanes];
  std::int64_t nan[kLanes] = {}, inf[kLanes] = {};
  std::fill(lo, lo + kLanes, kInf);
  std::fill(hi, hi + kLanes, -kInf);
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
#pragma GCC unroll 16
    for (int j = 0; j < kLanes; ++j) {
      // NaN and Inf are counted, the finite rest summed (branch-free, for the vectoriser).
      const T v = x[i + j];
      const bool finite = std::fabs(v) <= std::numeric_limits<T>::max();
      const bool is_nan = v != v;
      nan[j] += is_nan;
      inf[j] += !finite && !is_nan;
      const T f = finite ? v : T(0);
      sum[j] += f;
      sq[j] += static_cast<double>(f) * f;
      lo[j] = std::min(lo[j], finite ? v : kInf);
      hi[j] = std::max(hi[j], finite ? v : -kInf);
    }
  }
  for (; i < n; ++i) {  // the tail, into lane 0
    const T v = x[i];
    const bool finite = std::fabs(v) <= std::numeric_limits<T>::max();
    nan[0] += v != v;
    inf[0] += !finite && v == v;
    if (!finite) continue;
    sum[0] += v;
    sq[0] += static_cast<double>(v) * v;
    lo[0] = std::min(lo[0], v);
    hi[0] = std::max(hi[0], v);
  }
  double s = 0, q = 0;
  std::int64_t nans = 0, infs = 0;
  for (int j = 0; j < kLanes; ++j) {
    s += sum[j];
    q += sq[j];
    nans += nan[j];
    infs += inf[j];
  }
  acc.merge(s, q, *std::min_element(lo, lo + kLanes), *std::max_element(hi, hi + kLanes), static_cast<std::int64_t>(n),
            nans, infs);
}

bool has_avx2() {
  static const bool value = __builtin_cpu_supports("avx2");
  return value;
}

// The f32 loop also serves f16 and bf16 (widened in blocks).
void accumulate_f32(const float* x, std::size_t n, Acc& acc) {
  if (has_avx2()) return accumulate_f32_avx2(x, n, acc);
  accumulate_float(x, n, acc);
}

void accumulate_f64(const double* x, std::size_t n, Acc& acc) { accumulate_float(x, n, acc); }

template <class T>
void accumulate_int(const T* x, std::size_t n, Acc& acc) {
  double sum[kLanes] = {}, sq[kLanes] = {}, lo[kLanes], hi[kLanes];
  std::fill(lo, lo + kLanes, kInfD);
  std::fill(hi, hi + kLanes, -kInfD);
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
#pragma GCC unroll 16
    for (int j = 0; j < kLanes; ++j) {
      const double v = static_cast<double>(x[i + j]);
      sum[j] += v;
      sq[j] += v * v;
      lo[j] = std::min(lo[j], v);
      hi[j] = std::max(hi[j], v);
    }
  }
  for (; i < n; ++i) {
    const double v = static_cast<double>(x[i]);
    sum[0] += v;
    sq[0] += v * v;
    lo[0] = std::min(lo[0], v);
    hi[0] = std::max(hi[0], v);
  }
  double s = 0, q = 0;
  for (int j = 0; j < kLanes; ++j) {
    s += sum[j];
    q += sq[j];
  }
  acc.merge(s, q, *std::min_element(lo, lo + kLanes), *std::max_element(hi, hi + kLanes), static_cast<std::int64_t>(n),
            0, 0);
}

__attribute__((target("f16c,avx"))) void half_block_f16c(const std::uint16_t* src, float* dst, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) dst[i] = hooks::half_bits_to_float(src[i]);
}

void half_block(const std::uint16_t* src, float* dst, std::size_t n) {
  if (hooks::cpu_has_f16c()) return half_block_f16c(src, dst, n);
  for (std::size_t i = 0; i < n; ++i) dst[i] = hooks::half_bits_to_float(src[i]);
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
  const auto t = dtype_from_value(dtype);
  return t ? static_cast<std::uint32_t>(dtype_size(*t)) : 0;
}

TensorStats compute_stats(const void* data, std::uint64_t bytes, std::uint8_t dtype) {
  TensorStats out;
  const std::uint32_t size = elem_size(dtype);
  if (size == 0 || data == nullptr) return out;
  const std::size_t n = bytes / size;
  Acc acc;
  switch (static_cast<DType>(dtype)) {
    case DType::kF32: accumulate_f32(static_cast<const float*>(data), n, acc); break;
    case DType::kF16: accumulate_16<half_block>(static_cast<const std::uint16_t*>(data), n, acc); break;
    case DType::kBF16: accumulate_16<bf16_block>(static_cast<const std::uint16_t*>(data), n, acc); break;
    case DType::kF64: accumulate_f64(static_cast<const double*>(data), n, acc); break;
    case DType::kI8: accumulate_int(static_cast<const std::int8_t*>(data), n, acc); break;
    case DType::kU8:
    case DType::kBool: accumulate_int(static_cast<const std::uint8_t*>(data), n, acc); break;
    case DType::kI32: accumulate_int(static_cast<const std::int32_t*>(data), n, acc); break;
    case DType::kI64: accumulate_int(static_cast<const std::int64_t*>(data), n, acc); break;
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

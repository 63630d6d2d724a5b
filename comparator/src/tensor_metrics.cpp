// compare_tensors: msprobe's accuracy metrics of an NPU tensor against its golden counterpart.
//
// Note [Tensor metrics kernel]
// The comparator's hot path: a whole model's dumped tensors go through it, so it streams, in blocks
// of kBlock element pairs, with nothing allocated:
//  - Decoding: a side whose dtype is the kernel's element type (f32 for the float kernel, f64 for the
//    double one) and which is suitably aligned is read in place; any other is decoded into a stack
//    buffer (element_decode.h; f16 through F16C when the CPU has it). The pair is compared from
//    floats when both dtypes fit a float exactly (f32, f16, bf16, i8, u8, bool), from doubles
//    otherwise (i32, i64, f64 on either side). Dtypes may differ: values are compared.
//  - One pass per block (metrics_kernel.h) computes, in f64 on four lanes, Σn·b, Σn², Σb², Σ(n−b)²,
//    max |n−b|, max RelErr, the two RelErr counts and the allclose violations; it is branch-free and
//    vectorised (SSE2, or AVX2 when the CPU has it; both give the same bits).
//  - NaN/Inf cost nothing until present: any of them makes the block's Σn² or Σb² non-finite, and
//    only then is the block copied with NaN/Inf positions zeroed (counting matched and mismatched
//    positions) and summed again.
//  - Block sums are added with Neumaier's compensation, so the sums' error stays that of one block
//    (512 terms a lane) however long the tensor.
//
// Semantics (REFERENCE.md, "Accuracy comparison"), where msprobe leaves a choice:
//  - RelErr adds an eps to both sides where b == 0, so 0 vs 0 is a RelErr of 0 and x vs 0 a large
//    one (|x| / eps). The eps is the machine epsilon of the pair's numpy result type, as msprobe's
//    newest get_relative_err (np.finfo(np.result_type(n, b, np.float32)).eps, after casting
//    non-float arrays to float64; its .pt reader makes bf16 float32): 2^-23 when both sides are
//    f16, bf16 or f32, 2^-52 when either is f64 or an integer or bool (relative_error_eps). Older
//    msprobe (mstt's) added float64's eps whatever the dtype; we follow the newest. The same rule
//    holds for trace-against-trace comparisons: it is msprobe's metric.
//  - A norm <= 2^-52 (float64's machine epsilon, msprobe's Const.FLOAT_EPSILON, whatever the dtype)
//    counts as zero for the cosine.
//  - NaN/Inf must match exactly: NaN with NaN, +inf with +inf, -inf with -inf (msprobe only
//    compares the isnan and isinf masks, so it would also pair +inf with -inf). Matched positions
//    are zeroed on both sides, as msprobe does: they add no error but stay in the element count
//    (RMSE's mean, the RelErr ratios, where their RelErr is 0), and they are equal for allclose.
//  - Cosine is clamped to [-1, 1] (rounding can take n·b a hair past ‖n‖‖b‖); NaN for one element.
//  - RelEuclidean: 0 when Σ(n−b)² and Σb² are both 0, +inf when only Σb² is.
//  - Empty tensors (both 0 elements): comparable, cosine 1, errors 0, ratios 1, allclose.
//  - allclose counts, besides the finite violations, every NaN/Inf position that differs (as
//    torch.allclose with equal_nan=True would); it is false whenever the comparison is impossible.
#include "npuscope/comparator/tensor_metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <type_traits>

#include "element_decode.h"
#include "metrics_kernel.h"

namespace npuscope::comparator {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Neumaier's compensated sum of the block sums.
struct CompensatedSum {
  double sum = 0, comp = 0;
  void add(double x) {
    const double t = sum + x;
    comp += std::fabs(sum) >= std::fabs(x) ? (sum - t) + x : (x - t) + sum;
    sum = t;
  }
  double value() const { return sum + comp; }
};

struct Totals {
  CompensatedSum nb, nn, bb, dd;
  double max_abs = 0, max_rel = 0;
  std::int64_t rel_below_1e3 = 0, rel_below_5e3 = 0, allclose_violations = 0;
  NanInfCounts nan_inf;

  void merge(const BlockSums& s) {
    nb.add(s.nb);
    nn.add(s.nn);
    bb.add(s.bb);
    dd.add(s.dd);
    max_abs = std::max(max_abs, s.max_abs);
    max_rel = std::max(max_rel, s.max_rel);
    rel_below_1e3 += s.rel_below_1e3;
    rel_below_5e3 += s.rel_below_5e3;
    allclose_violations += s.allclose_violations;
  }
};

template <class T>
constexpr DType kNative = std::is_same_v<T, float> ? DType::kF32 : DType::kF64;

// Elements [first, first + count) of a side as T: in place when it already is, else decoded.
template <class T>
const T* block_of(const TensorData& t, std::size_t first, std::size_t count, T* buffer) {
  const auto dtype = static_cast<DType>(t.dtype);
  if (dtype == kNative<T> && reinterpret_cast<std::uintptr_t>(t.data) % alignof(T) == 0)
    return static_cast<const T*>(t.data) + first;
  decode_block(t.data, dtype, first, count, buffer);
  return buffer;
}

// RelErr's eps for a pair (Note [Tensor metrics kernel]).
double relative_error_eps(DType npu, DType golden) {
  const auto narrow_float = [](DType d) { return d == DType::kF16 || d == DType::kBF16 || d == DType::kF32; };
  return narrow_float(npu) && narrow_float(golden) ? kF32Eps : kEps;
}

template <class T>
void accumulate(const TensorData& npu, const TensorData& golden, const Tolerance& tol, Totals& totals) {
  const double rel_eps = relative_error_eps(static_cast<DType>(npu.dtype), static_cast<DType>(golden.dtype));
  alignas(64) T decoded_n[kBlock], decoded_b[kBlock], zeroed_n[kBlock], zeroed_b[kBlock];
  for (std::size_t first = 0; first < npu.numel; first += kBlock) {
    const std::size_t count = std::min(kBlock, npu.numel - first);
    const T* n = block_of(npu, first, count, decoded_n);
    const T* b = block_of(golden, first, count, decoded_b);
    BlockSums s;
    block_sums(n, b, count, tol, rel_eps, s);
    if (!std::isfinite(s.nn + s.bb)) [[unlikely]] {
      zero_nan_inf(n, b, count, zeroed_n, zeroed_b, totals.nan_inf);
      block_sums(zeroed_n, zeroed_b, count, tol, rel_eps, s);
    }
    totals.merge(s);
  }
}

// `why` through a fixed buffer: std::string's allocation is the only thing here that could throw.
template <class... Args>
void set_why(TensorMetrics& m, const char* format, Args... args) {
  char text[160];
  std::snprintf(text, sizeof text, format, args...);
  try {
    m.why = text;
  } catch (...) {  // out of memory: the numbers still say n/a
  }
}

TensorMetrics& not_comparable(TensorMetrics& m) {
  m.comparable = false;
  m.cosine = m.max_abs_err = m.max_rel_err = m.one_thousandth_ratio = m.five_thousandth_ratio = kNaN;
  m.rmse = m.euclidean = m.rel_euclidean = kNaN;
  m.allclose = false;
  return m;
}

// False, with `why`, when the pair cannot be compared at all (checked before reading any element).
bool check_inputs(const TensorData& npu, const TensorData& golden, TensorMetrics& m) {
  for (const auto* t : {&npu, &golden}) {
    const char* side = t == &npu ? "NPU" : "golden";
    if (!known_dtype(t->dtype)) {
      set_why(m, "unknown %s dtype %d", side, static_cast<int>(t->dtype));
      return false;
    }
  }
  if (npu.numel != golden.numel) {
    set_why(m, "element counts differ: NPU %zu, golden %zu", npu.numel, golden.numel);
    return false;
  }
  for (const auto* t : {&npu, &golden}) {
    const char* side = t == &npu ? "NPU" : "golden";
    if (t->numel != 0 && t->data == nullptr) {
      set_why(m, "no %s data for %zu elements", side, t->numel);
      return false;
    }
    // The kernel's boundary: it reads numel elements of the dtype and never more than `bytes`.
    const std::size_t size = dtype_size(static_cast<DType>(t->dtype));
    if (t->numel > t->bytes / size) {
      set_why(m, "%s data holds %zu bytes, %zu elements of %d bytes need more", side, t->bytes, t->numel,
              static_cast<int>(size));
      return false;
    }
  }
  return true;
}

double cosine(double nb, double nn, double bb, std::size_t numel) {
  if (numel == 1) return kNaN;
  const double norm_n = std::sqrt(nn), norm_b = std::sqrt(bb);
  if (norm_n <= kEps && norm_b <= kEps) return 1.0;
  if (norm_n <= kEps || norm_b <= kEps) return kNaN;
  return std::clamp(nb / (norm_n * norm_b), -1.0, 1.0);
}

void finish(const Totals& t, std::size_t numel, TensorMetrics& m) {
  m.nan_inf_matched = t.nan_inf.matched;
  m.nan_inf_mismatches = t.nan_inf.mismatched;
  m.allclose_mismatches = t.allclose_violations + t.nan_inf.mismatched;
  if (t.nan_inf.mismatched != 0) {
    set_why(m, "NaN/Inf at %lld positions differ", static_cast<long long>(t.nan_inf.mismatched));
    not_comparable(m);
    return;
  }
  m.comparable = true;
  m.allclose = m.allclose_mismatches == 0;
  if (numel == 0) {
    m.cosine = 1.0;
    m.one_thousandth_ratio = m.five_thousandth_ratio = 1.0;
    return;  // errors stay 0
  }
  const double nb = t.nb.value(), nn = t.nn.value(), bb = t.bb.value(), dd = t.dd.value();
  const auto count = static_cast<double>(numel);
  m.cosine = cosine(nb, nn, bb, numel);
  m.max_abs_err = t.max_abs;
  m.max_rel_err = t.max_rel;
  m.one_thousandth_ratio = static_cast<double>(t.rel_below_1e3) / count;
  m.five_thousandth_ratio = static_cast<double>(t.rel_below_5e3) / count;
  m.rmse = std::sqrt(dd / count);
  m.euclidean = std::sqrt(dd);
  m.rel_euclidean = bb != 0 ? std::sqrt(dd / bb) : dd == 0 ? 0.0 : std::numeric_limits<double>::infinity();
}

}  // namespace

TensorMetrics compare_tensors(const TensorData& npu, const TensorData& golden) {
  TensorMetrics m;
  if (!check_inputs(npu, golden, m)) return not_comparable(m);
  const Tolerance tol = allclose_tolerance(golden.dtype);
  Totals totals;
  if (fits_float(static_cast<DType>(npu.dtype)) && fits_float(static_cast<DType>(golden.dtype)))
    accumulate<float>(npu, golden, tol, totals);
  else
    accumulate<double>(npu, golden, tol, totals);
  finish(totals, npu.numel, m);
  return m;
}

}  // namespace npuscope::comparator

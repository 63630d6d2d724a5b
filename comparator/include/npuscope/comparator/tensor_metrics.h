// msprobe's accuracy metrics between an NPU tensor and its golden counterpart (REFERENCE.md,
// "Accuracy comparison"), computed in f64 in one streaming pass over the elements.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace npuscope::comparator {

// A dumped tensor as TENSOR.data holds it once decompressed: raw little-endian elements. `bytes` is
// how many bytes `data` holds: compare_tensors reads at most that many, whatever numel and dtype say.
struct TensorData {
  const void* data = nullptr;
  std::int32_t dtype = 0;  // a DType value (vocabulary.h)
  std::size_t numel = 0;
  std::size_t bytes = 0;
};

// torch.testing.assert_close's defaults for the golden dtype: f16 (1e-3, 1e-5), bf16 (1.6e-2, 1e-5),
// f32 (1.3e-6, 1e-5), f64 (1e-7, 1e-7); integers and bool exact (0, 0).
struct Tolerance {
  double rtol = 0, atol = 0;
};
Tolerance allclose_tolerance(std::int32_t dtype);

struct TensorMetrics {
  // False: the comparison is impossible ("n/a"): different element counts, an unknown dtype, fewer
  // bytes than numel elements of the dtype, or NaN/Inf at different positions. `why` says which; the numbers below are
  // then NaN.
  bool comparable = false;
  std::string why;
  double cosine = 0;                     // NaN when one norm is ~0 or the tensor has one element
  double max_abs_err = 0;                // max |n - b|
  double max_rel_err = 0;                // max |n - b| / |b|, eps added to both where b == 0:
                                         // 2^-23 for f16/bf16/f32 pairs, else 2^-52
  double one_thousandth_ratio = 0;       // fraction of elements with relative error < 0.001
  double five_thousandth_ratio = 0;      // ... < 0.005
  double rmse = 0;                       // sqrt(mean((n - b)^2))
  double euclidean = 0;                  // ||n - b||
  double rel_euclidean = 0;              // sqrt(sum (n - b)^2 / sum b^2); 0 when both are 0
  std::int64_t nan_inf_mismatches = 0;   // positions where exactly one side is NaN/Inf, or they differ
  std::int64_t nan_inf_matched = 0;      // positions with the same NaN/Inf on both sides (zeroed for the metrics)
  bool allclose = false;                 // |n - b| <= atol + rtol * |b| everywhere (golden dtype's tolerance)
  std::int64_t allclose_mismatches = 0;  // elements outside that bound
};

// Never throws: what cannot be compared comes back with comparable == false.
TensorMetrics compare_tensors(const TensorData& npu, const TensorData& golden);

}  // namespace npuscope::comparator

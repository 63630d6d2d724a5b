// Summary statistics of one tensor, computed on the thread that produced it (inside on_tensor,
// while the data is valid): the TENSOR row of dump mode "stats".
//
// Note [Tensor statistics]
// min, max, mean and the L2 norm cover the FINITE elements only; NaN and Inf elements are counted
// instead (nan_count, inf_count), so one Inf does not hide the rest of the tensor. All four are 0
// when no element is finite. Sums accumulate in f64. f16 and bf16 are widened to f32 in blocks (F16C
// when the CPU has it) and run through the same f32 loop: AVX2 when the CPU has it
// (tensor_stats_avx2.cpp, ~0.25 ns per element), else a portable loop. Integer and bool tensors
// have no NaN/Inf.
#pragma once

#include <cstdint>

#include "npuscope/runtime_hooks/vocabulary.h"

namespace npuscope::inject {

// Bytes per element; 0 for a value that is not a known dtype.
std::uint32_t elem_size(std::uint8_t dtype);

struct TensorStats {
  std::int64_t numel = 0;
  double min = 0, max = 0, mean = 0, l2norm = 0;
  std::int64_t nan_count = 0, inf_count = 0;
};

// `bytes` of contiguous elements of `dtype`. An unknown dtype gives numel = 0 and zero stats.
TensorStats compute_stats(const void* data, std::uint64_t bytes, std::uint8_t dtype);

}  // namespace npuscope::inject

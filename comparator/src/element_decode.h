// Raw dumped elements of any dtype -> float or double, a block at a time, for the metrics kernel
// (Note [Tensor metrics kernel] in tensor_metrics.cpp). Private to the comparator.
#pragma once

#include <cstddef>
#include <cstdint>

#include "npuscope/runtime_hooks/vocabulary.h"

namespace npuscope::comparator {

// True for the dtypes the comparator reads (every DType).
inline bool known_dtype(std::int32_t dtype) { return dtype >= 0 && dtype < kNumDTypes; }

// True when every value of the dtype is exactly a float (f32, f16, bf16, i8, u8, bool): the pair is
// then compared from float buffers, which halves the bytes the kernel reads; i32, i64 and f64 need double.
bool fits_float(DType dtype);

// Elements [first, first + count) of `data` (raw little-endian elements of `dtype`) as floats in
// `out`; `dtype` must fit a float. Bool is 0 or 1 (any non-zero byte is true).
void decode_block(const void* data, DType dtype, std::size_t first, std::size_t count, float* out);
// ... as doubles (every dtype).
void decode_block(const void* data, DType dtype, std::size_t first, std::size_t count, double* out);

}  // namespace npuscope::comparator

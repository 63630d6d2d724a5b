// Says "underflow" in a failing tensor's reason when the NPU side is 0 where the golden is not.
//
// Note [Underflow reason]
// A force_fp16 network whose activations fall below f16's smallest subnormal (5.96e-8) ends in
// zeros: the metrics then show a low cosine and a tiny max abs err, which say nothing of the cause.
// For a failing tensor a second, cold pass over the elements counts those that are exactly 0 on
// the NPU where the golden is finite and non-zero. When they carry at least half of the absolute
// error (Σ|golden| over them against Σ|npu − golden|), the reason starts with "underflow:", their
// count and share, and how many of them the golden has below f16's smallest normal (6.1e-5: the
// values f16 flushed here, rather than zeros inherited from an earlier op). In statistics mode the
// NPU tensor being all 0 (max = min = 0) where the golden's norm is not says the same.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "npuscope/collector/trace_rows.h"
#include "npuscope/comparator/tensor_metrics.h"

namespace npuscope::comparator {

struct ZeroedElements {
  std::int64_t zeroed = 0;     // NPU exactly 0, golden finite and non-zero
  std::int64_t below_f16 = 0;  // ... of them, golden below f16's smallest normal
  std::int64_t nonzero = 0;    // golden finite and non-zero
  double zeroed_error = 0;     // Σ |golden| over the zeroed elements
  double total_error = 0;      // Σ |npu − golden| over the finite pairs
};

// Never throws; the data was checked by compare_tensors (same element count, known dtypes).
ZeroedElements count_zeroed(const TensorData& npu, const TensorData& golden);

// "underflow: ..." when the zeroed elements carry at least half of the error, else nullopt.
std::optional<std::string> underflow_reason(const ZeroedElements& z);
std::optional<std::string> underflow_reason(const collector::TensorRow& npu, const collector::TensorRow& golden);

}  // namespace npuscope::comparator

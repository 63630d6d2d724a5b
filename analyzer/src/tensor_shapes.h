// Tensor shapes per task, from the TENSOR rows a `--dump stats` (or tensor) trace has: what the
// shape-based advice (cube alignment, many shapes) reads. Empty for a `--dump none` trace.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "trace_data.h"

namespace npuscope::analyzer {

// The GEMM a cube op computes: batch x (M x K) * (K x N).
struct Mnk {
  std::int64_t m = 0, n = 0, k = 0;
  // Share of the cube's work spent on padding up to 16x16x16 fractals.
  double padding_waste() const;
};

class TensorShapes {
 public:
  explicit TensorShapes(const TraceData& data);
  bool any() const { return !inputs_.empty(); }
  // "2,3;3,4": the input shapes of a task, or null when it has none recorded.
  const std::string* input_signature(std::int64_t task_id) const;
  // M, N, K of a MatMul, BatchMatMul, Gemm or Conv task (from its input and output shapes).
  std::optional<Mnk> matmul_mnk(std::int64_t task_id, const std::string& op_type) const;

 private:
  using Dims = std::vector<std::int64_t>;
  std::unordered_map<std::int64_t, std::vector<Dims>> inputs_, outputs_;
  std::unordered_map<std::int64_t, std::string> signatures_;
};

}  // namespace npuscope::analyzer

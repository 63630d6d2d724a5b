// See Note [Underflow reason] in underflow_reason.h.
#include "underflow_reason.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "element_decode.h"
#include "metrics_kernel.h"

namespace npuscope::comparator {
namespace {

constexpr double kF16MinNormal = 6.103515625e-05;  // 2^-14
constexpr double kUnderflowErrorShare = 0.5;

std::string number(double v, int precision) {
  std::ostringstream s;
  s.precision(precision);
  s << v;
  return s.str();
}

}  // namespace

ZeroedElements count_zeroed(const TensorData& npu, const TensorData& golden) {
  ZeroedElements z;
  double n[kBlock], b[kBlock];
  for (std::size_t first = 0; first < npu.numel; first += kBlock) {
    const std::size_t count = std::min(kBlock, npu.numel - first);
    decode_block(npu.data, static_cast<DType>(npu.dtype), first, count, n);
    decode_block(golden.data, static_cast<DType>(golden.dtype), first, count, b);
    for (std::size_t i = 0; i < count; ++i) {
      if (!std::isfinite(n[i]) || !std::isfinite(b[i])) continue;
      z.total_error += std::fabs(n[i] - b[i]);
      if (b[i] == 0) continue;
      ++z.nonzero;
      if (n[i] != 0) continue;
      ++z.zeroed;
      z.zeroed_error += std::fabs(b[i]);
      z.below_f16 += std::fabs(b[i]) < kF16MinNormal ? 1 : 0;
    }
  }
  return z;
}

std::optional<std::string> underflow_reason(const ZeroedElements& z) {
  if (z.zeroed == 0 || z.zeroed_error < kUnderflowErrorShare * z.total_error) return std::nullopt;
  const double share = z.total_error > 0 ? z.zeroed_error / z.total_error : 1.0;
  std::string r = "underflow: " + std::to_string(z.zeroed) + " of " + std::to_string(z.nonzero) +
                  " non-zero golden elements are 0 on the NPU (" + number(100 * share, 3) + " % of the abs error)";
  if (z.below_f16 > 0) {
    r += ", " + std::to_string(z.below_f16) + " of them below f16's smallest normal 6.1e-05 in the golden";
  } else {
    r += ", the golden's all in f16's range: zeros from an earlier op";
  }
  return r;
}

std::optional<std::string> underflow_reason(const collector::TensorRow& npu, const collector::TensorRow& golden) {
  if (npu.max != 0 || npu.min != 0 || !(golden.l2norm > 0) || npu.nan_count + npu.inf_count > 0) return std::nullopt;
  return "underflow: the NPU tensor is all 0, the golden's is not (norm " + number(golden.l2norm, 4) +
         ", statistics mode)";
}

}  // namespace npuscope::comparator

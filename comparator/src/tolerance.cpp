// allclose tolerances by golden dtype: torch.testing.assert_close's defaults (REFERENCE.md).
#include "npuscope/comparator/tensor_metrics.h"
#include "npuscope/runtime_hooks/vocabulary.h"

namespace npuscope::comparator {

Tolerance allclose_tolerance(std::int32_t dtype) {
  switch (static_cast<DType>(dtype)) {
    case DType::kF16: return {1e-3, 1e-5};
    case DType::kBF16: return {1.6e-2, 1e-5};
    case DType::kF32: return {1.3e-6, 1e-5};
    case DType::kF64: return {1e-7, 1e-7};
    default: return {0, 0};  // integers and bool: exact
  }
}

}  // namespace npuscope::comparator

#include "sample_kernels.h"

namespace npuscope::samples {

std::span<const char* const> sample_kernel_types() {
  static constexpr const char* kTypes[] = {"AddCustom", "GeluCustom", "RmsNormCustom", "MatmulCustom"};
  return kTypes;
}

}  // namespace npuscope::samples

// The sample custom operators of samples/opkit (libnpuscope_sample_kernels): each registers itself
// as an op of the dispatcher when the library loads. A program that links the library calls
// sample_kernel_types() so that the linker keeps it.
#pragma once

#include <span>

namespace npuscope::samples {

// "AddCustom", "GeluCustom", "RmsNormCustom", "MatmulCustom".
std::span<const char* const> sample_kernel_types();

}  // namespace npuscope::samples

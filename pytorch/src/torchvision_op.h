// torchvision's ops as the CPU fallback sees them: at::native::call_fallback_fn takes a description of
// the op's schema, which at::_ops has for aten's ops (NPUSCOPE_FALLBACK in kernel_support.h) and
// TorchvisionOp gives for torchvision's (Note [torchvision on the device] in kernels_torchvision.cpp).
#pragma once

#include "kernel_support.h"

namespace npuscope::pytorch {

// A torchvision op as at::_ops describes an aten op: its name and C++ signature.
template <const char* kName, class Schema>
struct TorchvisionOp {
  static constexpr const char* name = kName;
  static constexpr const char* overload_name = "";
  using schema = Schema;
};

}  // namespace npuscope::pytorch

// Runs torchvision op `op` (a TorchvisionOp) on the CPU fallback, counted and reported as any fallback.
#define TORCHVISION_FALLBACK(op, ...) \
  at::native::call_fallback_fn<&::npuscope::pytorch::cpu_fallback_boxed, op>::call(__VA_ARGS__)

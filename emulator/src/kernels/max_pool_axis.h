// One spatial axis of a max pool with indices, shared by MaxPoolWithArgmax (2-D) and
// MaxPool3DWithArgmax and their gradients: its geometry, its output size and each window's taps.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {

struct MaxPoolAxis {
  std::int64_t in = 0, k = 1, stride = 1, pad = 0, dilation = 1, out = 0;
};

// Sets a.out, PyTorch's output size (ceil_mode: a last window must start inside the input or its
// left padding); throws InvalidArgument naming `op` and `dim` when the pad exceeds half the kernel
// or the output would be empty.
inline void resolve_max_pool_axis(MaxPoolAxis& a, bool ceil_mode, const char* dim, const char* op) {
  if (a.pad > a.k / 2) {
    fail(op, std::string("pad ") + std::to_string(a.pad) + " along " + dim +
                 " should be at most half of the kernel size " + std::to_string(a.k));
  }
  const std::int64_t span = checked_mul(a.dilation, a.k - 1, op, "the dilated kernel size");  // both <= 2^40
  const std::int64_t room = a.in + 2 * a.pad - span - 1 + (ceil_mode ? a.stride - 1 : 0);
  a.out = (room < 0 ? -1 : room / a.stride) + 1;
  if (ceil_mode && a.out > 0 && (a.out - 1) * a.stride >= a.in + a.pad) --a.out;
  if (a.out < 1) {
    fail(op, std::string("output size along ") + dim + " is " + std::to_string(a.out) + " (input " +
                 std::to_string(a.in) + ", kernel " + std::to_string(a.k) + ", pad " + std::to_string(a.pad) +
                 ", dilation " + std::to_string(a.dilation) + "): too small");
  }
}

// The first tap (start + t·dilation >= 0) of output index o along `a`, and the end (exclusive) in the input.
inline std::pair<std::int64_t, std::int64_t> max_pool_window(const MaxPoolAxis& a, std::int64_t o) {
  std::int64_t start = o * a.stride - a.pad;
  const std::int64_t end = std::min(start + (a.k - 1) * a.dilation + 1, a.in);
  while (start < 0) start += a.dilation;
  return {start, end};
}

}  // namespace npuscope::emulator::kernels

// What a training framework reports to the profiler beside its ops: each parameter's gradient
// (msprobe's grad_probe) and each decision of its dynamic loss scaler. The PyTorch device sends
// them (npuscope.torch: grad probe hooks, amp.GradScaler); a trace stores them in GRADIENT and
// LOSS_SCALE. Without a listener every call returns at once.
#pragma once

#include <cstdint>

#include "npuscope/emulator/dtype.h"

namespace npuscope::emulator {

// A gradient's figures: over its finite elements (norm is the L2 norm), zeros and non-finite counted.
struct GradientStats {
  std::int64_t numel = 0;
  double norm = 0, max = 0, min = 0, mean = 0, zero_ratio = 0;
  std::int64_t nan_count = 0, inf_count = 0;
};

// The figures of `numel` contiguous elements of `dtype` (a floating dtype) at host-readable `data`.
GradientStats gradient_stats(const void* data, DType dtype, std::int64_t numel);

// Whether a profiler listens and asked for gradients (`npuscope run --grad-probe`).
bool profiler_wants_gradients() noexcept;
// Whether a profiler listens and asked for the tensors (`npuscope run --dump stats|tensor`).
bool profiler_wants_tensors() noexcept;

// `param` interned (intern / intern_cached); `loss_scale`: the scale the gradient still carries.
void record_gradient(const char* param, std::int64_t step, const GradientStats& stats, double loss_scale);
void record_loss_scale(std::int64_t step, double scale, double next_scale, bool skipped);

}  // namespace npuscope::emulator

// See training_records.h.
#include "npuscope/emulator/training_records.h"

#include <cmath>
#include <limits>
#include <vector>

#include "npuscope/emulator/float16.h"
#include "npuscope/emulator/virtual_clock.h"
#include "npuscope/runtime_hooks/hook_api.h"

namespace npuscope::emulator {
namespace {

// Accumulates in f64 over a block of f32 values.
struct Accumulator {
  GradientStats s;
  double sum = 0, sum_sq = 0;
  std::int64_t zeros = 0, finite = 0;
  double lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();

  void add(const float* v, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      const double x = v[i];
      if (std::isnan(x)) {
        ++s.nan_count;
      } else if (std::isinf(x)) {
        ++s.inf_count;
      } else {
        ++finite;
        zeros += x == 0;
        sum += x;
        sum_sq += x * x;
        lo = x < lo ? x : lo;
        hi = x > hi ? x : hi;
      }
    }
  }

  GradientStats finish(std::int64_t numel) {
    s.numel = numel;
    s.norm = std::sqrt(sum_sq);
    s.mean = finite > 0 ? sum / static_cast<double>(finite) : 0;
    s.min = finite > 0 ? lo : 0;
    s.max = finite > 0 ? hi : 0;
    s.zero_ratio = numel > 0 ? static_cast<double>(zeros) / static_cast<double>(numel) : 0;
    return s;
  }
};

}  // namespace

GradientStats gradient_stats(const void* data, DType dtype, std::int64_t numel) {
  Accumulator acc;
  constexpr std::size_t kBlock = 4096;
  std::vector<float> block;
  const auto n = static_cast<std::size_t>(numel < 0 ? 0 : numel);
  for (std::size_t at = 0; at < n; at += kBlock) {
    const std::size_t m = n - at < kBlock ? n - at : kBlock;
    switch (dtype) {
      case DType::kF32: acc.add(static_cast<const float*>(data) + at, m); break;
      case DType::kF16:
      case DType::kBF16: {
        block.resize(m);
        const auto* bits = static_cast<const std::uint16_t*>(data) + at;
        dtype == DType::kF16 ? half_to_float_n(bits, block.data(), m) : bf16_to_float_n(bits, block.data(), m);
        acc.add(block.data(), m);
        break;
      }
      case DType::kF64: {
        block.resize(m);
        const auto* d = static_cast<const double*>(data) + at;
        for (std::size_t i = 0; i < m; ++i) block[i] = static_cast<float>(d[i]);
        acc.add(block.data(), m);
        break;
      }
      default: return acc.finish(numel);  // not floating: only the count
    }
  }
  return acc.finish(numel);
}

bool profiler_wants_gradients() noexcept {
  const auto* s = hooks::subscriber();
  return s != nullptr && s->wants_gradients && s->on_gradient != nullptr;
}

bool profiler_wants_tensors() noexcept {
  const auto* s = hooks::subscriber();
  return s != nullptr && s->wants_tensors && s->on_tensor != nullptr;
}

void record_gradient(const char* param, std::int64_t step, const GradientStats& s, double loss_scale) {
  const auto* sub = hooks::subscriber();
  if (sub == nullptr || sub->on_gradient == nullptr) return;
  sub->on_gradient(sub->user, {vclock::host_now_ns(), step, param, s.numel, s.norm, s.max, s.min, s.mean, s.zero_ratio,
                               s.nan_count, s.inf_count, loss_scale, vclock::thread_index()});
}

void record_loss_scale(std::int64_t step, double scale, double next_scale, bool skipped) {
  const auto* sub = hooks::subscriber();
  if (sub == nullptr || sub->on_loss_scale == nullptr) return;
  sub->on_loss_scale(sub->user, {vclock::host_now_ns(), step, scale, next_scale, vclock::thread_index(),
                                 static_cast<std::uint8_t>(skipped ? 1 : 0)});
}

}  // namespace npuscope::emulator

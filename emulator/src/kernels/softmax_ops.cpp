// Softmax, LogSoftmax over one axis (ONNX opset 13 semantics). Both subtract the maximum first, so
// large logits do not overflow. NPU: computed in f32 (f32 sums) and rounded to the output dtype once;
// CPU golden: computed in f64.
//
// The tensor is seen as [outer, len, inner] around the axis. inner == 1 (the usual last axis) walks
// contiguous rows; otherwise each step over the axis updates `inner` running values at once, so the
// memory is still read in order.
#include <algorithm>
#include <cmath>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {
namespace {

template <bool kLog>
constexpr const char* op_name() {
  return kLog ? "LogSoftmax" : "Softmax";
}

template <bool kLog>
std::vector<TensorMeta> infer_softmax(std::span<const TensorMeta> in, const Attrs& attrs) {
  require_floating(in, 0, op_name<kLog>());
  normalize_axis(attrs.get_int("axis", -1), static_cast<std::int64_t>(in[0].shape.size()), op_name<kLog>());
  return {{in[0].shape, in[0].dtype}};
}

KernelCost cost_softmax(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  KernelCost c = vector_cost(in, out, 5);  // max, sub, exp, sum, div (or log)
  softmax_terms(c);
  return c;
}

// One contiguous row, in place.
template <bool kLog, class T>
void softmax_row(T* x, std::int64_t len) {
  T m = x[0];
  for (std::int64_t j = 1; j < len; ++j) m = std::max(m, x[j]);
  T sum = 0;
  if constexpr (kLog) {
    for (std::int64_t j = 0; j < len; ++j) sum += std::exp(x[j] - m);
    // (x − m) − log(sum), not x − (m + log(sum)): m + log(sum) would lose log(sum)'s low bits.
    const T lse = std::log(sum);
    for (std::int64_t j = 0; j < len; ++j) x[j] = (x[j] - m) - lse;
  } else {
    for (std::int64_t j = 0; j < len; ++j) sum += (x[j] = std::exp(x[j] - m));
    const T inv = T(1) / sum;
    for (std::int64_t j = 0; j < len; ++j) x[j] *= inv;
  }
}

// One [len, inner] block, in place; m and sum hold `inner` running values.
template <bool kLog, class T>
void softmax_block(T* x, const AxisSplit& s, std::vector<T>& m, std::vector<T>& sum) {
  const std::int64_t inner = s.inner;
  std::copy(x, x + inner, m.begin());
  for (std::int64_t j = 1; j < s.len; ++j) {
    const T* row = x + j * inner;
    for (std::int64_t i = 0; i < inner; ++i) m[i] = std::max(m[i], row[i]);
  }
  std::fill(sum.begin(), sum.end(), T(0));
  for (std::int64_t j = 0; j < s.len; ++j) {
    T* row = x + j * inner;
    for (std::int64_t i = 0; i < inner; ++i) {
      const T e = std::exp(row[i] - m[i]);
      sum[i] += e;
      if constexpr (!kLog) row[i] = e;
    }
  }
  // Turn the sums into what each element needs: log(sum) or the reciprocal.
  for (std::int64_t i = 0; i < inner; ++i) sum[i] = kLog ? std::log(sum[i]) : T(1) / sum[i];
  for (std::int64_t j = 0; j < s.len; ++j) {
    T* row = x + j * inner;
    for (std::int64_t i = 0; i < inner; ++i) {
      if constexpr (kLog)
        row[i] = (row[i] - m[i]) - sum[i];
      else
        row[i] *= sum[i];
    }
  }
}

template <class T, bool kLog>
void softmax_kernel(KernelContext& ctx) {
  const TensorView& xv = ctx.inputs[0];
  const std::int64_t axis =
      normalize_axis(ctx.attrs.get_int("axis", -1), static_cast<std::int64_t>(xv.shape->size()), op_name<kLog>());
  const AxisSplit s = split_at(*xv.shape, axis);
  std::vector<T> x = load<T>(xv, ctx);
  if (s.len > 0 && xv.numel > 0) {
    if (s.inner == 1) {
      for (std::int64_t o = 0; o < s.outer; ++o) softmax_row<kLog>(x.data() + o * s.len, s.len);
    } else {
      std::vector<T> m(static_cast<std::size_t>(s.inner)), sum(static_cast<std::size_t>(s.inner));
      for (std::int64_t o = 0; o < s.outer; ++o) softmax_block<kLog>(x.data() + o * s.len * s.inner, s, m, sum);
    }
  }
  store<T>(ctx.outputs[0], x.data(), ctx);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = "Softmax",
                              .category = OpCategory::kPrecisionSensitive,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_softmax<false>,
                              .cost = cost_softmax});
NPUSCOPE_REGISTER_OP(OpSchema{.type = "LogSoftmax",
                              .category = OpCategory::kPrecisionSensitive,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_softmax<true>,
                              .cost = cost_softmax});

NPUSCOPE_REGISTER_FLOAT_KERNELS("Softmax", softmax_kernel, false);
NPUSCOPE_REGISTER_FLOAT_KERNELS("LogSoftmax", softmax_kernel, true);

}  // namespace npuscope::emulator::kernels

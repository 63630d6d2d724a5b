// Gradients of activations, as aten computes them on the CPU:
//   LogSoftmaxGrad (dy, y = log_softmax(x); axis -1) -> dx = dy − exp(y)·Σ_axis dy
//                  (_log_softmax_backward_data)
//   SoftmaxGrad    (dy, y = softmax(x); axis -1)     -> dx = y·(dy − Σ_axis dy·y)
//                  (_softmax_backward_data)
//   ThresholdGrad  (dy, x; threshold 0.0)            -> dx = x <= threshold ? 0 : dy
//                  (threshold_backward, ReLU's backward; numpy broadcasting)
// NPU: f32 (axis sums over 8 lanes), rounded to the output dtype once; CPU golden: f64. All inputs
// are loaded before the output is stored, so dx may be dy's memory.
#include <cmath>

#include "elementwise_map.h"

namespace npuscope::emulator::kernels {
namespace {

template <bool kLog>
constexpr const char* grad_name() {
  return kLog ? "LogSoftmaxGrad" : "SoftmaxGrad";
}

template <bool kLog>
std::vector<TensorMeta> infer_softmax_grad(std::span<const TensorMeta> in, const Attrs& attrs) {
  const char* op = grad_name<kLog>();
  require_floating(in, 0, op);
  require_same_dtype(in, op);
  if (in[0].shape != in[1].shape) {
    fail(op, "dy " + shape_str(in[0].shape) + " and y " + shape_str(in[1].shape) + " differ in shape");
  }
  normalize_axis(attrs.get_int("axis", -1), static_cast<std::int64_t>(in[0].shape.size()), op);
  return {{in[0].shape, in[0].dtype}};
}

KernelCost cost_softmax_grad(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  KernelCost c = vector_cost(in, out, 4);  // product (or exp), sum, subtract, multiply
  softmax_terms(c);
  return c;
}

// dy and y hold one [len, inner] block; `lanes` is scratch for 8 · inner partial sums. Writes dx
// into dy.
template <bool kLog, class T>
void softmax_grad_block(T* dy, const T* y, const AxisSplit& s, std::vector<T>& lanes) {
  const std::int64_t inner = s.inner;
  auto term = [&](std::int64_t j, std::int64_t i) {
    const std::int64_t at = j * inner + i;
    return kLog ? dy[at] : dy[at] * y[at];
  };
  if (inner == 1) {
    const T sum = lane_sum<T>(s.len, [&](std::int64_t j) { return term(j, 0); });
    lanes[0] = sum;
  } else {
    std::fill(lanes.begin(), lanes.end(), T(0));
    for (std::int64_t j = 0; j < s.len; ++j) {
      T* lane = lanes.data() + (j & 7) * inner;
      for (std::int64_t i = 0; i < inner; ++i) lane[i] += term(j, i);
    }
    for (std::int64_t i = 0; i < inner; ++i) {
      const T* l = lanes.data() + i;
      lanes[i] = ((l[0] + l[inner]) + (l[2 * inner] + l[3 * inner])) +
                 ((l[4 * inner] + l[5 * inner]) + (l[6 * inner] + l[7 * inner]));
    }
  }
  for (std::int64_t j = 0; j < s.len; ++j) {
    for (std::int64_t i = 0; i < inner; ++i) {
      const std::int64_t at = j * inner + i;
      if constexpr (kLog)
        dy[at] = dy[at] - std::exp(y[at]) * lanes[i];
      else
        dy[at] = y[at] * (dy[at] - lanes[i]);
    }
  }
}

template <class T, bool kLog>
void softmax_grad_kernel(KernelContext& ctx) {
  const TensorView& dyv = ctx.inputs[0];
  const std::int64_t axis =
      normalize_axis(ctx.attrs.get_int("axis", -1), static_cast<std::int64_t>(dyv.shape->size()), grad_name<kLog>());
  const AxisSplit s = split_at(*dyv.shape, axis);
  std::vector<T> dy = load<T>(dyv, ctx);
  const std::vector<T> y = load<T>(ctx.inputs[1], ctx);
  if (dyv.numel > 0) {
    std::vector<T> lanes(static_cast<std::size_t>(8 * s.inner));
    const std::int64_t block = s.len * s.inner;
    for (std::int64_t o = 0; o < s.outer; ++o) {
      softmax_grad_block<kLog>(dy.data() + o * block, y.data() + o * block, s, lanes);
    }
  }
  store<T>(ctx.outputs[0], dy.data(), ctx);
}

std::vector<TensorMeta> infer_threshold_grad(std::span<const TensorMeta> in, const Attrs&) {
  require_floating(in, 0, "ThresholdGrad");
  require_same_dtype(in, "ThresholdGrad");
  return {{broadcast_shapes(in[0].shape, in[1].shape, "ThresholdGrad"), in[0].dtype}};
}

KernelCost cost_threshold_grad(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, 1);
}

template <class T>
void threshold_grad_kernel(KernelContext& ctx) {
  // The threshold as the tensor's dtype holds it (aten casts the scalar to the tensor's type).
  double t = ctx.attrs.get_float("threshold", 0.0);
  if (ctx.inputs[1].dtype != DType::kF64) {
    float f = static_cast<float>(t);
    round_in_place(&f, 1, ctx.inputs[1].dtype);
    t = f;
  }
  const T threshold = static_cast<T>(t);
  binary_kernel<T>(ctx, [threshold](T dy, T x) { return x <= threshold ? T(0) : dy; });
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = "LogSoftmaxGrad",
                              .category = OpCategory::kPrecisionSensitive,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_softmax_grad<true>,
                              .cost = cost_softmax_grad});
NPUSCOPE_REGISTER_OP(OpSchema{.type = "SoftmaxGrad",
                              .category = OpCategory::kPrecisionSensitive,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_softmax_grad<false>,
                              .cost = cost_softmax_grad});
NPUSCOPE_REGISTER_OP(OpSchema{.type = "ThresholdGrad",
                              .category = OpCategory::kVector,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_threshold_grad,
                              .cost = cost_threshold_grad});

NPUSCOPE_REGISTER_FLOAT_KERNELS("LogSoftmaxGrad", softmax_grad_kernel, true);
NPUSCOPE_REGISTER_FLOAT_KERNELS("SoftmaxGrad", softmax_grad_kernel, false);
NPUSCOPE_REGISTER_FLOAT_KERNELS("ThresholdGrad", threshold_grad_kernel);

}  // namespace npuscope::emulator::kernels

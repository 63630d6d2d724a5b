// The element-wise regression losses and their gradients, mirroring PyTorch 1.13's CPU aten ops:
//   MseLoss             (x, y; reduction 1) -> loss: (x − y)² element-wise (reduction 0: shape of x),
//                       their sum (2) or mean (1) as a 0-dim tensor (CANN's MseLoss)
//   MseLossGrad         (dloss, x, y; reduction 1) -> dx = 2·(x − y)·dloss, divided by numel for the mean
//   SmoothL1LossV2      (x, y; reduction 1, beta 1.0) -> with d = x − y: 0.5·d²/beta where |d| < beta,
//                       else |d| − 0.5·beta (beta 0: |d|, the L1 loss); reduced as MseLoss (CANN's
//                       SmoothL1LossV2, detection's box regression)
//   SmoothL1LossGradV2  (dloss, x, y; reduction 1, beta 1.0) -> dx = d/beta where |d| < beta, else
//                       sign(d), times dloss, divided by numel for the mean
// dloss is 0-dim for sum and mean, shaped like x for none. reduction follows aten's Reduction enum:
// 0 none, 1 mean, 2 sum. x and y have one shape (aten broadcasts before it calls the op). NPU: f32
// with the sum over 8 lanes; CPU golden: f64.
#include <cmath>
#include <string>
#include <vector>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kMseLoss[] = "MseLoss", kMseLossGrad[] = "MseLossGrad", kSmoothL1[] = "SmoothL1LossV2",
               kSmoothL1Grad[] = "SmoothL1LossGradV2";

std::int64_t reduction(const Attrs& attrs, const char* op) {
  const std::int64_t r = attrs.get_int("reduction", 1);
  if (r < 0 || r > 2) fail(op, "reduction must be 0 (none), 1 (mean) or 2 (sum), got " + std::to_string(r));
  return r;
}

double beta(const Attrs& attrs, const char* op) {
  const double b = attrs.get_float("beta", 1.0);
  if (!(b >= 0)) fail(op, "beta must be >= 0, got " + std::to_string(b));
  return b;
}

void check_pair(std::span<const TensorMeta> in, std::size_t x, const char* op) {
  require_floating(in, static_cast<int>(x), op);
  if (in[x].shape != in[x + 1].shape || in[x].dtype != in[x + 1].dtype) {
    fail(op, "input and target must have one shape and dtype, got " + shape_str(in[x].shape) + " " +
                 std::string(dtype_name(in[x].dtype)) + " and " + shape_str(in[x + 1].shape) + " " +
                 std::string(dtype_name(in[x + 1].dtype)));
  }
}

template <const char* kOp>
std::vector<TensorMeta> infer_loss(std::span<const TensorMeta> in, const Attrs& attrs) {
  check_pair(in, 0, kOp);
  if (kOp == kSmoothL1) beta(attrs, kOp);
  return {{reduction(attrs, kOp) == 0 ? in[0].shape : Shape{}, in[0].dtype}};
}

template <const char* kOp>
std::vector<TensorMeta> infer_grad(std::span<const TensorMeta> in, const Attrs& attrs) {
  check_pair(in, 1, kOp);
  if (kOp == kSmoothL1Grad) beta(attrs, kOp);
  const Shape expected = reduction(attrs, kOp) == 0 ? in[1].shape : Shape{};
  if (in[0].shape != expected) {
    fail(kOp, "dloss must be " + shape_str(expected) + " for this reduction, got " + shape_str(in[0].shape));
  }
  return {{in[1].shape, in[1].dtype}};
}

KernelCost cost(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, 3);
}

// The loss of one difference d = x − y, and its derivative.
struct Mse {
  template <class T>
  static T loss(T d, T) {
    return d * d;
  }
  template <class T>
  static T slope(T d, T) {
    return T(2) * d;
  }
};
struct SmoothL1 {
  template <class T>
  static T loss(T d, T b) {
    const T a = std::abs(d);
    return a < b ? T(0.5) * d * d / b : a - T(0.5) * b;
  }
  template <class T>
  static T slope(T d, T b) {
    if (std::abs(d) < b) return d / b;
    return d > T(0) ? T(1) : d < T(0) ? T(-1) : T(0);
  }
};

template <class T, class Loss, const char* kOp>
void loss_kernel(KernelContext& ctx) {
  std::vector<T> x = load<T>(ctx.inputs[0], ctx);
  const std::vector<T> y = load<T>(ctx.inputs[1], ctx);
  const T b = kOp == kSmoothL1 ? static_cast<T>(beta(ctx.attrs, kOp)) : T(0);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = Loss::loss(x[i] - y[i], b);
  const std::int64_t r = reduction(ctx.attrs, kOp);
  if (r == 0) {
    store<T>(ctx.outputs[0], x.data(), ctx);
    return;
  }
  T total =
      lane_sum<T>(static_cast<std::int64_t>(x.size()), [&](std::int64_t i) { return x[static_cast<std::size_t>(i)]; });
  if (r == 1) total /= static_cast<T>(x.size());  // the mean of nothing is NaN, as aten's
  store<T>(ctx.outputs[0], &total, ctx);
}

template <class T, class Loss, const char* kOp>
void grad_kernel(KernelContext& ctx) {
  const std::vector<T> g = load<T>(ctx.inputs[0], ctx);
  std::vector<T> x = load<T>(ctx.inputs[1], ctx);
  const std::vector<T> y = load<T>(ctx.inputs[2], ctx);
  const T b = kOp == kSmoothL1Grad ? static_cast<T>(beta(ctx.attrs, kOp)) : T(0);
  const std::int64_t r = reduction(ctx.attrs, kOp);
  const T norm = r == 1 ? T(1) / static_cast<T>(x.size()) : T(1);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = norm * Loss::slope(x[i] - y[i], b) * (r == 0 ? g[i] : g[0]);
  store<T>(ctx.outputs[0], x.data(), ctx);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kMseLoss,
                              .category = OpCategory::kVector,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_loss<kMseLoss>,
                              .cost = cost});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kMseLossGrad,
                              .category = OpCategory::kVector,
                              .min_inputs = 3,
                              .max_inputs = 3,
                              .infer = infer_grad<kMseLossGrad>,
                              .cost = cost});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kSmoothL1,
                              .category = OpCategory::kVector,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_loss<kSmoothL1>,
                              .cost = cost});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kSmoothL1Grad,
                              .category = OpCategory::kVector,
                              .min_inputs = 3,
                              .max_inputs = 3,
                              .infer = infer_grad<kSmoothL1Grad>,
                              .cost = cost});
NPUSCOPE_REGISTER_FLOAT_KERNELS(kMseLoss, loss_kernel, Mse, kMseLoss);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kMseLossGrad, grad_kernel, Mse, kMseLossGrad);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kSmoothL1, loss_kernel, SmoothL1, kSmoothL1);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kSmoothL1Grad, grad_kernel, SmoothL1, kSmoothL1Grad);

}  // namespace npuscope::emulator::kernels

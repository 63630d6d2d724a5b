// The mean squared error and its gradient (CANN's MseLoss / MseLossGrad), mirroring PyTorch 1.13's
// CPU aten mse_loss and mse_loss_backward:
//   MseLoss      (x, y; reduction 1) -> loss: (x − y)² element-wise (reduction 0: shape of x), their
//                sum (2) or mean (1) as a 0-dim tensor
//   MseLossGrad  (dloss, x, y; reduction 1) -> dx = 2·(x − y)·dloss, divided by numel for the mean;
//                dloss is 0-dim for sum and mean, shaped like x for none
// reduction follows aten's Reduction enum: 0 none, 1 mean, 2 sum. x and y have one shape (aten
// broadcasts before it calls the op). NPU: f32 with the sum over 8 lanes; CPU golden: f64.
#include <string>
#include <vector>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kMseLoss[] = "MseLoss", kMseLossGrad[] = "MseLossGrad";

std::int64_t reduction(const Attrs& attrs, const char* op) {
  const std::int64_t r = attrs.get_int("reduction", 1);
  if (r < 0 || r > 2) fail(op, "reduction must be 0 (none), 1 (mean) or 2 (sum), got " + std::to_string(r));
  return r;
}

void check_pair(std::span<const TensorMeta> in, std::size_t x, const char* op) {
  require_floating(in, static_cast<int>(x), op);
  if (in[x].shape != in[x + 1].shape || in[x].dtype != in[x + 1].dtype) {
    fail(op, "input and target must have one shape and dtype, got " + shape_str(in[x].shape) + " " +
                 std::string(dtype_name(in[x].dtype)) + " and " + shape_str(in[x + 1].shape) + " " +
                 std::string(dtype_name(in[x + 1].dtype)));
  }
}

std::vector<TensorMeta> infer_loss(std::span<const TensorMeta> in, const Attrs& attrs) {
  check_pair(in, 0, kMseLoss);
  return {{reduction(attrs, kMseLoss) == 0 ? in[0].shape : Shape{}, in[0].dtype}};
}

std::vector<TensorMeta> infer_grad(std::span<const TensorMeta> in, const Attrs& attrs) {
  check_pair(in, 1, kMseLossGrad);
  const Shape expected = reduction(attrs, kMseLossGrad) == 0 ? in[1].shape : Shape{};
  if (in[0].shape != expected) {
    fail(kMseLossGrad, "dloss must be " + shape_str(expected) + " for this reduction, got " + shape_str(in[0].shape));
  }
  return {{in[1].shape, in[1].dtype}};
}

KernelCost cost(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, 3);
}

template <class T>
void loss_kernel(KernelContext& ctx) {
  std::vector<T> x = load<T>(ctx.inputs[0], ctx);
  const std::vector<T> y = load<T>(ctx.inputs[1], ctx);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = (x[i] - y[i]) * (x[i] - y[i]);
  const std::int64_t r = reduction(ctx.attrs, kMseLoss);
  if (r == 0) {
    store<T>(ctx.outputs[0], x.data(), ctx);
    return;
  }
  T total =
      lane_sum<T>(static_cast<std::int64_t>(x.size()), [&](std::int64_t i) { return x[static_cast<std::size_t>(i)]; });
  if (r == 1) total /= static_cast<T>(x.size());  // the mean of nothing is NaN, as aten's
  store<T>(ctx.outputs[0], &total, ctx);
}

template <class T>
void grad_kernel(KernelContext& ctx) {
  const std::vector<T> g = load<T>(ctx.inputs[0], ctx);
  std::vector<T> x = load<T>(ctx.inputs[1], ctx);
  const std::vector<T> y = load<T>(ctx.inputs[2], ctx);
  const std::int64_t r = reduction(ctx.attrs, kMseLossGrad);
  const T norm = r == 1 ? T(2) / static_cast<T>(x.size()) : T(2);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = norm * (x[i] - y[i]) * (r == 0 ? g[i] : g[0]);
  store<T>(ctx.outputs[0], x.data(), ctx);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kMseLoss,
                              .category = OpCategory::kVector,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_loss,
                              .cost = cost});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kMseLossGrad,
                              .category = OpCategory::kVector,
                              .min_inputs = 3,
                              .max_inputs = 3,
                              .infer = infer_grad,
                              .cost = cost});
NPUSCOPE_REGISTER_FLOAT_KERNELS(kMseLoss, loss_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kMseLossGrad, grad_kernel);

}  // namespace npuscope::emulator::kernels

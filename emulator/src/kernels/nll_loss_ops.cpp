// Negative log-likelihood loss, as aten's nll_loss_forward / nll_loss_backward compute it on the CPU
// (1-D or 2-D input; the spatial NLLLoss2d is not here):
//   NLLLoss     (logp [N, C] or [C], target int [N] or [], weight [C]?; reduction 1, ignore_index
//                -100) -> (loss, total_weight [])
//   NLLLossGrad (dloss, logp, target, weight?, total_weight; reduction 1, ignore_index -100) -> dlogp
// reduction follows aten's Reduction enum: 0 none, 1 mean, 2 sum.
//
// Note [NLL loss reductions]
// Each sample i with t = target[i] != ignore_index contributes −w[t]·logp[i, t] (w = 1 without
// weight) and w[t] to total_weight; an ignored sample contributes 0 and 0. none with a 2-D input:
// loss [N] per sample, total_weight 0. Otherwise loss [] is the sum, divided by total_weight for mean
// (0/0 = NaN when every sample is ignored, as aten). The sums run in f32 over 8 lanes on the NPU, f64
// on the CPU. Backward: dlogp is 0 except dlogp[i, t] = −w[t]·g, with g = dloss[i] (none, 2-D) or
// dloss (/ total_weight for mean). A target outside [0, C) that is not ignore_index is a kernel
// fault: the op raises, nothing crashes.
#include <string>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kLossOp[] = "NLLLoss";
constexpr char kGradOp[] = "NLLLossGrad";

// logp [N, C] / [C], target [N] / [], weight [C]: validated; gives (N, C) with N = 1 for 1-D.
std::pair<std::int64_t, std::int64_t> check_inputs(std::span<const TensorMeta> in, std::size_t logp_i, const char* op) {
  const Shape &x = in[logp_i].shape, &t = in[logp_i + 1].shape;
  require_floating(in, static_cast<int>(logp_i), op);
  if (x.size() != 1 && x.size() != 2) fail(op, "logp must be [N, C] or [C], got " + shape_str(x));
  if (is_floating(in[logp_i + 1].dtype) || in[logp_i + 1].dtype == DType::kBool) {
    fail(op, "target must be an integer tensor, got " + std::string(dtype_name(in[logp_i + 1].dtype)));
  }
  const Shape want_t = x.size() == 2 ? Shape{x[0]} : Shape{};
  if (t != want_t)
    fail(op, "target must be " + shape_str(want_t) + " for logp " + shape_str(x) + ", got " + shape_str(t));
  const std::int64_t c = x.back();
  const std::size_t wi = logp_i + 2;
  if (wi < in.size() && in[wi].present) {
    require_floating(in, static_cast<int>(wi), op);
    if (in[wi].shape != Shape{c})
      fail(op, "weight must be [" + std::to_string(c) + "], got " + shape_str(in[wi].shape));
  }
  return {x.size() == 2 ? x[0] : 1, c};
}

std::int64_t reduction_attr(const Attrs& attrs, const char* op) {
  const std::int64_t r = attrs.get_int("reduction", 1);
  if (r < 0 || r > 2) fail(op, "reduction " + std::to_string(r) + " is not 0 (none), 1 (mean) or 2 (sum)");
  return r;
}

std::vector<TensorMeta> infer_loss(std::span<const TensorMeta> in, const Attrs& attrs) {
  const auto [n, c] = check_inputs(in, 0, kLossOp);
  const bool per_sample = reduction_attr(attrs, kLossOp) == 0 && in[0].shape.size() == 2;
  return {{per_sample ? Shape{n} : Shape{}, in[0].dtype}, {Shape{}, in[0].dtype}};
}

std::vector<TensorMeta> infer_grad(std::span<const TensorMeta> in, const Attrs& attrs) {
  const auto [n, c] = check_inputs(in, 1, kGradOp);
  const bool per_sample = reduction_attr(attrs, kGradOp) == 0 && in[1].shape.size() == 2;
  const Shape want = per_sample ? Shape{n} : Shape{};
  if (in[0].shape != want) fail(kGradOp, "dloss must be " + shape_str(want) + ", got " + shape_str(in[0].shape));
  if (in.size() < 5 || !in[4].present || shape_numel(in[4].shape) != 1) {
    fail(kGradOp, "total_weight (input 4) must be a one-element tensor");
  }
  return {{in[1].shape, in[1].dtype}};
}

KernelCost cost_loss(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  KernelCost c = vector_cost(in, out, 2);
  c.bytes = static_cast<double>(in[1].nbytes() + out[0].nbytes()) * 3;  // gathers one logp per sample
  c.bytes_written = static_cast<double>(out[0].nbytes());
  c.stages = 1;  // gather, then the weighted sum
  c.cross_core = true;
  return c;
}
KernelCost cost_grad(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, 1);  // mostly zero-filling dlogp
}

// The targets, or empty after a fault (a target outside [0, C) that is not ignore_index).
std::vector<std::int64_t> load_targets(const TensorView& t, std::int64_t c, std::int64_t ignore, const char* op,
                                       KernelContext& ctx) {
  std::vector<std::int64_t> target(static_cast<std::size_t>(t.numel));
  load_i64(t, target.data());
  for (const std::int64_t v : target) {
    if (v != ignore && (v < 0 || v >= c)) [[unlikely]] {
      set_fault(ctx, std::string(op) + ": target " + std::to_string(v) + " is out of bounds [0, " + std::to_string(c) +
                         ") (and is not ignore_index " + std::to_string(ignore) + ")");
      return {};
    }
  }
  return target;
}

// What both kernels read first, with x [.., C] at input `x_index`, the targets after it and the optional
// class weights after those.
template <class T>
struct NllInputs {
  std::int64_t reduction = 1, ignore = -100, c = 0, n = 0;
  bool per_sample = false;           // reduction "none" on [N, C]: one loss per row
  std::vector<std::int64_t> target;  // empty after a fault
  bool weighted = false;
  std::vector<T> weight;
  T weight_of(std::int64_t t) const { return t == ignore ? T(0) : weighted ? weight[t] : T(1); }
};

template <class T>
NllInputs<T> read_nll_inputs(KernelContext& ctx, std::size_t x_index, const char* op) {
  NllInputs<T> in;
  in.reduction = ctx.attrs.get_int("reduction", 1);
  in.ignore = ctx.attrs.get_int("ignore_index", -100);
  const TensorView& xv = ctx.inputs[x_index];
  in.c = xv.shape->back();
  in.n = in.c == 0 ? 0 : xv.numel / in.c;
  in.per_sample = in.reduction == 0 && xv.shape->size() == 2;
  in.target = load_targets(ctx.inputs[x_index + 1], in.c, in.ignore, op, ctx);
  const std::size_t w = x_index + 2;
  in.weighted = ctx.inputs.size() > w && ctx.inputs[w].data != nullptr;
  if (in.weighted && ctx.fault.empty()) in.weight = load<T>(ctx.inputs[w], ctx);
  return in;
}

template <class T>
void loss_kernel(KernelContext& ctx) {
  const NllInputs<T> in = read_nll_inputs<T>(ctx, 0, kLossOp);
  if (!ctx.fault.empty()) return;
  const std::vector<T> x = load<T>(ctx.inputs[0], ctx);
  auto weight_of = [&](std::int64_t i) { return in.weight_of(in.target[i]); };
  auto loss_of = [&](std::int64_t i) {
    const std::int64_t t = in.target[i];
    return t == in.ignore ? T(0) : -x[i * in.c + t] * weight_of(i);
  };
  if (in.per_sample) {
    std::vector<T> loss(static_cast<std::size_t>(in.n));
    for (std::int64_t i = 0; i < in.n; ++i) loss[i] = loss_of(i);
    T zero = 0;
    store<T>(ctx.outputs[0], loss.data(), ctx);
    store<T>(ctx.outputs[1], &zero, ctx);
    return;
  }
  T total = lane_sum<T>(in.n, weight_of);
  T loss = lane_sum<T>(in.n, loss_of);
  if (in.reduction == 1) loss /= total;
  store<T>(ctx.outputs[0], &loss, ctx);
  store<T>(ctx.outputs[1], &total, ctx);
}

template <class T>
void grad_kernel(KernelContext& ctx) {
  const NllInputs<T> in = read_nll_inputs<T>(ctx, 1, kGradOp);
  if (!ctx.fault.empty()) return;
  const std::vector<T> dloss = load<T>(ctx.inputs[0], ctx), total = load<T>(ctx.inputs[4], ctx);
  const T g = in.per_sample ? T(0) : in.reduction == 1 ? -dloss[0] / total[0] : -dloss[0];
  std::vector<T> dx(static_cast<std::size_t>(ctx.inputs[1].numel), T(0));
  for (std::int64_t i = 0; i < in.n; ++i) {
    const std::int64_t t = in.target[i];
    if (t == in.ignore) continue;
    const T gi = in.per_sample ? -dloss[i] : g;
    dx[i * in.c + t] = in.weighted ? in.weight[t] * gi : gi;
  }
  store<T>(ctx.outputs[0], dx.data(), ctx);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kLossOp,
                              .category = OpCategory::kVector,
                              .min_inputs = 2,
                              .max_inputs = 3,
                              .infer = infer_loss,
                              .cost = cost_loss});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kGradOp,
                              .category = OpCategory::kVector,
                              .min_inputs = 5,
                              .max_inputs = 5,
                              .infer = infer_grad,
                              .cost = cost_grad});
NPUSCOPE_REGISTER_FLOAT_KERNELS(kLossOp, loss_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kGradOp, grad_kernel);

}  // namespace npuscope::emulator::kernels

// Batch normalisation for training, as aten's native_batch_norm (training = true) and
// native_batch_norm_backward compute it on the CPU:
//   BatchNormTraining     (x [N, C, ...], weight?, bias?, running_mean?, running_var?; momentum 0.1,
//                          epsilon 1e-5, unbiased 1) -> (y, save_mean [C], save_invstd [C],
//                          running_mean_out [C], running_var_out [C])
//   BatchNormTrainingGrad (dy, x, weight?, mean [C], invstd_or_var [C]; training 1, epsilon 1e-5)
//                          -> (dx, dweight [C], dbias [C])
// NPU: channel sums accumulated in f32 over 8 lanes of 8 lanes (images, then the plane); CPU golden:
// the same in f64. Every per-channel input is loaded before any output is stored, so the running
// statistics may be updated in place (outputs 3/4 the same memory as inputs 3/4); x and dy are read
// in place on the NPU (Note [Batch norm in place]).
//
// Note [Batch norm statistics]
// Per channel, over the M = N · H · W values: mean, var_sum = Σ(x − mean)²; the normalisation uses
// the biased variance, save_invstd = 1/sqrt(var_sum/M + eps) (0 when both are 0, as aten's InvStd),
// and the running variance the unbiased one: running = (1 − momentum)·running + momentum·stat with
// stat = var_sum/(M − 1); with unbiased = 0, the biased var_sum/M (ONNX BatchNormalization in
// training_mode, whose momentum is aten's 1 − momentum: the ONNX importer converts it). Without
// running tensors, outputs 3/4 hold the batch statistics. y is x·α + β with α = invstd·weight,
// β = bias − mean·α.
// Backward (training): with sum = Σdy, dotp = Σ(x − mean)·dy, k = dotp·invstd²/M,
// dx = (dy − sum/M − (x − mean)·k)·invstd·weight; eval mode (training = 0, inputs 3/4 the running
// mean and variance): invstd = 1/sqrt(var + eps), dx = dy·invstd·weight. Both: dweight = dotp·invstd,
// dbias = sum. An absent weight is ones.
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kTrainOp[] = "BatchNormTraining";
constexpr char kGradOp[] = "BatchNormTrainingGrad";

// A per-channel input must be [C] when present (`required`: and must be present).
void check_channel_param(std::span<const TensorMeta> in, std::size_t i, std::int64_t c, const char* op,
                         const char* name, bool required) {
  if (i >= in.size() || !in[i].present) {
    if (required) fail(op, std::string(name) + " (input " + std::to_string(i) + ") is required");
    return;
  }
  require_floating(in, static_cast<int>(i), op);
  if (in[i].shape != Shape{c}) {
    fail(op, std::string(name) + " (input " + std::to_string(i) + ") must be [" + std::to_string(c) + "], got " +
                 shape_str(in[i].shape));
  }
}

// The dtype of the per-channel outputs: that of the first present per-channel input, else x's.
DType param_dtype(std::span<const TensorMeta> in, std::size_t first, DType fallback) {
  for (std::size_t i = first; i < in.size(); ++i) {
    if (in[i].present) return in[i].dtype;
  }
  return fallback;
}

std::vector<TensorMeta> infer_train(std::span<const TensorMeta> in, const Attrs&) {
  require_floating(in, 0, kTrainOp);
  const Shape& x = in[0].shape;
  if (x.size() < 2) fail(kTrainOp, "x must be [N, C, ...], got " + shape_str(x));
  const char* names[] = {"weight", "bias", "running_mean", "running_var"};
  for (std::size_t i = 1; i < 5; ++i) check_channel_param(in, i, x[1], kTrainOp, names[i - 1], false);
  const bool rm = in.size() > 3 && in[3].present, rv = in.size() > 4 && in[4].present;
  if (rm != rv) fail(kTrainOp, "running_mean and running_var must be given together");
  const TensorMeta stat{{x[1]}, param_dtype(in.subspan(0, std::min<std::size_t>(in.size(), 3)), 1, in[0].dtype)};
  const TensorMeta run{{x[1]}, rm ? in[3].dtype : stat.dtype};
  return {{x, in[0].dtype}, stat, stat, run, run};
}

std::vector<TensorMeta> infer_grad(std::span<const TensorMeta> in, const Attrs&) {
  require_floating(in, 0, kGradOp);
  require_floating(in, 1, kGradOp);
  const Shape& x = in[1].shape;
  if (x.size() < 2) fail(kGradOp, "x must be [N, C, ...], got " + shape_str(x));
  if (in[0].shape != x) fail(kGradOp, "dy " + shape_str(in[0].shape) + " and x " + shape_str(x) + " differ in shape");
  check_channel_param(in, 2, x[1], kGradOp, "weight", false);
  check_channel_param(in, 3, x[1], kGradOp, "mean", true);
  check_channel_param(in, 4, x[1], kGradOp, "invstd_or_var", true);
  const TensorMeta param{{x[1]}, in[2].present ? in[2].dtype : in[3].dtype};
  return {{x, in[1].dtype}, param, param};
}

KernelCost cost_train(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, 5);  // sum, centred square sum, fused multiply-add (x read twice more)
}
KernelCost cost_grad(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, 8);  // two channel sums, then the projection per element
}

template <class T>
std::vector<T> load_optional(std::span<const TensorView> in, std::size_t i, const KernelContext& ctx) {
  if (i >= in.size() || in[i].data == nullptr) return {};
  return load<T>(in[i], ctx);
}

// x seen as [N, C, plane].
struct ChannelLayout {
  std::int64_t n = 0, c = 0, plane = 0;
  explicit ChannelLayout(const TensorView& x)
      : n((*x.shape)[0]), c((*x.shape)[1]), plane(n * c == 0 ? 0 : x.numel / (n * c)) {}
  std::int64_t count() const { return n * plane; }  // M
};

// Σ f(p, j) over the channel's planes p (pointers into it) and their elements j: 8 lanes per plane,
// 8 lanes over the planes.
template <class T, class F>
T channel_sum(const ChannelLayout& l, std::int64_t ch, const T* data, F f) {
  return lane_sum<T>(l.n, [&](std::int64_t i) {
    const T* p = data + (i * l.c + ch) * l.plane;
    return lane_sum<T>(l.plane, [&](std::int64_t j) { return f(p[j]); });
  });
}

// Note [Batch norm in place]
// On the NPU in f32 with f32 tensors, x (and dy) are read where they are and y (dx) written straight
// into output 0, channel by channel, each channel's sums taken before it is written (so an output
// that is an input's memory stays right); finish_in_place then applies the overflow flags and mode.
// The same values and flags as loading copies and storing through store<float>, two passes fewer.

// The tensors a kernel reads in place as T and the one it writes (see Note [Batch norm in place]),
// or copies of them when the NPU must convert or round.
template <class T>
struct ChannelData {
  std::vector<T> owned_a, owned_b;
  const T *a = nullptr, *b = nullptr;  // inputs
  T* out = nullptr;
  bool direct = false;

  ChannelData(const TensorView& va, const TensorView* vb, const TensorView& vout, const KernelContext& ctx) {
    if constexpr (std::is_same_v<T, float>) {
      direct = ctx.backend == Backend::kNpu && ctx.compute_dtype == DType::kF32 && vout.dtype == DType::kF32 &&
               va.dtype == DType::kF32 && in_step(va, vout) &&
               (vb == nullptr || (vb->dtype == DType::kF32 && in_step(*vb, vout)));
    }
    if (direct) {
      a = va.as<const T>();
      b = vb != nullptr ? vb->as<const T>() : nullptr;
      out = vout.as<T>();
      return;
    }
    owned_a = load<T>(va, ctx);
    if (vb != nullptr) owned_b = load<T>(*vb, ctx);
    a = out = owned_a.data();
    b = owned_b.data();
  }

  void finish(const TensorView& vout, KernelContext& ctx) {
    direct ? finish_in_place(out, vout.numel, ctx) : store<T>(vout, out, ctx);
  }
};

template <class T>
void train_kernel(KernelContext& ctx) {
  const ChannelLayout l(ctx.inputs[0]);
  const T momentum = static_cast<T>(ctx.attrs.get_float("momentum", 0.1));
  const T eps = static_cast<T>(ctx.attrs.get_float("epsilon", 1e-5));
  const bool unbiased_running = ctx.attrs.get_int("unbiased", 1) != 0;
  ChannelData<T> data(ctx.inputs[0], nullptr, ctx.outputs[0], ctx);
  const T* x = data.a;
  const std::vector<T> w = load_optional<T>(ctx.inputs, 1, ctx), b = load_optional<T>(ctx.inputs, 2, ctx);
  const std::vector<T> rm = load_optional<T>(ctx.inputs, 3, ctx), rv = load_optional<T>(ctx.inputs, 4, ctx);
  const auto cs = static_cast<std::size_t>(l.c);
  std::vector<T> mean(cs), invstd(cs), run_mean(cs), run_var(cs);
  const T m = static_cast<T>(l.count());
  for (std::int64_t ch = 0; ch < l.c; ++ch) {
    const T mu = channel_sum<T>(l, ch, x, [](T v) { return v; }) / m;
    const T var_sum = channel_sum<T>(l, ch, x, [mu](T v) { return (v - mu) * (v - mu); });
    const T var = var_sum / m;
    const T inv = var == T(0) && eps == T(0) ? T(0) : T(1) / std::sqrt(var + eps);
    const T stat_var = unbiased_running ? var_sum / (m - T(1)) : var;  // what the running variance takes
    mean[ch] = mu;
    invstd[ch] = inv;
    run_mean[ch] = rm.empty() ? mu : momentum * mu + (T(1) - momentum) * rm[ch];
    run_var[ch] = rv.empty() ? stat_var : momentum * stat_var + (T(1) - momentum) * rv[ch];
    const T alpha = inv * (w.empty() ? T(1) : w[ch]);
    const T beta = (b.empty() ? T(0) : b[ch]) - mu * alpha;
    for (std::int64_t i = 0; i < l.n; ++i) {
      const std::int64_t off = (i * l.c + ch) * l.plane;
      const T* p = x + off;
      T* y = data.out + off;
      for (std::int64_t j = 0; j < l.plane; ++j) y[j] = p[j] * alpha + beta;
    }
  }
  data.finish(ctx.outputs[0], ctx);
  store<T>(ctx.outputs[1], mean.data(), ctx);
  store<T>(ctx.outputs[2], invstd.data(), ctx);
  store<T>(ctx.outputs[3], run_mean.data(), ctx);
  store<T>(ctx.outputs[4], run_var.data(), ctx);
}

template <class T>
void grad_kernel(KernelContext& ctx) {
  const ChannelLayout l(ctx.inputs[1]);
  const bool training = ctx.attrs.get_int("training", 1) != 0;
  const T eps = static_cast<T>(ctx.attrs.get_float("epsilon", 1e-5));
  ChannelData<T> data(ctx.inputs[0], &ctx.inputs[1], ctx.outputs[0], ctx);
  const T *dy = data.a, *x = data.b;
  const std::vector<T> w = load_optional<T>(ctx.inputs, 2, ctx);
  const std::vector<T> mean = load<T>(ctx.inputs[3], ctx), sv = load<T>(ctx.inputs[4], ctx);
  const auto cs = static_cast<std::size_t>(l.c);
  std::vector<T> dweight(cs), dbias(cs);
  const T m = static_cast<T>(l.count());
  for (std::int64_t ch = 0; ch < l.c; ++ch) {
    const T mu = mean[ch];
    const T inv = training ? sv[ch] : T(1) / std::sqrt(sv[ch] + eps);
    const T sum = lane_sum<T>(l.n, [&](std::int64_t i) {
      const T* g = dy + (i * l.c + ch) * l.plane;
      return lane_sum<T>(l.plane, [g](std::int64_t j) { return g[j]; });
    });
    const T dotp = lane_sum<T>(l.n, [&](std::int64_t i) {
      const std::int64_t off = (i * l.c + ch) * l.plane;
      const T *g = dy + off, *p = x + off;
      return lane_sum<T>(l.plane, [g, p, mu](std::int64_t j) { return (p[j] - mu) * g[j]; });
    });
    dweight[ch] = dotp * inv;
    dbias[ch] = sum;
    const T scale = inv * (w.empty() ? T(1) : w[ch]);
    const T k = training ? dotp * inv * inv / m : T(0), grad_mean = training ? sum / m : T(0);
    for (std::int64_t i = 0; i < l.n; ++i) {
      const std::int64_t off = (i * l.c + ch) * l.plane;
      const T *g = dy + off, *p = x + off;
      T* dx = data.out + off;
      if (training) {
        for (std::int64_t j = 0; j < l.plane; ++j) dx[j] = (g[j] - grad_mean - (p[j] - mu) * k) * scale;
      } else {
        for (std::int64_t j = 0; j < l.plane; ++j) dx[j] = g[j] * scale;
      }
    }
  }
  data.finish(ctx.outputs[0], ctx);
  store<T>(ctx.outputs[1], dweight.data(), ctx);
  store<T>(ctx.outputs[2], dbias.data(), ctx);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kTrainOp,
                              .category = OpCategory::kPrecisionSensitive,
                              .min_inputs = 1,
                              .max_inputs = 5,
                              .infer = infer_train,
                              .cost = cost_train});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kGradOp,
                              .category = OpCategory::kPrecisionSensitive,
                              .min_inputs = 5,
                              .max_inputs = 5,
                              .infer = infer_grad,
                              .cost = cost_grad});
NPUSCOPE_REGISTER_FLOAT_KERNELS(kTrainOp, train_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kGradOp, grad_kernel);

}  // namespace npuscope::emulator::kernels

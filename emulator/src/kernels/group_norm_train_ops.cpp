// GroupNormV2 and GroupNormGrad (CANN's names): the training pair of PyTorch 1.13's CPU
// native_group_norm and native_group_norm_backward. x is [N, C, *] with C in num_groups groups.
//   GroupNormV2   (x, gamma?, beta?; num_groups, epsilon = 1e-5) -> (y, mean [N, G], rstd [N, G])
//                 biased variance over each (image, group), rstd = 1 / sqrt(max(var, 0) + eps),
//                 y = (x − mean)·rstd·gamma[c] + beta[c]; mean and rstd in x's dtype.
//   GroupNormGrad (dy, x, mean, rstd, gamma?; num_groups) -> (dx, dgamma [C], dbeta [C])
//                 aten's formula: per (n, c) ds = Σ dy·x, db = Σ dy; per (n, g) with s = 1/(C/G·HW)
//                 dsg = Σ_c ds·gamma, dbg = Σ_c db·gamma, b = (dbg·mean − dsg)·rstd³·s,
//                 c = −b·mean − dbg·rstd·s, dx = rstd·gamma[c]·dy + b·x + c;
//                 dgamma[c] = Σ_n (ds − db·mean)·rstd, dbeta[c] = Σ_n db.
// NPU: f32 with sums over 8 lanes (a vector unit's partial sums); CPU golden: f64. Every input is
// loaded before any output is stored.
#include <cmath>
#include <string>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kForward[] = "GroupNormV2", kBackward[] = "GroupNormGrad";

struct Groups {
  std::int64_t n = 0, c = 0, hw = 1, g = 1;
  std::int64_t per_group() const { return c / g * hw; }
};

Groups groups_of(const Shape& x, const Attrs& attrs, const char* op) {
  if (x.size() < 2) fail(op, "x must be [N, C, ...], got " + shape_str(x));
  Groups s{.n = x[0], .c = x[1]};
  for (std::size_t d = 2; d < x.size(); ++d) s.hw *= x[d];
  s.g = attrs.get_int("num_groups", 1);
  if (s.g < 1 || s.c % s.g != 0) {
    fail(op, "num_groups " + std::to_string(s.g) + " must divide the " + std::to_string(s.c) + " channels of x " +
                 shape_str(x));
  }
  return s;
}

void check_numel(std::span<const TensorMeta> in, std::size_t i, std::int64_t want, const char* op, const char* name) {
  if (i >= in.size() || !in[i].present) return;
  require_floating(in, static_cast<int>(i), op);
  if (shape_numel(in[i].shape) != want) {
    fail(op, std::string(name) + " has shape " + shape_str(in[i].shape) + " but must have " + std::to_string(want) +
                 " elements");
  }
}

std::vector<TensorMeta> infer_forward(std::span<const TensorMeta> in, const Attrs& attrs) {
  require_floating(in, 0, kForward);
  const Groups s = groups_of(in[0].shape, attrs, kForward);
  attrs.get_float("epsilon", 1e-5);
  check_numel(in, 1, s.c, kForward, "gamma");
  check_numel(in, 2, s.c, kForward, "beta");
  return {{in[0].shape, in[0].dtype}, {{s.n, s.g}, in[0].dtype}, {{s.n, s.g}, in[0].dtype}};
}

std::vector<TensorMeta> infer_backward(std::span<const TensorMeta> in, const Attrs& attrs) {
  for (int i = 0; i < 4; ++i) {
    if (!in[static_cast<std::size_t>(i)].present) fail(kBackward, "inputs dy, x, mean, rstd are required");
    require_floating(in, i, kBackward);
  }
  const Groups s = groups_of(in[1].shape, attrs, kBackward);
  if (in[0].shape != in[1].shape) {
    fail(kBackward, "dy " + shape_str(in[0].shape) + " must have x's shape " + shape_str(in[1].shape));
  }
  check_numel(in, 2, s.n * s.g, kBackward, "mean");
  check_numel(in, 3, s.n * s.g, kBackward, "rstd");
  check_numel(in, 4, s.c, kBackward, "gamma");
  const DType pdt = in.size() > 4 && in[4].present ? in[4].dtype : in[1].dtype;
  return {{in[1].shape, in[1].dtype}, {{s.c}, pdt}, {{s.c}, pdt}};
}

KernelCost cost_forward(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out.first(1), 8);  // mean, centre, square-sum, scale, shift
}
KernelCost cost_backward(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out.first(1), 10);  // two sums per element, the dx mul-adds
}

template <class T>
void forward_kernel(KernelContext& ctx) {
  const Groups s = groups_of(*ctx.inputs[0].shape, ctx.attrs, kForward);
  const T eps = static_cast<T>(ctx.attrs.get_float("epsilon", 1e-5));
  std::vector<T> x = load<T>(ctx.inputs[0], ctx);
  const std::vector<T> gamma = load_or<T>(ctx, 1, s.c, T(1)), beta = load_or<T>(ctx, 2, s.c, T(0));
  std::vector<T> mean(static_cast<std::size_t>(s.n * s.g)), rstd(mean.size());
  const std::int64_t len = s.per_group(), cg = s.c / s.g;
  const T inv = len == 0 ? T(0) : T(1) / static_cast<T>(len);
  for (std::int64_t i = 0; i < s.n * s.g; ++i) {
    T* v = x.data() + i * len;
    const T m = lane_sum<T>(len, [v](std::int64_t j) { return v[j]; }) * inv;
    const T var = lane_sum<T>(len, [v, m](std::int64_t j) { return (v[j] - m) * (v[j] - m); }) * inv;
    const T rs = T(1) / std::sqrt(std::max(var, T(0)) + eps);
    const std::int64_t c0 = (i % s.g) * cg;
    for (std::int64_t j = 0; j < len; ++j) {
      const std::int64_t c = c0 + j / s.hw;
      v[j] = (v[j] - m) * rs * gamma[c] + beta[c];
    }
    mean[i] = m;
    rstd[i] = rs;
  }
  store<T>(ctx.outputs[0], x.data(), ctx);
  store<T>(ctx.outputs[1], mean.data(), ctx);
  store<T>(ctx.outputs[2], rstd.data(), ctx);
}

template <class T>
void backward_kernel(KernelContext& ctx) {
  const Groups s = groups_of(*ctx.inputs[1].shape, ctx.attrs, kBackward);
  const std::vector<T> dy = load<T>(ctx.inputs[0], ctx), x = load<T>(ctx.inputs[1], ctx);
  const std::vector<T> mean = load<T>(ctx.inputs[2], ctx), rstd = load<T>(ctx.inputs[3], ctx);
  const std::vector<T> gamma = load_or<T>(ctx, 4, s.c, T(1));
  const std::int64_t cg = s.c / s.g, hw = s.hw;
  // ds, db per (n, c).
  std::vector<T> ds(static_cast<std::size_t>(s.n * s.c)), db(ds.size());
  for (std::int64_t nc = 0; nc < s.n * s.c; ++nc) {
    const T* g = dy.data() + nc * hw;
    const T* xv = x.data() + nc * hw;
    ds[nc] = lane_sum<T>(hw, [&](std::int64_t j) { return g[j] * xv[j]; });
    db[nc] = lane_sum<T>(hw, [&](std::int64_t j) { return g[j]; });
  }
  std::vector<T> dx(x.size()), dgamma(static_cast<std::size_t>(s.c), T(0)), dbeta(dgamma.size(), T(0));
  const T scale = s.per_group() == 0 ? T(0) : T(1) / static_cast<T>(s.per_group());
  for (std::int64_t n = 0; n < s.n; ++n) {
    for (std::int64_t gi = 0; gi < s.g; ++gi) {
      const std::int64_t i = n * s.g + gi, c0 = gi * cg;
      T dsg = 0, dbg = 0;
      for (std::int64_t c = c0; c < c0 + cg; ++c) {
        dsg += ds[n * s.c + c] * gamma[c];
        dbg += db[n * s.c + c] * gamma[c];
      }
      const T a = rstd[i], m = mean[i];
      const T b = (dbg * m - dsg) * a * a * a * scale;
      const T k = -b * m - dbg * a * scale;
      for (std::int64_t c = c0; c < c0 + cg; ++c) {
        const std::int64_t base = (n * s.c + c) * hw;
        const T c1 = a * gamma[c];
        for (std::int64_t j = 0; j < hw; ++j) dx[base + j] = c1 * dy[base + j] + b * x[base + j] + k;
        dgamma[c] += (ds[n * s.c + c] - db[n * s.c + c] * m) * a;
        dbeta[c] += db[n * s.c + c];
      }
    }
  }
  store<T>(ctx.outputs[0], dx.data(), ctx);
  store<T>(ctx.outputs[1], dgamma.data(), ctx);
  store<T>(ctx.outputs[2], dbeta.data(), ctx);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kForward,
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 3,
                              .infer = infer_forward,
                              .cost = cost_forward});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kBackward,
                              .category = OpCategory::kVector,
                              .min_inputs = 4,
                              .max_inputs = 5,
                              .infer = infer_backward,
                              .cost = cost_backward});
NPUSCOPE_REGISTER_FLOAT_KERNELS(kForward, forward_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kBackward, backward_kernel);

}  // namespace npuscope::emulator::kernels

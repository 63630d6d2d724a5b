// LayerNormV3 and LayerNormGrad: the training pair of PyTorch 1.13's CPU native_layer_norm and
// native_layer_norm_backward. x is seen as [rows, cols] with cols = the dims from 'axis' on.
//   LayerNormV3  (x, gamma?, beta?; axis = -1, epsilon = 1e-5) -> (y, mean, rstd)
//                mean/rstd have x's shape with the normalised dims set to 1 and x's dtype; biased
//                variance, rstd = 1 / sqrt(max(var, 0) + eps).
//   LayerNormGrad (dy, x, mean, rstd, gamma?; axis = -1) -> (dx, dgamma, dbeta)
//                with the saved mean/rstd, aten's formula: g = dy·gamma, ds = Σ g·x, db = Σ g,
//                b = (db·mean − ds)·rstd³/cols, c = −b·mean − db·rstd/cols, dx = rstd·g + b·x + c;
//                dgamma = Σ_rows dy·(x − mean)·rstd, dbeta = Σ_rows dy, shaped like the normalised
//                dims (gamma's dtype, or x's when gamma is left out).
// NPU: f32, row sums over 8 lanes and column sums over 8 row lanes (a vector unit's partial sums);
// CPU golden: f64. Every input is loaded before any output is stored (outputs may alias inputs).
#include <array>
#include <cmath>
#include <string>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kLayerNormV3[] = "LayerNormV3", kLayerNormGrad[] = "LayerNormGrad";

struct Split {
  std::int64_t axis = 0, rows = 0, cols = 1;
  Shape norm, stat;  // the normalised dims; x's shape with them set to 1
};

Split split_of(const Shape& x, std::int64_t axis_attr, const char* op) {
  Split s;
  const auto rank = static_cast<std::int64_t>(x.size());
  if (rank == 0) fail(op, "x must have at least one dim, got a scalar");
  s.axis = normalize_axis(axis_attr, rank, op);
  s.stat = x;
  for (std::size_t d = static_cast<std::size_t>(s.axis); d < x.size(); ++d) {
    s.cols *= x[d];
    s.norm.push_back(x[d]);
    s.stat[d] = 1;
  }
  s.rows = s.cols == 0 ? 0 : shape_numel(x) / s.cols;
  return s;
}

Shape strip_leading_ones(const Shape& s) {
  std::size_t i = 0;
  while (i < s.size() && s[i] == 1) ++i;
  return Shape(s.begin() + static_cast<std::ptrdiff_t>(i), s.end());
}

// Input i must have shape `want` (leading 1s aside; mean/rstd: any shape with as many elements).
void check_shape(std::span<const TensorMeta> in, std::size_t i, const Shape& want, const char* op, const char* name,
                 const char* why, bool any_layout = false) {
  if (!in[i].present) return;
  require_floating(in, static_cast<int>(i), op);
  const bool ok = any_layout ? shape_numel(in[i].shape) == shape_numel(want)
                             : strip_leading_ones(in[i].shape) == strip_leading_ones(want);
  if (!ok) {
    fail(op, std::string(name) + " has shape " + shape_str(in[i].shape) + " but must have shape " + shape_str(want) +
                 " (" + why + ")");
  }
}

std::vector<TensorMeta> infer_forward(std::span<const TensorMeta> in, const Attrs& attrs) {
  require_floating(in, 0, kLayerNormV3);
  const Split s = split_of(in[0].shape, attrs.get_int("axis", -1), kLayerNormV3);
  attrs.get_float("epsilon", 1e-5);
  const char* why = "the normalised dims of x";
  if (in.size() > 1) check_shape(in, 1, s.norm, kLayerNormV3, "gamma", why);
  if (in.size() > 2) check_shape(in, 2, s.norm, kLayerNormV3, "beta", why);
  return {{in[0].shape, in[0].dtype}, {s.stat, in[0].dtype}, {s.stat, in[0].dtype}};
}

std::vector<TensorMeta> infer_backward(std::span<const TensorMeta> in, const Attrs& attrs) {
  for (int i = 0; i < 4; ++i) {
    if (!in[static_cast<std::size_t>(i)].present) fail(kLayerNormGrad, "inputs dy, x, mean, rstd are required");
    require_floating(in, i, kLayerNormGrad);
  }
  const Split s = split_of(in[1].shape, attrs.get_int("axis", -1), kLayerNormGrad);
  if (in[0].shape != in[1].shape) {
    fail(kLayerNormGrad, "dy " + shape_str(in[0].shape) + " must have x's shape " + shape_str(in[1].shape));
  }
  check_shape(in, 2, s.stat, kLayerNormGrad, "mean", "x's shape with the normalised dims set to 1", true);
  check_shape(in, 3, s.stat, kLayerNormGrad, "rstd", "x's shape with the normalised dims set to 1", true);
  const bool gamma = in.size() > 4 && in[4].present;
  if (gamma) check_shape(in, 4, s.norm, kLayerNormGrad, "gamma", "the normalised dims of x");
  const DType pdt = gamma ? in[4].dtype : in[1].dtype;
  return {{in[1].shape, in[1].dtype}, {s.norm, pdt}, {s.norm, pdt}};
}

KernelCost cost_forward(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out.first(1), 8);  // mean, centre, square-sum, scale, shift
}
KernelCost cost_backward(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out.first(1), 12);  // two row sums, two column sums, the dx mul-adds
}

// ---- kernels ------------------------------------------------------------------------------------

template <class T>
void forward_kernel(KernelContext& ctx) {
  const Split s = split_of(*ctx.inputs[0].shape, ctx.attrs.get_int("axis", -1), kLayerNormV3);
  const T eps = static_cast<T>(ctx.attrs.get_float("epsilon", 1e-5));
  std::vector<T> x = load<T>(ctx.inputs[0], ctx);
  const std::vector<T> gamma = load_or<T>(ctx, 1, s.cols, T(1)), beta = load_or<T>(ctx, 2, s.cols, T(0));
  std::vector<T> mean(static_cast<std::size_t>(s.rows)), rstd(static_cast<std::size_t>(s.rows));
  const T inv_cols = T(1) / static_cast<T>(s.cols);
  for (std::int64_t r = 0; r < s.rows; ++r) {
    T* row = x.data() + r * s.cols;
    const T m = lane_sum<T>(s.cols, [row](std::int64_t j) { return row[j]; }) * inv_cols;
    const T var = lane_sum<T>(s.cols, [row, m](std::int64_t j) { return (row[j] - m) * (row[j] - m); }) * inv_cols;
    const T rs = T(1) / std::sqrt(std::max(var, T(0)) + eps);
    for (std::int64_t j = 0; j < s.cols; ++j) row[j] = (row[j] - m) * rs * gamma[j] + beta[j];
    mean[r] = m;
    rstd[r] = rs;
  }
  store<T>(ctx.outputs[0], x.data(), ctx);
  store<T>(ctx.outputs[1], mean.data(), ctx);
  store<T>(ctx.outputs[2], rstd.data(), ctx);
}

// Column sums of f(r, j) over the rows, row r into lane r & 7, the lanes then added pairwise.
template <class T, class F>
void column_lane_sums(std::int64_t rows, std::int64_t cols, F f, T* out) {
  std::vector<T> lanes(static_cast<std::size_t>(8 * cols), T(0));
  for (std::int64_t r = 0; r < rows; ++r) {
    T* acc = lanes.data() + (r & 7) * cols;
    for (std::int64_t j = 0; j < cols; ++j) acc[j] += f(r, j);
  }
  for (std::int64_t j = 0; j < cols; ++j) {
    const T* l = lanes.data() + j;
    out[j] =
        ((l[0] + l[cols]) + (l[2 * cols] + l[3 * cols])) + ((l[4 * cols] + l[5 * cols]) + (l[6 * cols] + l[7 * cols]));
  }
}

template <class T>
void backward_kernel(KernelContext& ctx) {
  const Split s = split_of(*ctx.inputs[1].shape, ctx.attrs.get_int("axis", -1), kLayerNormGrad);
  const std::vector<T> dy = load<T>(ctx.inputs[0], ctx), x = load<T>(ctx.inputs[1], ctx);
  const std::vector<T> mean = load<T>(ctx.inputs[2], ctx), rstd = load<T>(ctx.inputs[3], ctx);
  const std::vector<T> gamma = load_or<T>(ctx, 4, s.cols, T(1));
  const std::int64_t cols = s.cols;
  std::vector<T> dx(x.size()), dgamma(static_cast<std::size_t>(cols)), dbeta(static_cast<std::size_t>(cols));
  const T scale = T(1) / static_cast<T>(cols);
  for (std::int64_t r = 0; r < s.rows; ++r) {
    const T* g = dy.data() + r * cols;
    const T* xr = x.data() + r * cols;
    const T ds = lane_sum<T>(cols, [&](std::int64_t j) { return g[j] * gamma[j] * xr[j]; });
    const T db = lane_sum<T>(cols, [&](std::int64_t j) { return g[j] * gamma[j]; });
    const T a = rstd[r], m = mean[r];
    const T b = (db * m - ds) * a * a * a * scale;
    const T c = -b * m - db * a * scale;
    T* out = dx.data() + r * cols;
    for (std::int64_t j = 0; j < cols; ++j) out[j] = a * g[j] * gamma[j] + b * xr[j] + c;
  }
  column_lane_sums<T>(
      s.rows, cols,
      [&](std::int64_t r, std::int64_t j) { return dy[r * cols + j] * (x[r * cols + j] - mean[r]) * rstd[r]; },
      dgamma.data());
  column_lane_sums<T>(
      s.rows, cols, [&](std::int64_t r, std::int64_t j) { return dy[r * cols + j]; }, dbeta.data());
  store<T>(ctx.outputs[0], dx.data(), ctx);
  store<T>(ctx.outputs[1], dgamma.data(), ctx);
  store<T>(ctx.outputs[2], dbeta.data(), ctx);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kLayerNormV3,
                              .category = OpCategory::kPrecisionSensitive,
                              .min_inputs = 1,
                              .max_inputs = 3,
                              .infer = infer_forward,
                              .cost = cost_forward});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kLayerNormGrad,
                              .category = OpCategory::kPrecisionSensitive,
                              .min_inputs = 4,
                              .max_inputs = 5,
                              .infer = infer_backward,
                              .cost = cost_backward});

NPUSCOPE_REGISTER_FLOAT_KERNELS(kLayerNormV3, forward_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kLayerNormGrad, backward_kernel);

}  // namespace npuscope::emulator::kernels

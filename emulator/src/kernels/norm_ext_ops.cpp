// InstanceNormalization, LpNormalization, MeanVarianceNormalization, LRN: ONNX semantics and
// attribute names. NPU: statistics accumulated in f32 (8 lanes where the data is contiguous, as a
// vector unit's partial sums), each result rounded to the output dtype once; CPU golden: f64.
//
// InstanceNormalization sees x as [N·C planes, spatial]; LpNormalization as [outer, len, inner]
// around its axis; MeanVarianceNormalization groups elements by their index over the dims it does
// not reduce; LRN sums squares over a window of channels at each [n, spatial] position.
#include <cmath>
#include <string>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {
namespace {

// ---- shapes -------------------------------------------------------------------------------------

std::vector<TensorMeta> infer_instance_norm(std::span<const TensorMeta> in, const Attrs&) {
  const char* op = "InstanceNormalization";
  require_same_dtype(in, op);
  require_floating(in, 0, op);
  const Shape& x = in[0].shape;
  if (x.size() < 3) fail(op, "x must be [N, C, D1, ...], got " + shape_str(x));
  for (int i = 1; i <= 2; ++i) {
    const Shape& p = in[static_cast<std::size_t>(i)].shape;
    if (p != Shape{x[1]}) {
      fail(op, std::string(i == 1 ? "scale" : "B") + " must be [" + std::to_string(x[1]) + "] for x " + shape_str(x) +
                   ", got " + shape_str(p));
    }
  }
  return {{x, in[0].dtype}};
}

std::vector<TensorMeta> infer_lp_norm(std::span<const TensorMeta> in, const Attrs& attrs) {
  const char* op = "LpNormalization";
  require_floating(in, 0, op);
  normalize_axis(attrs.get_int("axis", -1), static_cast<std::int64_t>(in[0].shape.size()), op);
  const std::int64_t p = attrs.get_int("p", 2);
  if (p != 1 && p != 2) fail(op, "p must be 1 or 2, got " + std::to_string(p));
  return {{in[0].shape, in[0].dtype}};
}

// The reduced axes of MeanVarianceNormalization as a per-dim mask (default {0, 2, 3}).
std::vector<bool> mvn_mask(const Shape& x, const Attrs& attrs) {
  const char* op = "MeanVarianceNormalization";
  const auto axes = attrs.get_ints("axes", {0, 2, 3});
  std::vector<bool> mask(x.size(), false);
  for (auto a : axes) {
    const auto d = static_cast<std::size_t>(normalize_axis(a, static_cast<std::int64_t>(x.size()), op));
    if (mask[d]) fail(op, "axes " + shape_str(axes) + " repeat an axis");
    mask[d] = true;
  }
  return mask;
}

std::vector<TensorMeta> infer_mvn(std::span<const TensorMeta> in, const Attrs& attrs) {
  require_floating(in, 0, "MeanVarianceNormalization");
  mvn_mask(in[0].shape, attrs);
  return {{in[0].shape, in[0].dtype}};
}

std::vector<TensorMeta> infer_lrn(std::span<const TensorMeta> in, const Attrs& attrs) {
  require_floating(in, 0, "LRN");
  if (in[0].shape.size() < 2) fail("LRN", "x must be [N, C, ...], got " + shape_str(in[0].shape));
  if (!attrs.has("size")) fail("LRN", "size is required");
  if (attrs.get_int("size", 1) < 1) fail("LRN", "size must be >= 1, got " + std::to_string(attrs.get_int("size", 1)));
  return {{in[0].shape, in[0].dtype}};
}

KernelCost cost_instance_norm(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, 8);  // mean, centre, square-sum, scale, shift
}
KernelCost cost_lp_norm(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, 3);  // |x|^p, sum, divide
}
KernelCost cost_mvn(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, 6);  // mean, centre, square-sum, divide
}
KernelCost cost_lrn(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs& attrs) {
  return vector_cost(in, out, 2.0 * static_cast<double>(attrs.get_int("size", 1)) + 4);  // window, pow, divide
}

// ---- kernels ------------------------------------------------------------------------------------

template <class T>
void instance_norm_kernel(KernelContext& ctx) {
  const TensorView& xv = ctx.inputs[0];
  const std::int64_t c = (*xv.shape)[1], planes = (*xv.shape)[0] * c;
  const std::int64_t len = planes == 0 ? 0 : xv.numel / planes;
  const T eps = static_cast<T>(ctx.attrs.get_float("epsilon", 1e-5));
  std::vector<T> x = load<T>(xv, ctx);
  const std::vector<T> scale = load<T>(ctx.inputs[1], ctx), bias = load<T>(ctx.inputs[2], ctx);
  for (std::int64_t p = 0; p < planes; ++p) {
    T* v = x.data() + p * len;
    const T mean = lane_sum<T>(len, [v](std::int64_t j) { return v[j]; }) / static_cast<T>(len);
    const T var =
        lane_sum<T>(len, [v, mean](std::int64_t j) { return (v[j] - mean) * (v[j] - mean); }) / static_cast<T>(len);
    const T a = scale[p % c] / std::sqrt(var + eps), b = bias[p % c];
    for (std::int64_t j = 0; j < len; ++j) v[j] = (v[j] - mean) * a + b;
  }
  store<T>(ctx.outputs[0], x.data(), ctx);
}

// y = x / ||x||_p along the axis (a zero vector gives 0/0 = NaN, as the ONNX reference does).
template <class T>
void lp_norm_kernel(KernelContext& ctx) {
  const TensorView& xv = ctx.inputs[0];
  const Shape& shape = *xv.shape;
  const auto axis = static_cast<std::size_t>(
      normalize_axis(ctx.attrs.get_int("axis", -1), static_cast<std::int64_t>(shape.size()), "LpNormalization"));
  const bool l1 = ctx.attrs.get_int("p", 2) == 1;
  const auto [outer, len, inner_] = split_at(shape, static_cast<std::int64_t>(axis));
  const std::int64_t inner = inner_;  // a lambda captures it: clang before 16 cannot capture a binding
  std::vector<T> x = load<T>(xv, ctx);
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t i = 0; i < inner; ++i) {
      T* v = x.data() + o * len * inner + i;
      const T sum = lane_sum<T>(len, [v, inner, l1](std::int64_t j) {
        const T e = v[j * inner];
        return l1 ? std::abs(e) : e * e;
      });
      const T norm = l1 ? sum : std::sqrt(sum);
      for (std::int64_t j = 0; j < len; ++j) v[j * inner] /= norm;
    }
  }
  store<T>(ctx.outputs[0], x.data(), ctx);
}

// Group id (flat index over the kept dims) of every element.
std::vector<std::int64_t> group_ids(const Shape& shape, const std::vector<bool>& reduced, std::int64_t& groups) {
  Shape kept_step(shape.size(), 0);
  groups = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    if (reduced[d]) continue;
    kept_step[d] = groups;
    groups *= shape[d];
  }
  std::vector<std::int64_t> ids(static_cast<std::size_t>(shape_numel(shape)));
  std::vector<std::int64_t> idx(shape.size(), 0);
  std::int64_t id = 0;
  for (auto& e : ids) {
    e = id;
    for (std::size_t d = shape.size(); d-- > 0;) {  // odometer step, keeping id in sync
      id += kept_step[d];
      if (++idx[d] < shape[d]) break;
      id -= kept_step[d] * shape[d];
      idx[d] = 0;
    }
  }
  return ids;
}

// y = (x − mean) / (sqrt(var) + 1e-9) over the axes: ONNX's function body (var = E[x²] − E[x]²
// there; here the centred two-pass form, equal up to rounding and never negative).
template <class T>
void mvn_kernel(KernelContext& ctx) {
  const TensorView& xv = ctx.inputs[0];
  std::int64_t groups = 0;
  const std::vector<std::int64_t> gid = group_ids(*xv.shape, mvn_mask(*xv.shape, ctx.attrs), groups);
  std::vector<T> x = load<T>(xv, ctx);
  std::vector<T> mean(static_cast<std::size_t>(groups), T(0)), var(mean);
  const T count = groups == 0 ? T(1) : static_cast<T>(xv.numel / groups);
  for (std::int64_t i = 0; i < xv.numel; ++i) mean[gid[i]] += x[i];
  for (auto& m : mean) m /= count;
  for (std::int64_t i = 0; i < xv.numel; ++i) var[gid[i]] += (x[i] - mean[gid[i]]) * (x[i] - mean[gid[i]]);
  for (auto& v : var) v = std::sqrt(v / count) + T(1e-9);
  for (std::int64_t i = 0; i < xv.numel; ++i) x[i] = (x[i] - mean[gid[i]]) / var[gid[i]];
  store<T>(ctx.outputs[0], x.data(), ctx);
}

// y = x / (bias + alpha / size · Σ x²)^beta, the sum over channels [c − ⌊(size−1)/2⌋, c + ⌈(size−1)/2⌉].
template <class T>
void lrn_kernel(KernelContext& ctx) {
  const TensorView& xv = ctx.inputs[0];
  const std::int64_t n = (*xv.shape)[0], c = (*xv.shape)[1];
  const std::int64_t plane = n * c == 0 ? 0 : xv.numel / (n * c);
  const std::int64_t size = ctx.attrs.get_int("size", 1), before = (size - 1) / 2, after = size / 2;
  const T alpha = static_cast<T>(ctx.attrs.get_float("alpha", 1e-4)) / static_cast<T>(size);
  const T beta = static_cast<T>(ctx.attrs.get_float("beta", 0.75)),
          bias = static_cast<T>(ctx.attrs.get_float("bias", 1.0));
  const std::vector<T> x = load<T>(xv, ctx);
  std::vector<T> y(x.size());
  std::vector<T> sq(static_cast<std::size_t>(plane));
  for (std::int64_t b = 0; b < n; ++b) {
    const T* xb = x.data() + b * c * plane;
    for (std::int64_t ch = 0; ch < c; ++ch) {
      std::fill(sq.begin(), sq.end(), T(0));
      for (std::int64_t k = std::max<std::int64_t>(0, ch - before); k <= std::min(c - 1, ch + after); ++k) {
        for (std::int64_t j = 0; j < plane; ++j) sq[j] += xb[k * plane + j] * xb[k * plane + j];
      }
      T* yc = y.data() + (b * c + ch) * plane;
      for (std::int64_t j = 0; j < plane; ++j) yc[j] = xb[ch * plane + j] / std::pow(bias + alpha * sq[j], beta);
    }
  }
  store<T>(ctx.outputs[0], y.data(), ctx);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = "InstanceNormalization",
                              .category = OpCategory::kPrecisionSensitive,
                              .min_inputs = 3,
                              .max_inputs = 3,
                              .infer = infer_instance_norm,
                              .cost = cost_instance_norm});
NPUSCOPE_REGISTER_OP(OpSchema{.type = "LpNormalization",
                              .category = OpCategory::kPrecisionSensitive,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_lp_norm,
                              .cost = cost_lp_norm});
NPUSCOPE_REGISTER_OP(OpSchema{.type = "MeanVarianceNormalization",
                              .category = OpCategory::kPrecisionSensitive,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_mvn,
                              .cost = cost_mvn});
NPUSCOPE_REGISTER_OP(OpSchema{.type = "LRN",
                              .category = OpCategory::kPrecisionSensitive,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_lrn,
                              .cost = cost_lrn});

NPUSCOPE_REGISTER_FLOAT_KERNELS("InstanceNormalization", instance_norm_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS("LpNormalization", lp_norm_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS("MeanVarianceNormalization", mvn_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS("LRN", lrn_kernel);

}  // namespace npuscope::emulator::kernels

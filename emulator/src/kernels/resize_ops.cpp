// Resize (ONNX opset 11-18 semantics, N-d): modes nearest / linear / cubic, every
// coordinate_transformation_mode, nearest_mode, cubic_coeff_a, exclude_outside,
// extrapolation_value; and ResizeGrad, its adjoint (dy and the input's shape, input_size, with
// Resize's attributes -> dx: the backward of upsample_nearest2d and upsample_bilinear2d, CANN's
// ResizeNearestNeighborV2Grad and ResizeBilinearV2Grad). The target comes as the attribute "scales"
// (floats) or "sizes" (ints), one per dim (both: sizes give the output, scales the coordinate map,
// as keep_aspect_ratio_policy needs), and tf_crop_and_resize's region as "roi" (floats, starts then
// ends); the ONNX adapter (onnx/adapters_nn.cpp) turns the node's inputs into these. NPU: interpolated in f32 and
// rounded to the output dtype once; CPU golden: f64.
//
// Note [Resize as separable passes]
// Linear, cubic and nearest interpolation are products of 1-D interpolations, so the kernel resizes
// one axis at a time, the last axis first, as the ONNX reference's recursion does (its result for a
// point outside the crop region of tf_crop_and_resize is extrapolation_value either way). Axes whose
// size and coordinate map leave them unchanged are skipped. Per axis, each output index gets its
// taps (input indices and weights), computed once in double from the ONNX formulas:
//   x_original = f(x_resized) by coordinate_transformation_mode, with length_resized = in · scale
//   (the reference's float length: align_corners on a 0.6 scale divides by 2.4 − 1, not 2 − 1;
//   tf_crop_and_resize given scales: in · scale · (roi_end − roi_start));
//   nearest: one tap, rounded by nearest_mode; linear: floor and floor + 1; cubic: floor − 1 ..
//   floor + 2 with Keys' coefficients (a = cubic_coeff_a). Taps outside the input clamp to the edge,
//   or with exclude_outside get weight 0 and the rest are renormalised.
// Output size: sizes, or floor(in · scale) (times roi_end − roi_start for tf_crop_and_resize, as the
// spec says). With sizes the scale used in the formulas is out / in.
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <string>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr const char* kOp = "Resize";

struct ResizeParams {
  std::string mode, ctm, nearest_mode;
  double cubic_a = -0.75, extrapolation = 0;
  bool exclude_outside = false, by_sizes = false;
  std::vector<double> scales, roi;  // per dim; roi: starts then ends
  Shape out;
};

std::string shape_str_of(const std::vector<double>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

void check_choice(const std::string& v, std::initializer_list<const char*> allowed, const char* name) {
  std::string list;
  for (const char* a : allowed) {
    if (v == a) return;
    list += std::string(list.empty() ? "" : ", ") + a;
  }
  fail(kOp, "unknown " + std::string(name) + " '" + v + "' (expected one of " + list + ")");
}

void read_modes(ResizeParams& p, const Attrs& attrs) {
  p.mode = attrs.get_string("mode", "nearest");
  p.ctm = attrs.get_string("coordinate_transformation_mode", "half_pixel");
  p.nearest_mode = attrs.get_string("nearest_mode", "round_prefer_floor");
  check_choice(p.mode, {"nearest", "linear", "cubic"}, "mode");
  check_choice(p.ctm,
               {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
                "tf_half_pixel_for_nn", "tf_crop_and_resize"},
               "coordinate_transformation_mode");
  check_choice(p.nearest_mode, {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}, "nearest_mode");
  p.cubic_a = attrs.get_float("cubic_coeff_a", -0.75);
  p.exclude_outside = attrs.get_int("exclude_outside", 0) != 0;
  p.extrapolation = attrs.get_float("extrapolation_value", 0.0);
}

// Validates the attributes against x (infer) and gives the parameters (infer and the kernels).
ResizeParams resize_params(const Shape& x, const Attrs& attrs) {
  ResizeParams p;
  read_modes(p, attrs);
  const std::size_t r = x.size();
  if (r == 0) fail(kOp, "x must have at least one dim");
  p.roi = attrs.get_floats("roi", {});
  if (p.roi.empty()) {
    p.roi.assign(r, 0.0);
    p.roi.resize(2 * r, 1.0);
  } else if (p.roi.size() != 2 * r) {
    fail(kOp, "roi must have " + std::to_string(2 * r) + " values (starts, ends) for x " + shape_str(x));
  }
  p.by_sizes = attrs.has("sizes");
  if (!p.by_sizes && !attrs.has("scales")) fail(kOp, "needs scales or sizes");
  if (attrs.has("scales")) {
    p.scales = attrs.get_floats("scales");
    if (p.scales.size() != r) {
      fail(kOp, "scales must have one value per dim of x " + shape_str(x) + ", got " + std::to_string(p.scales.size()));
    }
    for (double s : p.scales) {
      if (!(s > 0) || !std::isfinite(s)) fail(kOp, "scales must be positive and finite, got " + std::to_string(s));
    }
  }
  if (p.by_sizes) {
    p.out = attrs.get_ints("sizes");
    if (p.out.size() != r) fail(kOp, "sizes " + shape_str(p.out) + " must have one value per dim of x " + shape_str(x));
    for (std::size_t d = 0; d < r; ++d) {
      if (p.out[d] < 0) fail(kOp, "sizes " + shape_str(p.out) + " must not be negative");
      if (attrs.has("scales")) continue;
      p.scales.push_back(x[d] == 0 ? 1.0 : static_cast<double>(p.out[d]) / static_cast<double>(x[d]));
    }
    return p;
  }
  const bool crop = p.ctm == "tf_crop_and_resize";
  for (std::size_t d = 0; d < r; ++d) {
    const double extent = crop ? p.roi[d + r] - p.roi[d] : 1.0;
    const double size = std::floor(static_cast<double>(x[d]) * extent * p.scales[d]);
    if (size < 0) fail(kOp, "roi end < start along dim " + std::to_string(d) + " gives a negative size");
    // Cast only what fits (Note [Sizes from user input]); the dispatcher checks the tensor's size.
    if (!(size <= static_cast<double>(kMaxTensorBytes))) {
      fail(kOp, "scales " + shape_str_of(p.scales) + " make dim " + std::to_string(d) + " of x " + shape_str(x) + " " +
                    std::to_string(size) + " long, more than the tensor size limit of " +
                    std::to_string(kMaxTensorBytes) + " bytes allows");
    }
    p.out.push_back(static_cast<std::int64_t>(size));
  }
  return p;
}

std::vector<TensorMeta> infer_resize(std::span<const TensorMeta> in, const Attrs& attrs) {
  if (in[0].dtype == DType::kBool) fail(kOp, "bool input is not supported");
  return {{resize_params(in[0].shape, attrs).out, in[0].dtype}};
}

KernelCost cost_resize(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs& attrs) {
  const std::string mode = attrs.get_string("mode", "nearest");
  const double taps = mode == "cubic" ? 4 : mode == "linear" ? 2 : 0;
  const double rank = static_cast<double>(in[0].shape.size());
  return vector_cost(in, out, 2 * taps * rank);  // a multiply-add per tap and pass (upper bound)
}

// ---- taps ---------------------------------------------------------------------------------------

struct AxisTaps {
  int per = 1;                    // taps per output index
  std::vector<std::int64_t> idx;  // [out · per]; -1: extrapolation_value
  std::vector<double> weight;     // [out · per]
  bool identity = false;
};

// x_original of output index x on axis d (Note [Resize as separable passes]).
double original_coord(const ResizeParams& p, std::size_t d, std::int64_t in, std::int64_t out, double x) {
  const std::size_t r = p.scales.size();
  const double scale = p.scales[d], start = p.roi[d], end = p.roi[d + r];
  const bool crop = p.ctm == "tf_crop_and_resize";
  const auto fin = static_cast<double>(in);
  const double length = fin * scale * (crop && !p.by_sizes ? end - start : 1.0);
  if (p.ctm == "asymmetric") return x / scale;
  if (p.ctm == "align_corners") return length == 1 ? 0.0 : x * (fin - 1) / (length - 1);
  if (p.ctm == "pytorch_half_pixel") return length == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  if (p.ctm == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  if (p.ctm == "half_pixel_symmetric") {
    return fin / 2 * (1 - static_cast<double>(out) / length) + (x + 0.5) / scale - 0.5;
  }
  if (crop) {
    if (length == 1) return (end - start) * (fin - 1) / 2 + start * (fin - 1);
    return x * (end - start) * (fin - 1) / (length - 1) + start * (fin - 1);
  }
  return (x + 0.5) / scale - 0.5;  // half_pixel
}

std::int64_t nearest_index(double xo, const std::string& mode) {
  const double fl = std::floor(xo), frac = xo - fl;
  if (frac == 0) return static_cast<std::int64_t>(fl);
  bool up = mode == "ceil";
  if (mode == "round_prefer_floor") up = frac > 0.5;
  if (mode == "round_prefer_ceil") up = frac >= 0.5;
  return static_cast<std::int64_t>(fl) + (up ? 1 : 0);
}

// Keys' cubic convolution weights for taps floor − 1 .. floor + 2 at fraction t.
void cubic_weights(double t, double a, double* w) {
  auto near = [a](double s) { return ((a + 2) * s - (a + 3)) * s * s + 1; };       // |s| <= 1
  auto far = [a](double s) { return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a; };  // 1 < |s| < 2
  w[0] = far(t + 1);
  w[1] = near(t);
  w[2] = near(1 - t);
  w[3] = far(2 - t);
}

// Taps of one output index: fills idx/w (per entries) from x_original.
void taps_at(const ResizeParams& p, std::int64_t in, double xo, std::int64_t* idx, double* w) {
  const double fl = std::floor(xo), t = xo - fl;
  const auto base = static_cast<std::int64_t>(fl);
  if (p.mode == "nearest") {
    idx[0] = nearest_index(xo, p.nearest_mode);
    w[0] = 1;
  } else if (p.mode == "linear") {
    idx[0] = base, idx[1] = base + 1, w[0] = 1 - t, w[1] = t;
  } else {
    cubic_weights(t, p.cubic_a, w);
    for (int i = 0; i < 4; ++i) idx[i] = base - 1 + i;
  }
  const int per = p.mode == "nearest" ? 1 : p.mode == "linear" ? 2 : 4;
  double kept = 0;
  for (int i = 0; i < per; ++i) {
    if (p.exclude_outside && (idx[i] < 0 || idx[i] >= in)) w[i] = 0;
    idx[i] = std::clamp<std::int64_t>(idx[i], 0, in - 1);
    kept += w[i];
  }
  if (p.exclude_outside && kept != 0) {
    for (int i = 0; i < per; ++i) w[i] /= kept;
  }
}

AxisTaps axis_taps(const ResizeParams& p, std::size_t d, std::int64_t in, std::int64_t out) {
  AxisTaps a;
  a.per = p.mode == "nearest" ? 1 : p.mode == "linear" ? 2 : 4;
  a.idx.assign(static_cast<std::size_t>(out * a.per), 0);
  a.weight.assign(a.idx.size(), 0.0);
  a.identity = in == out;
  for (std::int64_t o = 0; o < out; ++o) {
    std::int64_t* idx = a.idx.data() + o * a.per;
    double* w = a.weight.data() + o * a.per;
    const double xo = original_coord(p, d, in, out, static_cast<double>(o));
    if (p.ctm == "tf_crop_and_resize" && (xo < 0 || xo > static_cast<double>(in - 1))) {
      idx[0] = -1;
      a.identity = false;
      continue;
    }
    taps_at(p, in, xo, idx, w);
    for (int i = 0; i < a.per; ++i) {
      if (w[i] != 0 && (idx[i] != o || w[i] != 1)) a.identity = false;
    }
  }
  return a;
}

// ---- kernel -------------------------------------------------------------------------------------

// Resizes axis d of `src` (shape `shape`) into `dst`; shape[d] becomes `out`.
template <class T>
void resize_axis(const std::vector<T>& src, std::vector<T>& dst, Shape& shape, std::size_t d, std::int64_t out,
                 const AxisTaps& a, T extrapolation) {
  const auto [outer, in, inner] = split_at(shape, static_cast<std::int64_t>(d));
  dst.assign(static_cast<std::size_t>(outer * out * inner), T(0));
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t j = 0; j < out; ++j) {
      T* y = dst.data() + (o * out + j) * inner;
      const std::int64_t* idx = a.idx.data() + j * a.per;
      if (idx[0] < 0) {
        std::fill(y, y + inner, extrapolation);
        continue;
      }
      for (int t = 0; t < a.per; ++t) {
        const T w = static_cast<T>(a.weight[static_cast<std::size_t>(j * a.per + t)]);
        if (w == T(0)) continue;  // so that an inf/NaN neighbour at weight 0 does not leak in
        const T* x = src.data() + (o * in + idx[t]) * inner;
        for (std::int64_t i = 0; i < inner; ++i) y[i] += w * x[i];
      }
    }
  }
  shape[d] = out;
}

template <class T>
void resize_kernel(KernelContext& ctx) {
  const TensorView& xv = ctx.inputs[0];
  const ResizeParams p = resize_params(*xv.shape, ctx.attrs);  // validated by infer: cannot throw
  Shape shape = *xv.shape;
  std::vector<T> cur = load<T>(xv, ctx), next;
  for (std::size_t d = shape.size(); d-- > 0;) {
    if (shape_numel(shape) == 0) break;
    const AxisTaps a = axis_taps(p, d, shape[d], p.out[d]);
    if (a.identity) continue;
    resize_axis(cur, next, shape, d, p.out[d], a, static_cast<T>(p.extrapolation));
    cur.swap(next);
  }
  cur.resize(static_cast<std::size_t>(ctx.outputs[0].numel));  // an empty input leaves zeros
  store<T>(ctx.outputs[0], cur.data(), ctx);
}

bool resize_npu_supports(std::span<const TensorMeta> in, const Attrs&) { return is_floating(in[0].dtype); }

// ---- ResizeGrad ---------------------------------------------------------------------------------

std::vector<TensorMeta> infer_resize_grad(std::span<const TensorMeta> in, const Attrs& attrs) {
  require_floating(in, 0, "ResizeGrad");
  const Shape x = size_attr(attrs, "input_size", {}, "ResizeGrad");
  const ResizeParams p = resize_params(x, attrs);
  if (p.out != in[0].shape) {
    fail("ResizeGrad",
         "dy has shape " + shape_str(in[0].shape) + " but Resize of " + shape_str(x) + " gives " + shape_str(p.out));
  }
  return {{x, in[0].dtype}};
}

// The adjoint of resize_axis: every output index hands w · dy to each of its taps.
template <class T>
void resize_axis_adjoint(const std::vector<T>& dy, std::vector<T>& dx, Shape& shape, std::size_t d, std::int64_t in,
                         const AxisTaps& a) {
  const auto [outer, out, inner] = split_at(shape, static_cast<std::int64_t>(d));
  dx.assign(static_cast<std::size_t>(outer * in * inner), T(0));
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t j = 0; j < out; ++j) {
      const T* g = dy.data() + (o * out + j) * inner;
      const std::int64_t* idx = a.idx.data() + j * a.per;
      if (idx[0] < 0) continue;  // extrapolated: no input contributed
      for (int t = 0; t < a.per; ++t) {
        const T w = static_cast<T>(a.weight[static_cast<std::size_t>(j * a.per + t)]);
        if (w == T(0)) continue;
        T* x = dx.data() + (o * in + idx[t]) * inner;
        for (std::int64_t i = 0; i < inner; ++i) x[i] += w * g[i];
      }
    }
  }
  shape[d] = in;
}

// Resize runs its axes last to first, so its adjoint runs them first to last.
template <class T>
void resize_grad_kernel(KernelContext& ctx) {
  const Shape x = size_attr(ctx.attrs, "input_size", {}, "ResizeGrad");
  const ResizeParams p = resize_params(x, ctx.attrs);  // validated by infer: cannot throw
  Shape shape = *ctx.inputs[0].shape;
  std::vector<T> cur = load<T>(ctx.inputs[0], ctx), next;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape_numel(shape) == 0) break;
    const AxisTaps a = axis_taps(p, d, x[d], p.out[d]);
    if (a.identity) continue;
    resize_axis_adjoint(cur, next, shape, d, x[d], a);
    cur.swap(next);
  }
  cur.resize(static_cast<std::size_t>(ctx.outputs[0].numel));
  store<T>(ctx.outputs[0], cur.data(), ctx);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = "Resize",
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_resize,
                              .cost = cost_resize});
NPUSCOPE_REGISTER_KERNEL_IF("Resize", Backend::kNpu, resize_kernel<float>, resize_npu_supports);
NPUSCOPE_REGISTER_KERNEL("Resize", Backend::kCpu, resize_kernel<double>);
NPUSCOPE_REGISTER_OP(OpSchema{.type = "ResizeGrad",
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_resize_grad,
                              .cost = cost_resize});
NPUSCOPE_REGISTER_FLOAT_KERNELS("ResizeGrad", resize_grad_kernel);

}  // namespace npuscope::emulator::kernels

// GridSample (ONNX opset 16, PyTorch's F.grid_sample): X [N, C, H, W] sampled at the normalised
// positions of grid [N, H_out, W_out, 2] ((x, y) in [-1, 1]) -> [N, C, H_out, W_out].
//   mode           bilinear (default) | nearest | bicubic (opset 20's linear / cubic accepted too)
//   padding_mode   zeros (default) | border | reflection
//   align_corners  0 (default): -1 and 1 are the outer edges of the corner pixels; 1: their centres
//   bicubic_padding  position (default, ONNX) | taps (PyTorch): see below; bilinear and nearest ignore it
// Vector op; NPU: interpolated in f32 and rounded to the output dtype once; CPU golden: f64.
//
// Note [GridSample taps]
// The ONNX reference (and onnxruntime's kernel it was ported from) is followed step by step, so that
// the corner cases agree: the position is denormalised (align_corners: (n + 1) / 2 · (len − 1),
// else ((n + 1) · len − 1) / 2); nearest rounds it half to even; a position outside [x_min, x_max]
// ([0, len − 1] or [−0.5, len − 0.5]) is clamped to [0, len − 1] (border) or reflected into
// [x_min, x_max] (reflection); then each tap (1 nearest, 2 × 2 bilinear, 4 × 4 bicubic with Keys'
// a = −0.75) reads the pixel at its integer position, which is 0 outside the image (zeros), clamped
// (border) or reflected again (reflection). The taps of a grid point are the same for all channels,
// so they are computed once per point and applied to every channel. PyTorch differs in one case:
// bicubic with border or reflection padding at a point outside [x_min, x_max]: it takes the 4 × 4
// taps around the denormalised position as it is and pads each tap's integer position (border
// clamps it, reflection reflects and clamps it), which bicubic_padding = taps selects (the PyTorch
// device's grid_sampler_2d sets it); tests/pytorch/test_vision_ops_onnx.py checks the ONNX
// convention against torch where the two agree.
// The modes and the position arithmetic are grid_sample_util.h's, shared with the gradient
// (GridSampler2DGrad, which follows PyTorch's backward instead: Note [GridSampler2DGrad as PyTorch]).
#include <algorithm>
#include <cmath>
#include <string>

#include "grid_sample_util.h"
#include "kernel_util.h"

namespace npuscope::emulator::kernels {
namespace {

using namespace grid_sample;

constexpr char kOp[] = "GridSample";

Params read_params(const Attrs& attrs) {
  Params p = grid_sample::read_params(attrs, kOp, "mode");
  const std::string bicubic_padding = attrs.get_string("bicubic_padding", "position");
  if (bicubic_padding != "position" && bicubic_padding != "taps") {
    fail(kOp, "unknown bicubic_padding '" + bicubic_padding + "' (expected position or taps)");
  }
  p.bicubic_pads_taps = bicubic_padding == "taps";
  return p;
}

std::vector<TensorMeta> infer_grid_sample(std::span<const TensorMeta> in, const Attrs& attrs) {
  read_params(attrs);
  require_floating(in, 0, kOp);
  require_floating(in, 1, kOp);
  const Shape &x = in[0].shape, &g = in[1].shape;
  if (x.size() != 4) fail(kOp, "X must be 4-D [N, C, H, W], got " + shape_str(x) + " (only 2-D sampling is supported)");
  if (g.size() != 4 || g[3] != 2 || g[0] != x[0]) {
    fail(kOp, "grid must be [N, H_out, W_out, 2] with X's N = " + std::to_string(x[0]) + ", got " + shape_str(g));
  }
  return {{{x[0], x[1], g[1], g[2]}, in[0].dtype}};
}

KernelCost cost_grid_sample(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs& attrs) {
  const std::string mode = attrs.get_string("mode", "bilinear");
  const double taps = mode == "nearest" ? 1 : (mode == "bicubic" || mode == "cubic") ? 16 : 4;
  return vector_cost(in, out, 2 * taps);  // a multiply-add per tap
}

// ---- taps (Note [GridSample taps]) --------------------------------------------------------------

// The position sampled on an axis after rounding (nearest) and padding; finite and within a few
// pixels of the image, except bicubic_padding = taps's (any double: tap_index pads each tap).
double position(double n, const Axis& a, const Params& p) {
  double x = denormalize(n, a);
  if (p.mode == Mode::kBicubic && p.bicubic_pads_taps) return x;  // each tap is padded (tap_index)
  if (p.mode == Mode::kNearest) x = std::nearbyint(x);
  if (!std::isfinite(x)) return a.lo - 4;  // NaN / inf: every tap falls outside (0 with zeros padding)
  if (x < a.lo || x > a.hi) {
    if (p.padding == Padding::kBorder) x = std::clamp(x, 0.0, static_cast<double>(a.len - 1));
    if (p.padding == Padding::kReflection) x = reflect(x, a.lo, a.hi);
  }
  return std::clamp(x, a.lo - 4, a.hi + 4);  // beyond 4 pixels out every tap reads padding anyway
}

// The 1-D taps along an axis: first integral position and weights (1, 2 or 4 of them).
int axis_taps(double x, Mode mode, double& first, double w[4]) {
  const double f = std::floor(x);
  switch (mode) {
    case Mode::kNearest:
      first = x;
      w[0] = 1;
      return 1;
    case Mode::kBilinear:
      first = f;
      w[0] = f + 1 - x;
      w[1] = x - f;
      return 2;
    case Mode::kBicubic:
      first = f - 1;
      cubic_weights(x - f, w);
      return 4;
  }
  return 0;
}

struct Taps {
  int per = 0;                    // taps per grid point
  std::vector<std::int64_t> idx;  // pixel index in one H x W plane, -1: zero
  std::vector<double> weight;
};

// The taps of every grid point of one batch item (grid: [points, 2] as (x, y)).
template <class T>
Taps point_taps(const T* grid, std::int64_t points, const Axis& ax, const Axis& ay, const Params& p) {
  Taps t;
  t.per = p.mode == Mode::kNearest ? 1 : p.mode == Mode::kBilinear ? 4 : 16;
  t.idx.resize(static_cast<std::size_t>(points * t.per));
  t.weight.resize(t.idx.size());
  for (std::int64_t q = 0; q < points; ++q) {
    double fx = 0, fy = 0, wx[4], wy[4];
    const int nx = axis_taps(position(static_cast<double>(grid[2 * q]), ax, p), p.mode, fx, wx);
    const int ny = axis_taps(position(static_cast<double>(grid[2 * q + 1]), ay, p), p.mode, fy, wy);
    auto k = static_cast<std::size_t>(q * t.per);
    for (int j = 0; j < ny; ++j) {
      const std::int64_t row = tap_index(fy + j, ay, p.padding);
      for (int i = 0; i < nx; ++i, ++k) {
        const std::int64_t col = tap_index(fx + i, ax, p.padding);
        t.idx[k] = row < 0 || col < 0 ? -1 : row * ax.len + col;
        t.weight[k] = wy[j] * wx[i];
      }
    }
  }
  return t;
}

template <class T>
void grid_sample_kernel(KernelContext& ctx) {
  const Params p = read_params(ctx.attrs);  // validated by infer
  const Shape& xs = *ctx.inputs[0].shape;
  const Shape& ys = *ctx.outputs[0].shape;
  const std::int64_t n = xs[0], c = xs[1], plane = xs[2] * xs[3], points = ys[2] * ys[3];
  const std::vector<T> x = load<T>(ctx.inputs[0], ctx), grid = load<T>(ctx.inputs[1], ctx);
  std::vector<T> y(static_cast<std::size_t>(ctx.outputs[0].numel));
  const Axis ax = make_axis(xs[3], p.align_corners), ay = make_axis(xs[2], p.align_corners);
  for (std::int64_t b = 0; b < n && plane > 0; ++b) {
    const Taps t = point_taps(grid.data() + b * points * 2, points, ax, ay, p);
    for (std::int64_t ch = 0; ch < c; ++ch) {
      const T* src = x.data() + (b * c + ch) * plane;
      T* dst = y.data() + (b * c + ch) * points;
      for (std::int64_t q = 0; q < points; ++q) {
        T acc = 0;
        for (int k = 0; k < t.per; ++k) {
          const auto at = static_cast<std::size_t>(q * t.per + k);
          if (t.idx[at] >= 0) acc += static_cast<T>(t.weight[at]) * src[t.idx[at]];
        }
        dst[q] = acc;
      }
    }
  }
  store<T>(ctx.outputs[0], y.data(), ctx);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kOp,
                              .category = OpCategory::kVector,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_grid_sample,
                              .cost = cost_grid_sample});
NPUSCOPE_REGISTER_FLOAT_KERNELS(kOp, grid_sample_kernel);

}  // namespace npuscope::emulator::kernels

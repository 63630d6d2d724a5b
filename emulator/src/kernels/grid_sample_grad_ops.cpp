// GridSampler2DGrad (CANN's op behind torch_npu's grid_sampler_2d_backward): the gradients of
// GridSample (F.grid_sample) with respect to its image and its grid:
//   (dy [N, C, H_out, W_out], X [N, C, H, W], grid [N, H_out, W_out, 2]) -> dx [N, C, H, W] (X's
//   dtype), dgrid [N, H_out, W_out, 2] (grid's dtype)
//   interpolation_mode  bilinear (default) | nearest | bicubic
//   padding_mode        zeros (default) | border | reflection
//   align_corners       0 (default) | 1, as GridSample's
// Vector op; NPU: f32 (the positions, shared by all channels, in f64 as GridSample's); CPU golden: f64.
//
// Note [GridSampler2DGrad as PyTorch]
// PyTorch 1.13's CPU backward (GridSampler.h's *_set_grad helpers) is followed, not the ONNX steps
// of GridSample's forward (Note [GridSample taps]); they sample the same values except in corner
// cases. Per axis, the grid value n becomes a position x with a slope dx/dn (grid_sample_util.h's
// source_index): denormalised (slope (len − 1) / 2 or len / 2), then border clips it to
// [0, len − 1] and reflection reflects it into [x_min, x_max] (slope ±1 by the parity of the
// reflections) and clips it. A clip's slope is 0 at and beyond the borders: PyTorch counts the
// borders as outside, so a point clamped onto an edge has no grid gradient along that axis.
//   bilinear: the 2 × 2 taps at floor(x), floor(x) + 1 (and y's) with weights w = wx · wy; a tap
//     outside the image reads 0 and receives nothing (the padding is already in the position).
//     dx[tap] += w · dy; dgrid_x = slope_x · Σ_channels Σ_taps (dw/dx) · X[tap] · dy, likewise y.
//   nearest: dx at (round-half-even x, y) += dy; dgrid = 0 (the output is piecewise constant).
//   bicubic: the position is only denormalised (slope as above, no padding), and the 4 × 4 taps at
//     floor(x) − 1 .. floor(x) + 2 (and y's) are padded one by one (grid_sample_util.h's tap_index:
//     zeros drops a tap outside, border clamps it, reflection reflects and clamps it, so several
//     taps may land on one pixel), with Keys' weights w = wx · wy (a = −0.75); dx and dgrid as
//     bilinear's. This is GridSample's bicubic_padding = taps.
// A point with every tap outside (zeros padding: x < −1 or x ≥ len), or at a NaN or infinite
// position, adds nothing to dx and gets dgrid 0 (PyTorch's CPU kernel puts NaN in some of its
// dgrid, and crashes on a NaN with border padding). The taps of a point are computed once and
// applied to every channel, as in GridSample.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "grid_sample_util.h"
#include "kernel_util.h"

namespace npuscope::emulator::kernels {
namespace {

using namespace grid_sample;

constexpr char kOp[] = "GridSampler2DGrad";

Params read_params(const Attrs& attrs) { return grid_sample::read_params(attrs, kOp, "interpolation_mode"); }

std::vector<TensorMeta> infer_grad(std::span<const TensorMeta> in, const Attrs& attrs) {
  read_params(attrs);
  for (int i = 0; i < 3; ++i) require_floating(in, i, kOp);
  const Shape &dy = in[0].shape, &x = in[1].shape, &g = in[2].shape;
  if (x.size() != 4) fail(kOp, "X must be 4-D [N, C, H, W], got " + shape_str(x));
  if (g.size() != 4 || g[3] != 2 || g[0] != x[0]) {
    fail(kOp, "grid must be [N, H_out, W_out, 2] with X's N = " + std::to_string(x[0]) + ", got " + shape_str(g));
  }
  const Shape want{x[0], x[1], g[1], g[2]};
  if (dy != want) fail(kOp, "dy must be [N, C, H_out, W_out] = " + shape_str(want) + ", got " + shape_str(dy));
  if (in[0].dtype != in[1].dtype) {
    fail(kOp, "dy and X must share a dtype, got " + std::string(dtype_name(in[0].dtype)) + " and " +
                  std::string(dtype_name(in[1].dtype)));
  }
  return {{x, in[1].dtype}, {g, in[2].dtype}};
}

KernelCost cost_grad(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs& attrs) {
  KernelCost c = vector_cost(in, out, 0);
  // Per element of dy: nearest adds it once; bilinear's 4 taps and bicubic's 16 each take a
  // multiply-add into dx and two into dgrid.
  const std::string mode = attrs.get_string("interpolation_mode", "bilinear");
  c.flops = static_cast<double>(in[0].numel()) * (mode == "nearest" ? 1 : mode == "bicubic" ? 96 : 24);
  return c;
}

// The taps of the grid points of one batch item, `per` a point (idx -1: a tap that reads 0 and
// receives nothing), each with its weight and the weight's derivatives by the position x and y;
// and each point's d position / d grid value.
struct GradTaps {
  int per = 0;
  std::vector<std::int64_t> idx;  // pixel index in one H x W plane
  std::vector<double> w, dwx, dwy;
  std::vector<double> slope_x, slope_y;

  GradTaps(Mode mode, std::int64_t points)
      : per(mode == Mode::kNearest    ? 1
            : mode == Mode::kBilinear ? 4
                                      : 16),
        idx(static_cast<std::size_t>(points * per)),
        w(idx.size()),
        dwx(idx.size()),
        dwy(idx.size()),
        slope_x(static_cast<std::size_t>(points)),
        slope_y(static_cast<std::size_t>(points)) {}
};

void nearest_taps(double x, double y, const Axis& ax, const Axis& ay, GradTaps& t, std::size_t k) {
  const double rx = std::nearbyint(x), ry = std::nearbyint(y);
  if (rx >= 0 && rx < static_cast<double>(ax.len) && ry >= 0 && ry < static_cast<double>(ay.len)) {
    t.idx[k] = static_cast<std::int64_t>(ry) * ax.len + static_cast<std::int64_t>(rx);
    t.w[k] = 1;
  }
}

void bilinear_taps(double x, double y, const Axis& ax, const Axis& ay, GradTaps& t, std::size_t k) {
  if (!(x >= -1 && x < static_cast<double>(ax.len) && y >= -1 && y < static_cast<double>(ay.len))) return;
  const double fx = std::floor(x), fy = std::floor(y);
  const double wx[2] = {fx + 1 - x, x - fx}, wy[2] = {fy + 1 - y, y - fy};
  for (int j = 0; j < 2; ++j) {
    const auto row = static_cast<std::int64_t>(fy) + j;
    for (int i = 0; i < 2; ++i, ++k) {
      const auto col = static_cast<std::int64_t>(fx) + i;
      if (row < 0 || row >= ay.len || col < 0 || col >= ax.len) continue;
      t.idx[k] = row * ax.len + col;
      t.w[k] = wy[j] * wx[i];
      t.dwx[k] = (i == 0 ? -1 : 1) * wy[j];
      t.dwy[k] = (j == 0 ? -1 : 1) * wx[i];
    }
  }
}

// x, y only denormalised: each tap is padded (Note [GridSampler2DGrad as PyTorch]).
void bicubic_taps(double x, double y, const Axis& ax, const Axis& ay, Padding padding, GradTaps& t, std::size_t k) {
  const double fx = std::floor(x), fy = std::floor(y);
  double wx[4], wy[4], dwx[4], dwy[4];
  cubic_weights(x - fx, wx, dwx);
  cubic_weights(y - fy, wy, dwy);
  for (int j = 0; j < 4; ++j) {
    const std::int64_t row = tap_index(fy - 1 + j, ay, padding);
    for (int i = 0; i < 4; ++i, ++k) {
      const std::int64_t col = tap_index(fx - 1 + i, ax, padding);
      if (row < 0 || col < 0) continue;
      t.idx[k] = row * ax.len + col;
      t.w[k] = wy[j] * wx[i];
      t.dwx[k] = wy[j] * dwx[i];
      t.dwy[k] = dwy[j] * wx[i];
    }
  }
}

// Point q's taps and slopes from its grid value (gx, gy); a NaN or infinite one has none.
void point_taps(double gx, double gy, const Axis& ax, const Axis& ay, const Params& p, GradTaps& t, std::size_t q) {
  const std::size_t k = q * static_cast<std::size_t>(t.per);
  std::fill_n(t.idx.begin() + static_cast<std::ptrdiff_t>(k), t.per, std::int64_t{-1});
  t.slope_x[q] = t.slope_y[q] = 0;
  if (!std::isfinite(gx) || !std::isfinite(gy)) return;
  if (p.mode == Mode::kBicubic) {
    t.slope_x[q] = denormalize_slope(ax);
    t.slope_y[q] = denormalize_slope(ay);
    bicubic_taps(denormalize(gx, ax), denormalize(gy, ay), ax, ay, p.padding, t, k);
    return;
  }
  const double x = source_index(gx, ax, p.padding, t.slope_x[q]), y = source_index(gy, ay, p.padding, t.slope_y[q]);
  if (p.mode == Mode::kNearest) {
    nearest_taps(x, y, ax, ay, t, k);
  } else {
    bilinear_taps(x, y, ax, ay, t, k);
  }
}

// One channel plane of one batch item: dx += the taps' share of dy; gx, gy (per point) += the
// gradient by the position (bilinear and bicubic).
template <class T>
void channel_grad(const GradTaps& t, bool smooth, const T* x, const T* dy, T* dx, T* gx, T* gy) {
  const std::size_t points = t.slope_x.size(), per = static_cast<std::size_t>(t.per);
  for (std::size_t q = 0; q < points; ++q) {
    const T go = dy[q];
    for (std::size_t k = q * per; k < (q + 1) * per; ++k) {
      if (t.idx[k] < 0) continue;
      dx[t.idx[k]] += static_cast<T>(t.w[k]) * go;
      if (!smooth) continue;
      const T v = x[t.idx[k]] * go;
      gx[q] += static_cast<T>(t.dwx[k]) * v;
      gy[q] += static_cast<T>(t.dwy[k]) * v;
    }
  }
}

template <class T>
void grid_sampler_2d_grad_kernel(KernelContext& ctx) {
  const Params p = read_params(ctx.attrs);  // validated by infer
  const Shape& xs = *ctx.inputs[1].shape;
  const Shape& gs = *ctx.inputs[2].shape;
  const std::int64_t n = xs[0], c = xs[1], plane = xs[2] * xs[3], points = gs[1] * gs[2];
  const std::vector<T> dy = load<T>(ctx.inputs[0], ctx), x = load<T>(ctx.inputs[1], ctx),
                       grid = load<T>(ctx.inputs[2], ctx);
  std::vector<T> dx(static_cast<std::size_t>(ctx.outputs[0].numel), T(0));
  std::vector<T> dgrid(static_cast<std::size_t>(ctx.outputs[1].numel), T(0));
  const Axis ax = make_axis(xs[3], p.align_corners), ay = make_axis(xs[2], p.align_corners);
  const bool smooth = p.mode != Mode::kNearest;  // nearest: dgrid stays 0
  GradTaps taps(p.mode, points);
  std::vector<T> gx(static_cast<std::size_t>(points)), gy(static_cast<std::size_t>(points));
  for (std::int64_t b = 0; b < n; ++b) {
    const T* g = grid.data() + b * points * 2;
    for (std::int64_t q = 0; q < points; ++q) {
      point_taps(static_cast<double>(g[2 * q]), static_cast<double>(g[2 * q + 1]), ax, ay, p, taps,
                 static_cast<std::size_t>(q));
    }
    std::fill(gx.begin(), gx.end(), T(0));
    std::fill(gy.begin(), gy.end(), T(0));
    for (std::int64_t ch = 0; ch < c; ++ch) {
      channel_grad(taps, smooth, x.data() + (b * c + ch) * plane, dy.data() + (b * c + ch) * points,
                   dx.data() + (b * c + ch) * plane, gx.data(), gy.data());
    }
    if (!smooth) continue;
    T* dg = dgrid.data() + b * points * 2;
    for (std::size_t q = 0; q < gx.size(); ++q) {
      dg[2 * q] = static_cast<T>(taps.slope_x[q]) * gx[q];
      dg[2 * q + 1] = static_cast<T>(taps.slope_y[q]) * gy[q];
    }
  }
  store<T>(ctx.outputs[0], dx.data(), ctx);
  store<T>(ctx.outputs[1], dgrid.data(), ctx);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kOp,
                              .category = OpCategory::kVector,
                              .min_inputs = 3,
                              .max_inputs = 3,
                              .infer = infer_grad,
                              .cost = cost_grad});
NPUSCOPE_REGISTER_FLOAT_KERNELS(kOp, grid_sampler_2d_grad_kernel);

}  // namespace npuscope::emulator::kernels

// What GridSample (grid_sample_ops.cpp) and its gradient GridSampler2DGrad (grid_sample_grad_ops.cpp)
// share: the modes and their attributes, the arithmetic that takes a normalised grid value to a
// pixel position (Note [GridSample taps]), each step with its slope for the gradient (Note
// [GridSampler2DGrad as PyTorch]), the padding of a tap, and bicubic's weights.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "kernel_util.h"

namespace npuscope::emulator::kernels::grid_sample {

enum class Mode { kBilinear, kNearest, kBicubic };
enum class Padding { kZeros, kBorder, kReflection };

struct Params {
  Mode mode = Mode::kBilinear;
  Padding padding = Padding::kZeros;
  bool align_corners = false;
  // Bicubic with border or reflection padding pads each tap's integer position (PyTorch) rather
  // than the sampled position first (ONNX); Note [GridSample taps].
  bool bicubic_pads_taps = false;
};

// The mode (attribute `mode_attr`: ONNX's "mode", CANN's "interpolation_mode"), padding_mode and
// align_corners; throws InvalidArgument naming `op` for an unknown mode.
inline Params read_params(const Attrs& attrs, const char* op, const char* mode_attr) {
  Params p;
  const std::string mode = attrs.get_string(mode_attr, "bilinear");
  if (mode == "bilinear" || mode == "linear") {
    p.mode = Mode::kBilinear;
  } else if (mode == "nearest") {
    p.mode = Mode::kNearest;
  } else if (mode == "bicubic" || mode == "cubic") {
    p.mode = Mode::kBicubic;
  } else {
    fail(op, "unknown " + std::string(mode_attr) + " '" + mode + "' (expected bilinear, nearest or bicubic)");
  }
  const std::string pad = attrs.get_string("padding_mode", "zeros");
  if (pad == "zeros") {
    p.padding = Padding::kZeros;
  } else if (pad == "border") {
    p.padding = Padding::kBorder;
  } else if (pad == "reflection") {
    p.padding = Padding::kReflection;
  } else {
    fail(op, "unknown padding_mode '" + pad + "' (expected zeros, border or reflection)");
  }
  p.align_corners = attrs.get_int("align_corners", 0) != 0;
  return p;
}

// One axis of the image: its length and the range [lo, hi] the grid's [-1, 1] maps onto.
struct Axis {
  std::int64_t len;
  double lo, hi;  // x_min, x_max: [0, len - 1] (align_corners) or [-0.5, len - 0.5]
  bool align_corners;
};

inline Axis make_axis(std::int64_t len, bool align_corners) {
  const auto l = static_cast<double>(len);
  return align_corners ? Axis{len, 0.0, l - 1, true} : Axis{len, -0.5, l - 0.5, false};
}

// The pixel position of normalised value n: (n + 1) / 2 · (len − 1) or ((n + 1) · len − 1) / 2.
inline double denormalize(double n, const Axis& a) {
  const auto l = static_cast<double>(a.len);
  return a.align_corners ? (n + 1) / 2 * (l - 1) : ((n + 1) * l - 1) / 2;
}
// d denormalize / dn.
inline double denormalize_slope(const Axis& a) { return static_cast<double>(a.align_corners ? a.len - 1 : a.len) / 2; }

// x reflected by the nearer border until it lies in [lo, hi] (x finite), as PyTorch's
// reflect_coordinates_set_grad: `slope` is d result / dx, +1 or -1 by the parity of the reflections.
inline double reflect(double x, double lo, double hi, double* slope = nullptr) {
  const double span = hi - lo;
  if (!(span > 0)) {
    if (slope != nullptr) *slope = 0;
    return lo;
  }
  const double sign = x < lo ? -1 : 1;
  const double in = std::fabs(x - lo), extra = std::fmod(in, span);
  const bool even = std::fmod(std::floor(in / span), 2) == 0;
  if (slope != nullptr) *slope = even ? sign : -sign;
  return even ? lo + extra : hi - extra;
}

// x clamped to [0, len − 1]; `slope` is 0 at and beyond the borders (PyTorch's
// clip_coordinates_set_grad: the borders count as outside for the gradient), else 1.
inline double clip(double x, std::int64_t len, double& slope) {
  const auto max = static_cast<double>(len - 1);
  slope = x > 0 && x < max ? 1 : 0;
  return x <= 0 ? 0 : x >= max ? max : x;
}

// PyTorch's grid_sampler_compute_source_index_set_grad: the position of normalised value n after
// the padding (border: clipped; reflection: reflected into [lo, hi], then clipped; zeros: as it is),
// and d position / dn in `slope`. n finite.
inline double source_index(double n, const Axis& a, Padding padding, double& slope) {
  double x = denormalize(n, a);
  slope = denormalize_slope(a);
  double s = 1;
  if (padding == Padding::kBorder) {
    x = clip(x, a.len, s);
    slope *= s;
  } else if (padding == Padding::kReflection) {
    x = reflect(x, a.lo, a.hi, &s);
    slope *= s;
    x = clip(x, a.len, s);
    slope *= s;
  }
  return x;
}

// The pixel index along an axis of the integral position p of a tap, or -1 for a tap that reads 0
// and receives nothing (outside the image with zeros padding, or p not finite). Border clamps p
// into the image; reflection reflects it into [lo, hi] and clamps (ONNX's and PyTorch's taps).
inline std::int64_t tap_index(double p, const Axis& a, Padding padding) {
  if (!std::isfinite(p)) return -1;
  const auto last = static_cast<double>(a.len - 1);
  switch (padding) {
    case Padding::kZeros: return p >= 0 && p <= last ? static_cast<std::int64_t>(p) : -1;
    case Padding::kBorder: return static_cast<std::int64_t>(std::clamp(p, 0.0, last));
    case Padding::kReflection: return static_cast<std::int64_t>(std::clamp(reflect(p, a.lo, a.hi), 0.0, last));
  }
  return -1;
}

// Keys' cubic convolution weights (a = −0.75) of the 4 taps floor(x) − 1 .. floor(x) + 2 for
// t = x − floor(x), and in `slope` (if given) their derivatives by x.
inline void cubic_weights(double t, double w[4], double* slope = nullptr) {
  constexpr double a = -0.75;
  const double x0 = t + 1, x1 = t, x2 = 1 - t, x3 = 2 - t;  // the taps' distances
  w[0] = ((a * x0 - 5 * a) * x0 + 8 * a) * x0 - 4 * a;
  w[1] = ((a + 2) * x1 - (a + 3)) * x1 * x1 + 1;
  w[2] = ((a + 2) * x2 - (a + 3)) * x2 * x2 + 1;
  w[3] = ((a * x3 - 5 * a) * x3 + 8 * a) * x3 - 4 * a;
  if (slope == nullptr) return;
  slope[0] = (3 * a * x0 - 10 * a) * x0 + 8 * a;
  slope[1] = (3 * (a + 2) * x1 - 2 * (a + 3)) * x1;
  slope[2] = -(3 * (a + 2) * x2 - 2 * (a + 3)) * x2;  // x2 falls as x rises
  slope[3] = -((3 * a * x3 - 10 * a) * x3 + 8 * a);
}

}  // namespace npuscope::emulator::kernels::grid_sample

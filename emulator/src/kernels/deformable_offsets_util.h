// The sampling of DeformableOffsets (Note [DeformableOffsets layout] in deformable_offsets_ops.cpp),
// shared by its forward and its gradient DeformableOffsetsGrad (deformable_offsets_grad_ops.cpp):
// one set of attributes, one check of x / offsets / mask with one set of messages, and one
// definition of where kernel tap (i, j) of output (oy, ox) samples and with which weights.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {

struct DeformParams {
  std::int64_t kh = 1, kw = 1, stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1;
  std::int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  std::int64_t groups = 1;  // deformable_groups (torchvision's offset_groups)
  std::int64_t n = 0, c = 0, h = 0, w = 0, out_h = 0, out_w = 0;
  bool modulated = false;  // a mask input is present
  std::int64_t taps() const { return kh * kw; }
  std::int64_t plane() const { return out_h * out_w; }
};

// Whether the optional mask (input `i`) is there: left out, or given as an absent tensor.
inline bool has_input(std::span<const TensorMeta> in, std::size_t i) { return i < in.size() && in[i].present; }
inline bool has_input(const KernelContext& ctx, std::size_t i) {
  return i < ctx.inputs.size() && ctx.inputs[i].shape != nullptr && ctx.inputs[i].data != nullptr;
}

// The attributes both ops take: ksize [kh, kw] (required), strides [sh, sw], pads [top, left,
// bottom, right] (Conv2d's order), dilations [dh, dw], deformable_groups. The output size is
// offsets' [H_out, W_out], checked against the convolution's formula with these.
inline DeformParams read_deform_attrs(const Attrs& attrs, const char* op) {
  DeformParams p;
  if (!attrs.has("ksize")) fail(op, "the attribute ksize [kh, kw] is required");
  const auto k = dim_ints(attrs, "ksize", 2, 1, 1, op);
  const auto s = dim_ints(attrs, "strides", 2, 1, 1, op);
  const auto pads = dim_ints(attrs, "pads", 4, 0, 0, op);
  const auto d = dim_ints(attrs, "dilations", 2, 1, 1, op);
  p.kh = k[0], p.kw = k[1], p.stride_h = s[0], p.stride_w = s[1], p.dil_h = d[0], p.dil_w = d[1];
  p.pad_top = pads[0], p.pad_left = pads[1], p.pad_bottom = pads[2], p.pad_right = pads[3];
  p.groups = attrs.get_int("deformable_groups", 1);
  if (p.groups < 1) fail(op, "deformable_groups must be >= 1, got " + std::to_string(p.groups));
  return p;
}

// The output extent of one axis, as a convolution's: (in + pads - dil * (k - 1) - 1) / stride + 1.
inline std::int64_t deform_out_dim(std::int64_t in, std::int64_t pads, std::int64_t k, std::int64_t dil,
                                   std::int64_t stride, const char* op) {
  const std::int64_t span = checked_add(checked_mul(dil, k - 1, op, "the dilated kernel"), 1, op, "the kernel");
  const std::int64_t room = checked_add(in, pads, op, "the padded input") - span;
  return room < 0 ? 0 : room / stride + 1;
}

// Checks x (input x_i) [N, C, H, W], offsets (x_i + 1) [N, 2 * groups * kh * kw, H_out, W_out] and
// the optional mask (x_i + 2) [N, groups * kh * kw, H_out, W_out], all of x's floating dtype.
inline DeformParams check_deform_inputs(std::span<const TensorMeta> in, std::size_t x_i, const Attrs& attrs,
                                        const char* op) {
  DeformParams p = read_deform_attrs(attrs, op);
  require_floating(in, static_cast<int>(x_i), op);
  const TensorMeta &x = in[x_i], &off = in[x_i + 1];
  if (x.shape.size() != 4) fail(op, "x must be 4-D [N, C, H, W], got " + shape_str(x.shape));
  p.n = x.shape[0], p.c = x.shape[1], p.h = x.shape[2], p.w = x.shape[3];
  if (p.c % p.groups != 0) {
    fail(op, "x's C (" + std::to_string(p.c) + ") must be a multiple of deformable_groups (" +
                 std::to_string(p.groups) + ")");
  }
  const std::int64_t out_h = deform_out_dim(p.h, p.pad_top + p.pad_bottom, p.kh, p.dil_h, p.stride_h, op);
  const std::int64_t out_w = deform_out_dim(p.w, p.pad_left + p.pad_right, p.kw, p.dil_w, p.stride_w, op);
  const std::int64_t taps = checked_mul(checked_mul(p.kh, p.kw, op, "kh * kw"), p.groups, op, "the taps");
  const Shape want{p.n, checked_mul(taps, 2, op, "the offsets' channels"), out_h, out_w};
  if (off.dtype != x.dtype) fail(op, "offsets must have x's dtype " + std::string(dtype_name(x.dtype)));
  if (off.shape != want) {
    fail(op, "offsets must be [N, 2 * deformable_groups * kh * kw, H_out, W_out] = " + shape_str(want) + ", got " +
                 shape_str(off.shape));
  }
  p.out_h = out_h, p.out_w = out_w;
  p.modulated = has_input(in, x_i + 2);
  if (p.modulated) {
    const TensorMeta& m = in[x_i + 2];
    const Shape want_mask{p.n, taps, out_h, out_w};
    if (m.dtype != x.dtype) fail(op, "mask must have x's dtype " + std::string(dtype_name(x.dtype)));
    if (m.shape != want_mask) {
      fail(op, "mask must be [N, deformable_groups * kh * kw, H_out, W_out] = " + shape_str(want_mask) + ", got " +
                   shape_str(m.shape));
    }
  }
  return p;
}

// The sampled tensor's shape, [N, C, H_out * kh, W_out * kw]: the input of the Conv2d with stride = kernel.
inline Shape deform_columns_shape(const DeformParams& p, const char* op) {
  return {p.n, p.c, checked_mul(p.out_h, p.kh, op, "H_out * kh"), checked_mul(p.out_w, p.kw, op, "W_out * kw")};
}

// The parameters of a kernel whose x is input x_i, its offsets x_i + 1 and its optional mask x_i + 2
// (the shapes were checked by check_deform_inputs).
inline DeformParams deform_params_of(const KernelContext& ctx, std::size_t x_i, const char* op) {
  DeformParams p = read_deform_attrs(ctx.attrs, op);
  const Shape &x = *ctx.inputs[x_i].shape, &off = *ctx.inputs[x_i + 1].shape;
  p.n = x[0], p.c = x[1], p.h = x[2], p.w = x[3], p.out_h = off[2], p.out_w = off[3];
  p.modulated = has_input(ctx, x_i + 2);
  return p;
}

// Where one tap samples an H x W plane: its 4 neighbours (floor, floor + 1 on each axis), which of
// them lie on the map, and the fractions. `inside` is the forward's test (torchvision's bilinear
// interpolation: -1 < y < H and -1 < x < W, else the sample is 0); `near` holds for the wider
// -1 <= y < H, -1 <= x < W in which the offsets' gradient may see a neighbour (torchvision's
// coordinate weight has no range test of its own). NaN positions are neither (Note [DeformableOffsets layout]).
struct DeformTap {
  std::int64_t y0 = 0, x0 = 0;
  double ly = 0, lx = 0;
  bool vy0 = false, vy1 = false, vx0 = false, vx1 = false;
  bool inside = false, near = false;
};

inline DeformTap deform_tap(double y, double x, std::int64_t h, std::int64_t w) {
  DeformTap t;
  const auto hd = static_cast<double>(h), wd = static_cast<double>(w);
  if (!(y >= -1 && y < hd && x >= -1 && x < wd)) return t;  // also NaN
  t.near = true;
  t.inside = y > -1 && x > -1;
  const double fy = std::floor(y), fx = std::floor(x);
  t.y0 = static_cast<std::int64_t>(fy), t.x0 = static_cast<std::int64_t>(fx);
  t.ly = y - fy, t.lx = x - fx;
  t.vy0 = t.y0 >= 0, t.vy1 = t.y0 + 1 < h, t.vx0 = t.x0 >= 0, t.vx1 = t.x0 + 1 < w;
  return t;
}

// The four neighbours' values (0 off the map): [y0x0, y0x1, y1x0, y1x1].
template <class T>
void tap_values(const T* plane, std::int64_t w, const DeformTap& t, T v[4]) {
  const std::int64_t base = t.y0 * w + t.x0;
  v[0] = t.vy0 && t.vx0 ? plane[base] : T(0);
  v[1] = t.vy0 && t.vx1 ? plane[base + 1] : T(0);
  v[2] = t.vy1 && t.vx0 ? plane[base + w] : T(0);
  v[3] = t.vy1 && t.vx1 ? plane[base + w + 1] : T(0);
}

// The bilinear weights of the four neighbours, in tap_values' order.
template <class T>
void tap_weights(const DeformTap& t, T wt[4]) {
  const T ly = static_cast<T>(t.ly), lx = static_cast<T>(t.lx), hy = 1 - ly, hx = 1 - lx;
  wt[0] = hy * hx, wt[1] = hy * lx, wt[2] = ly * hx, wt[3] = ly * lx;
}

// The taps of every (n, group, kernel tap, oy, ox), in that order, with their mask values (1 when
// not modulated): what both ops iterate over, computed once and reused for every channel of the group.
template <class T>
void deform_taps(const DeformParams& p, const T* offsets, const T* mask, std::vector<DeformTap>& taps,
                 std::vector<T>& mask_values) {
  const std::int64_t plane = p.plane(), kk = p.taps();
  taps.resize(static_cast<std::size_t>(p.n * p.groups * kk * plane));
  mask_values.assign(taps.size(), T(1));
  std::size_t at = 0;
  for (std::int64_t ng = 0; ng < p.n * p.groups; ++ng) {
    const T* off = offsets + ng * 2 * kk * plane;
    for (std::int64_t k = 0; k < kk; ++k) {
      const std::int64_t i = k / p.kw, j = k % p.kw;
      for (std::int64_t oy = 0; oy < p.out_h; ++oy) {
        for (std::int64_t ox = 0; ox < p.out_w; ++ox, ++at) {
          const std::int64_t pix = oy * p.out_w + ox;
          const auto y = static_cast<double>(oy * p.stride_h - p.pad_top + i * p.dil_h) +
                         static_cast<double>(off[2 * k * plane + pix]);
          const auto x = static_cast<double>(ox * p.stride_w - p.pad_left + j * p.dil_w) +
                         static_cast<double>(off[(2 * k + 1) * plane + pix]);
          taps[at] = deform_tap(y, x, p.h, p.w);
          if (mask != nullptr) mask_values[at] = mask[(ng * kk + k) * plane + pix];
        }
      }
    }
  }
}

}  // namespace npuscope::emulator::kernels

// Conv3d's geometry (NCDHW input, [Cout, Cin/group, kD, kH, kW] weight), the vol2col transform in
// front of its GEMMs (conv3d_ops.cpp) and its adjoint col2vol (conv3d_backward_ops.cpp). The 3-D
// analogues of conv_util.h's im2col and col2im.
//
// Attributes: strides {sd, sh, sw}, pads {front, top, left, back, bottom, right} (ONNX's begins then
// ends), dilations {dd, dh, dw}, and the group count from "group" (ONNX) or "groups" (aten).
#pragma once

#include <algorithm>

#include "conv_util.h"

namespace npuscope::emulator::kernels {

struct Conv3dGeom {
  std::int64_t n = 0, c = 0, d = 0, h = 0, w = 0;  // input
  std::int64_t cout = 0, kd = 0, kh = 0, kw = 0;   // weight
  std::int64_t od = 0, oh = 0, ow = 0;             // output
  std::int64_t sd = 1, sh = 1, sw = 1, pf = 0, pt = 0, pl = 0, dd = 1, dh = 1, dw = 1, group = 1;
  std::int64_t cin_g() const { return c / group; }
  std::int64_t cout_g() const { return cout / group; }
  std::int64_t taps() const { return kd * kh * kw; }
  std::int64_t kdim() const { return cin_g() * taps(); }  // GEMM K
  std::int64_t in_vol() const { return d * h * w; }
  std::int64_t out_vol() const { return od * oh * ow; }  // GEMM N
  // A 1x1x1 kernel with unit strides and no padding: the input is already the GEMM's B.
  bool direct() const {
    return taps() == 1 && sd == 1 && sh == 1 && sw == 1 && pf == 0 && pt == 0 && pl == 0 && od == d && oh == h &&
           ow == w;
  }
};

// Validates x [N, C, D, H, W], w [Cout, C/group, kD, kH, kW] and the attributes; throws
// InvalidArgument naming `op`.
Conv3dGeom conv3d_geom(const Shape& x, const Shape& w, const Attrs& attrs, const char* op);

// One vol2col row over the output depth slices [oz0, oz1): for every output voxel, the value of channel plane `x` [D,
// H, W] under kernel tap (kz, ky, kx), zero where the tap falls in the padding. The valid output columns are found once
// per row, so the inner loop has no bounds checks.
template <class T>
void vol2col_row(const T* x, const Conv3dGeom& g, std::int64_t oz0, std::int64_t oz1, std::int64_t kz, std::int64_t ky,
                 std::int64_t kx, T* row) {
  const std::int64_t xoff = kx * g.dw - g.pl;  // input column of output column 0
  const auto [lo, hi] = conv_valid_cols(g.w, g.sw, xoff, g.ow);
  for (std::int64_t oz = oz0; oz < oz1; ++oz) {
    const std::int64_t iz = oz * g.sd - g.pf + kz * g.dd;
    for (std::int64_t oy = 0; oy < g.oh; ++oy) {
      T* dst = row + ((oz - oz0) * g.oh + oy) * g.ow;
      const std::int64_t iy = oy * g.sh - g.pt + ky * g.dh;
      if (iz < 0 || iz >= g.d || iy < 0 || iy >= g.h) {
        std::fill(dst, dst + g.ow, T(0));
        continue;
      }
      gather_conv_row(x + (iz * g.h + iy) * g.w, g.sw, xoff, lo, hi, g.ow, dst);
    }
  }
}

// col [Cin/group · kD · kH · kW, (oz1 − oz0) · Ho · Wo] for one image and group (x at its first
// channel) and the output depth slices [oz0, oz1), rows in the weight's (channel, kz, ky, kx) order
// and `ld` apart (ld >= the row length: the columns of several images side by side).
template <class T>
void vol2col(const T* x, const Conv3dGeom& g, std::int64_t oz0, std::int64_t oz1, T* col, std::int64_t ld) {
  std::int64_t r = 0;
  for (std::int64_t c = 0; c < g.cin_g(); ++c) {
    for (std::int64_t kz = 0; kz < g.kd; ++kz) {
      for (std::int64_t ky = 0; ky < g.kh; ++ky) {
        for (std::int64_t kx = 0; kx < g.kw; ++kx, ++r) {
          vol2col_row(x + c * g.in_vol(), g, oz0, oz1, kz, ky, kx, col + r * ld);
        }
      }
    }
  }
}

// The vol2col buffer's budget: Note [Conv3d depth chunks] in conv3d_ops.cpp.
inline constexpr std::int64_t kConv3dScratchBytes = std::int64_t{16} << 20;

// Depth slices of output per chunk of the vol2col matrix that keep it within kConv3dScratchBytes
// (at least one slice): Note [Conv3d depth chunks].
inline std::int64_t conv3d_slices_per_chunk(const Conv3dGeom& g, std::int64_t elem) {
  const std::int64_t per_slice = std::max<std::int64_t>(1, g.kdim() * g.oh * g.ow * elem);
  return std::clamp<std::int64_t>(kConv3dScratchBytes / per_slice, 1, std::max<std::int64_t>(g.od, 1));
}

// The adjoint of vol2col over the output depth slices [oz0, oz1): adds every col row (rows `ld`
// apart) back into the input volumes it was read from (what falls in the padding is dropped). x
// points at the group's first channel and accumulates.
template <class T>
void col2vol(const T* col, const Conv3dGeom& g, std::int64_t oz0, std::int64_t oz1, T* x, std::int64_t ld) {
  std::int64_t r = 0;
  for (std::int64_t c = 0; c < g.cin_g(); ++c) {
    T* vol = x + c * g.in_vol();
    for (std::int64_t kz = 0; kz < g.kd; ++kz) {
      for (std::int64_t ky = 0; ky < g.kh; ++ky) {
        for (std::int64_t kx = 0; kx < g.kw; ++kx, ++r) {
          const T* row = col + r * ld;
          const std::int64_t xoff = kx * g.dw - g.pl;
          const auto [lo, hi] = conv_valid_cols(g.w, g.sw, xoff, g.ow);
          for (std::int64_t oz = oz0; oz < oz1; ++oz) {
            const std::int64_t iz = oz * g.sd - g.pf + kz * g.dd;
            if (iz < 0 || iz >= g.d) continue;
            for (std::int64_t oy = 0; oy < g.oh; ++oy) {
              const std::int64_t iy = oy * g.sh - g.pt + ky * g.dh;
              if (iy < 0 || iy >= g.h) continue;
              T* dst = vol + (iz * g.h + iy) * g.w + xoff;
              const T* src = row + ((oz - oz0) * g.oh + oy) * g.ow;
              if (g.sw == 1) {
                for (std::int64_t j = lo; j < hi; ++j) dst[j] += src[j];  // vectorises
              } else {
                for (std::int64_t j = lo; j < hi; ++j) dst[j * g.sw] += src[j];
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace npuscope::emulator::kernels

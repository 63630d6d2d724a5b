// Shared by Conv2d (conv_ops.cpp) and its gradients (conv_backward_ops.cpp): the 2-D convolution
// geometry and the im2col / col2im transforms around the GEMMs; the operands and the row gather of
// every convolution (also conv3d_ops.cpp, conv_transpose_ops.cpp).
//
// Attributes (all ops): strides {sh, sw}, pads {top, left, bottom, right}, dilations {dh, dw} and
// the group count, read from "group" (ONNX's name) or "groups" (aten's name; giving both with
// different values is an error).
#pragma once

#include <algorithm>
#include <optional>
#include <vector>

#include "gemm_util.h"

namespace npuscope::emulator::kernels {

struct ConvGeom {
  std::int64_t n = 0, c = 0, h = 0, w = 0;  // input
  std::int64_t cout = 0, kh = 0, kw = 0;    // weight
  std::int64_t oh = 0, ow = 0;              // output
  std::int64_t sh = 1, sw = 1, pt = 0, pl = 0, dh = 1, dw = 1, group = 1;
  std::int64_t cin_g() const { return c / group; }
  std::int64_t cout_g() const { return cout / group; }
  std::int64_t kdim() const { return cin_g() * kh * kw; }  // GEMM K
  std::int64_t hw() const { return oh * ow; }
  bool direct() const { return kh == 1 && kw == 1 && sh == 1 && sw == 1 && pt == 0 && pl == 0 && oh == h && ow == w; }
};

// The input and weight metas of a convolution kernel's context, for the geometry functions.
inline std::vector<TensorMeta> conv_operand_metas(const KernelContext& ctx) {
  return {{*ctx.inputs[0].shape, ctx.inputs[0].dtype}, {*ctx.inputs[1].shape, ctx.inputs[1].dtype}};
}

// A convolution kernel's operands as T buffers (Note [Cube numerics]): x, w, the optional bias
// (input 2) and the output y.
template <class T>
struct ConvOperands {
  explicit ConvOperands(KernelContext& ctx) : x(ctx.inputs[0], ctx), w(ctx.inputs[1], ctx), y(ctx.outputs[0]) {
    if (ctx.inputs.size() > 2 && ctx.inputs[2].data != nullptr) bias_operand.emplace(ctx.inputs[2], ctx);
  }
  // Null without a bias.
  const T* bias() const { return bias_operand ? bias_operand->data() : nullptr; }

  GemmOperand<T> x, w;
  std::optional<GemmOperand<T>> bias_operand;
  GemmResult<T> y;
};

// The output size of a dim of `in` values padded by `pad` in all, for a kernel of `k` taps (checked:
// Note [Sizes from user input]); errors name `op`.
std::int64_t conv_out_size(std::int64_t in, std::int64_t pad, std::int64_t k, std::int64_t stride,
                           std::int64_t dilation, const char* op);

// The group count, from "group" (ONNX) or "groups" (aten); both with different values is an error.
std::int64_t conv_group_attr(const Attrs& attrs, const char* op);

// Validates the input shape `x` [N, C, H, W], the weight shape `w` [Cout, C/group, kH, kW] and the
// attributes; throws InvalidArgument naming `op`.
ConvGeom conv_geom(const Shape& x, const Shape& w, const Attrs& attrs, const char* op);

// The columns [lo, hi) of an output row whose input column ow·stride + off lies inside [0, in).
inline std::pair<std::int64_t, std::int64_t> conv_valid_cols(std::int64_t in, std::int64_t stride, std::int64_t off,
                                                             std::int64_t out) {
  const std::int64_t lo = off >= 0 ? 0 : std::min(out, (-off + stride - 1) / stride);
  const std::int64_t hi = in - 1 - off < 0 ? lo : std::clamp((in - 1 - off) / stride + 1, lo, out);
  return {lo, hi};
}

// One output row of an im2col-style transform: dst[j] = src[j · stride + off] for the valid columns
// j in [lo, hi) (conv_valid_cols), zero for the `out` - (hi - lo) columns in the padding.
template <class T>
void gather_conv_row(const T* src, std::int64_t stride, std::int64_t off, std::int64_t lo, std::int64_t hi,
                     std::int64_t out, T* dst) {
  std::fill(dst, dst + lo, T(0));
  if (stride == 1) {
    std::copy(src + lo + off, src + hi + off, dst + lo);
  } else {
    for (std::int64_t j = lo; j < hi; ++j) dst[j] = src[j * stride + off];
  }
  std::fill(dst + hi, dst + out, T(0));
}

// One im2col row: for each output pixel, the input value under kernel tap (ki, kj) of one channel
// (zero where the tap falls in the padding). Valid output columns are found once per row, so the
// inner loop has no bounds checks.
template <class T>
void im2col_row(const T* x, const ConvGeom& g, std::int64_t ki, std::int64_t kj, T* row) {
  const std::int64_t woff = kj * g.dw - g.pl;  // input column of output column 0
  const auto [lo, hi] = conv_valid_cols(g.w, g.sw, woff, g.ow);
  for (std::int64_t oh = 0; oh < g.oh; ++oh) {
    T* dst = row + oh * g.ow;
    const std::int64_t ih = oh * g.sh - g.pt + ki * g.dh;
    if (ih < 0 || ih >= g.h) {
      std::fill(dst, dst + g.ow, T(0));
      continue;
    }
    gather_conv_row(x + ih * g.w, g.sw, woff, lo, hi, g.ow, dst);
  }
}

// col [Cin/group · kH · kW, Hout · Wout] for one image and group (x points at its first channel);
// col's rows are `ld` apart (ld >= Hout · Wout: the columns of several images side by side).
template <class T>
void im2col(const T* x, const ConvGeom& g, T* col, std::int64_t ld) {
  for (std::int64_t c = 0; c < g.cin_g(); ++c) {
    for (std::int64_t ki = 0; ki < g.kh; ++ki) {
      for (std::int64_t kj = 0; kj < g.kw; ++kj) {
        im2col_row(x + c * g.h * g.w, g, ki, kj, col + ((c * g.kh + ki) * g.kw + kj) * ld);
      }
    }
  }
}

// The adjoint of im2col: adds every col row (rows `ld` apart) back into the input planes it was read
// from (what falls in the padding is dropped). x points at the group's first channel and accumulates.
template <class T>
void col2im(const T* col, const ConvGeom& g, T* x, std::int64_t ld) {
  for (std::int64_t c = 0; c < g.cin_g(); ++c) {
    T* plane = x + c * g.h * g.w;
    for (std::int64_t ki = 0; ki < g.kh; ++ki) {
      for (std::int64_t kj = 0; kj < g.kw; ++kj) {
        const T* row = col + ((c * g.kh + ki) * g.kw + kj) * ld;
        const std::int64_t woff = kj * g.dw - g.pl;
        const auto [lo, hi] = conv_valid_cols(g.w, g.sw, woff, g.ow);
        for (std::int64_t oh = 0; oh < g.oh; ++oh) {
          const std::int64_t ih = oh * g.sh - g.pt + ki * g.dh;
          if (ih < 0 || ih >= g.h) continue;
          T* dst = plane + ih * g.w + woff;
          const T* src = row + oh * g.ow;
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

// ---- several images per GEMM ----------------------------------------------------------------------
//
// Note [Batched convolution GEMMs]
// One GEMM per (image, group) gave the BLAS small, skinny products (a 512-channel 7x7 layer: N = 49
// columns) and opened a parallel region per image, whose threads spun while the next im2col ran:
// the convolution ops took twice PyTorch's time on ResNet-18's layers. They now multiply the
// columns of `nb` images at once: im2col writes the images side by side, col [K, nb · Ho · Wo], and
// the per-image planes of dy (or of y) are gathered into (scattered from) a [Cout/group, nb · Ho · Wo]
// matrix. nb is as many images as keep those two buffers within kConvScratchBytes (at least one;
// with one image nothing is gathered and the GEMM reads and writes the tensors in place). The budget
// is small on purpose: a ResNet-18 training step (batch 8) took 0.87 s with 96 MiB, 0.80 s with
// 32 MiB, 0.83 s with 16 MiB, 0.77-0.79 s with 8 MiB, 0.75-0.80 s with 4 MiB and 0.79-0.82 s with
// 2 MiB (medians and minima of 8 steps, 2 cores): columns that stay near the caches beat fewer
// GEMMs once a GEMM has thousands of columns, so the 56x56 layers run an image per GEMM (3136
// columns) while the 7x7 ones run all 8 together (392 columns instead of 49). Each output
// still accumulates in f32 (Note [Cube numerics]); the filter gradient now sums the images inside
// one GEMM instead of across GEMMs (beta = 1), an order the cube does not fix either.
inline constexpr std::int64_t kConvScratchBytes = std::int64_t{8} << 20;

// Images per GEMM for a buffer of `rows_per_image` rows of Ho · Wo values of `elem` bytes each.
inline std::int64_t images_per_gemm(const ConvGeom& g, std::int64_t rows_per_image, std::int64_t elem) {
  const std::int64_t per_image = std::max<std::int64_t>(1, rows_per_image * g.hw() * elem);
  return std::clamp<std::int64_t>(kConvScratchBytes / per_image, 1, std::max<std::int64_t>(g.n, 1));
}

// nb planes of [rows, hw] values, plane i at src + i · stride, side by side into dst [rows, nb · hw].
template <class T>
void gather_planes(const T* src, std::int64_t stride, std::int64_t rows, std::int64_t hw, std::int64_t nb, T* dst) {
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t i = 0; i < nb; ++i) std::copy_n(src + i * stride + r * hw, hw, dst + (r * nb + i) * hw);
  }
}

// The inverse of gather_planes: src [rows, nb · hw] to nb planes at dst + i · stride.
template <class T>
void scatter_planes(const T* src, std::int64_t stride, std::int64_t rows, std::int64_t hw, std::int64_t nb, T* dst) {
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t i = 0; i < nb; ++i) std::copy_n(src + (r * nb + i) * hw, hw, dst + i * stride + r * hw);
  }
}

}  // namespace npuscope::emulator::kernels

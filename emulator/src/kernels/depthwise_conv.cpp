// See Note [Direct grouped convolution] in depthwise_conv.h.
#include "depthwise_conv.h"

#include <algorithm>
#include <limits>
#include <vector>

namespace npuscope::emulator::kernels {
namespace {

// Kernel column kj's valid output columns [lo, hi) and the input column of output column 0.
struct TapCols {
  std::int64_t lo = 0, hi = 0, woff = 0;
};

std::vector<TapCols> tap_cols(const ConvGeom& g) {
  std::vector<TapCols> cols(static_cast<std::size_t>(g.kw));
  for (std::int64_t kj = 0; kj < g.kw; ++kj) {
    const std::int64_t woff = kj * g.dw - g.pl;
    const auto [lo, hi] = conv_valid_cols(g.w, g.sw, woff, g.ow);
    cols[static_cast<std::size_t>(kj)] = {lo, hi, woff};
  }
  return cols;
}

// acc[j] += wv · src[j · stride + woff] over [lo, hi); strides 1 and 2 get loops the compiler vectorises.
template <class T>
[[gnu::always_inline]] inline void add_tap(T* acc, const T* src, T wv, const TapCols& c, std::int64_t stride) {
  if (stride == 1) {
    for (std::int64_t j = c.lo; j < c.hi; ++j) acc[j] += wv * src[j + c.woff];
  } else if (stride == 2) {
    for (std::int64_t j = c.lo; j < c.hi; ++j) acc[j] += wv * src[2 * j + c.woff];
  } else {
    for (std::int64_t j = c.lo; j < c.hi; ++j) acc[j] += wv * src[j * stride + c.woff];
  }
}

// Columns [lo, hi) where every kernel column's tap is valid (empty when the kernel is wider than
// the input).
TapCols common_cols(const std::vector<TapCols>& cols) {
  TapCols c{0, std::numeric_limits<std::int64_t>::max(), 0};
  for (const TapCols& t : cols) c.lo = std::max(c.lo, t.lo), c.hi = std::min(c.hi, t.hi);
  c.hi = std::max(c.hi, c.lo);
  return c;
}

// All KW taps of one input row in one pass over the output row (one load and store of each output
// instead of KW): the common columns vectorised, the few edge columns tap by tap. Each output adds
// the taps in the order add_tap's passes would, so the bits are the same.
template <int KW, int S, class T>
[[gnu::always_inline]] inline void add_row_fused(T* acc, const T* src, const T* wr, const TapCols* cols,
                                                 const TapCols& common, std::int64_t ow) {
  const auto edge = [&](std::int64_t j) {
    for (int k = 0; k < KW; ++k) {
      if (j >= cols[k].lo && j < cols[k].hi) acc[j] += wr[k] * src[S * j + cols[k].woff];
    }
  };
  for (std::int64_t j = 0; j < common.lo; ++j) edge(j);
  std::int64_t off[KW];
  T wv[KW];
  for (int k = 0; k < KW; ++k) off[k] = cols[k].woff, wv[k] = wr[k];
  for (std::int64_t j = common.lo; j < common.hi; ++j) {
    T a = acc[j];
    for (int k = 0; k < KW; ++k) a += wv[k] * src[S * j + off[k]];
    acc[j] = a;
  }
  for (std::int64_t j = common.hi; j < ow; ++j) edge(j);
}

// One input row's taps: fused for the common kernel widths and strides, else tap by tap.
template <class T>
[[gnu::always_inline]] inline void add_row(const ConvGeom& g, T* acc, const T* src, const T* wr, const TapCols* cols,
                                           const TapCols& common) {
  if (common.lo < common.hi && (g.sw == 1 || g.sw == 2)) {
    const bool s1 = g.sw == 1;
    switch (g.kw) {
      case 3:
        return s1 ? add_row_fused<3, 1>(acc, src, wr, cols, common, g.ow)
                  : add_row_fused<3, 2>(acc, src, wr, cols, common, g.ow);
      case 5:
        return s1 ? add_row_fused<5, 1>(acc, src, wr, cols, common, g.ow)
                  : add_row_fused<5, 2>(acc, src, wr, cols, common, g.ow);
      case 7:
        return s1 ? add_row_fused<7, 1>(acc, src, wr, cols, common, g.ow)
                  : add_row_fused<7, 2>(acc, src, wr, cols, common, g.ow);
      default: break;
    }
  }
  for (std::int64_t kj = 0; kj < g.kw; ++kj) add_tap(acc, src, wr[kj], cols[kj], g.sw);
}

// One output plane yo [Ho, Wo] from the group's input channels xg (Cin/group planes) and the output
// channel's weights wo [Cin/group, kH, kW], row by row: the row stays in L1 across all taps.
template <class T>
[[gnu::always_inline]] inline void conv_plane(const ConvGeom& g, const T* xg, const T* wo, T b, const TapCols* cols,
                                              const TapCols& common, T* yo) {
  const std::int64_t plane = g.h * g.w;
  for (std::int64_t oh = 0; oh < g.oh; ++oh) {
    T* acc = yo + oh * g.ow;
    for (std::int64_t j = 0; j < g.ow; ++j) acc[j] = b;
    for (std::int64_t ci = 0; ci < g.cin_g(); ++ci) {
      for (std::int64_t ki = 0; ki < g.kh; ++ki) {
        const std::int64_t ih = oh * g.sh - g.pt + ki * g.dh;
        if (ih < 0 || ih >= g.h) continue;
        const T* src = xg + ci * plane + ih * g.w;
        const T* wr = wo + (ci * g.kh + ki) * g.kw;
        add_row(g, acc, src, wr, cols, common);
      }
    }
  }
}

template <class T>
[[gnu::always_inline]] inline void conv_all(const ConvGeom& g, const T* x, const T* w, const T* bias,
                                            const TapCols* cols, const TapCols& common, T* y) {
  const std::int64_t plane = g.h * g.w, out_plane = g.hw();
  for (std::int64_t n = 0; n < g.n; ++n) {
    for (std::int64_t oc = 0; oc < g.cout; ++oc) {
      const std::int64_t gi = oc / g.cout_g();
      const T* xg = x + (n * g.c + gi * g.cin_g()) * plane;
      conv_plane(g, xg, w + oc * g.kdim(), bias != nullptr ? bias[oc] : T(0), cols, common,
                 y + (n * g.cout + oc) * out_plane);
    }
  }
}

// The same loops for baseline x86-64 (SSE2) and for AVX2, picked once at run time.
template <class T>
void conv_all_base(const ConvGeom& g, const T* x, const T* w, const T* bias, const TapCols* cols, const TapCols& common,
                   T* y) {
  conv_all(g, x, w, bias, cols, common, y);
}

template <class T>
[[gnu::target("avx2")]] void conv_all_avx2(const ConvGeom& g, const T* x, const T* w, const T* bias,
                                           const TapCols* cols, const TapCols& common, T* y) {
  conv_all(g, x, w, bias, cols, common, y);
}

template <class T>
void dispatch(const ConvGeom& g, const T* x, const T* w, const T* bias, T* y) {
  const std::vector<TapCols> cols = tap_cols(g);
  const TapCols common = common_cols(cols);
  if (cpu_has_avx2()) return conv_all_avx2(g, x, w, bias, cols.data(), common, y);
  conv_all_base(g, x, w, bias, cols.data(), common, y);
}

}  // namespace

void conv_direct(const ConvGeom& g, const float* x, const float* w, const float* bias, float* y) {
  dispatch(g, x, w, bias, y);
}

void conv_direct(const ConvGeom& g, const double* x, const double* w, const double* bias, double* y) {
  dispatch(g, x, w, bias, y);
}

}  // namespace npuscope::emulator::kernels

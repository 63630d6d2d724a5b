// See Note [Direct grouped convolution] in depthwise_conv.h.
#include "depthwise_conv.h"

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

// One output plane yo [Ho, Wo] from the group's input channels xg (Cin/group planes) and the output
// channel's weights wo [Cin/group, kH, kW], row by row: the row stays in L1 across all taps.
template <class T>
[[gnu::always_inline]] inline void conv_plane(const ConvGeom& g, const T* xg, const T* wo, T b, const TapCols* cols,
                                              T* yo) {
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
        for (std::int64_t kj = 0; kj < g.kw; ++kj) add_tap(acc, src, wr[kj], cols[kj], g.sw);
      }
    }
  }
}

template <class T>
[[gnu::always_inline]] inline void conv_all(const ConvGeom& g, const T* x, const T* w, const T* bias,
                                            const TapCols* cols, T* y) {
  const std::int64_t plane = g.h * g.w, out_plane = g.hw();
  for (std::int64_t n = 0; n < g.n; ++n) {
    for (std::int64_t oc = 0; oc < g.cout; ++oc) {
      const std::int64_t gi = oc / g.cout_g();
      const T* xg = x + (n * g.c + gi * g.cin_g()) * plane;
      conv_plane(g, xg, w + oc * g.kdim(), bias != nullptr ? bias[oc] : T(0), cols, y + (n * g.cout + oc) * out_plane);
    }
  }
}

// The same loops for baseline x86-64 (SSE2) and for AVX2, picked once at run time.
template <class T>
void conv_all_base(const ConvGeom& g, const T* x, const T* w, const T* bias, const TapCols* cols, T* y) {
  conv_all(g, x, w, bias, cols, y);
}

template <class T>
[[gnu::target("avx2")]] void conv_all_avx2(const ConvGeom& g, const T* x, const T* w, const T* bias,
                                           const TapCols* cols, T* y) {
  conv_all(g, x, w, bias, cols, y);
}

bool has_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}

template <class T>
void dispatch(const ConvGeom& g, const T* x, const T* w, const T* bias, T* y) {
  const std::vector<TapCols> cols = tap_cols(g);
  if (has_avx2()) return conv_all_avx2(g, x, w, bias, cols.data(), y);
  conv_all_base(g, x, w, bias, cols.data(), y);
}

}  // namespace

void conv_direct(const ConvGeom& g, const float* x, const float* w, const float* bias, float* y) {
  dispatch(g, x, w, bias, y);
}

void conv_direct(const ConvGeom& g, const double* x, const double* w, const double* bias, double* y) {
  dispatch(g, x, w, bias, y);
}

}  // namespace npuscope::emulator::kernels

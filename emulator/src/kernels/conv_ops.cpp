// Conv2d: NCHW input, [Cout, Cin/group, kH, kW] weight, optional bias [Cout]; attributes strides,
// pads {top, left, bottom, right}, dilations, group. im2col + one GEMM per (image, group); a 1x1
// convolution with unit strides and no padding reads the input directly. Cube op: see Note [Cube
// numerics] in gemm_util.h.
#include <algorithm>

#include "gemm_util.h"

namespace npuscope::emulator::kernels {
namespace {

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

// Pads and dilations are capped by dim_ints and dims by the tensor size limit, but their products
// and sums are still checked (Note [Sizes from user input]).
std::int64_t out_size(std::int64_t in, std::int64_t pad, std::int64_t k, std::int64_t stride, std::int64_t dilation) {
  const std::int64_t padded = checked_add(in, pad, "Conv2d", "the padded input size");
  const std::int64_t span = checked_mul(dilation, k - 1, "Conv2d", "the dilated kernel size");
  return (padded - span - 1) / stride + 1;
}

// Validates shapes and attributes (infer) and gives the geometry (infer, cost, kernel).
ConvGeom conv_geom(std::span<const TensorMeta> in, const Attrs& attrs) {
  const Shape &x = in[0].shape, &w = in[1].shape;
  if (x.size() != 4 || w.size() != 4) {
    fail("Conv2d",
         "input must be NCHW and weight [Cout, Cin/group, kH, kW], got " + shape_str(x) + " and " + shape_str(w));
  }
  ConvGeom g{.n = x[0], .c = x[1], .h = x[2], .w = x[3], .cout = w[0], .kh = w[2], .kw = w[3]};
  const auto s = dim_ints(attrs, "strides", 2, 1, 1, "Conv2d");
  const auto p = dim_ints(attrs, "pads", 4, 0, 0, "Conv2d");
  const auto d = dim_ints(attrs, "dilations", 2, 1, 1, "Conv2d");
  g.sh = s[0], g.sw = s[1], g.pt = p[0], g.pl = p[1], g.dh = d[0], g.dw = d[1];
  g.group = attrs.get_int("group", 1);
  if (g.group < 1 || g.c % g.group != 0 || g.cout % g.group != 0 || w[1] * g.group != g.c) {
    fail("Conv2d", "group " + std::to_string(g.group) + " does not fit input " + shape_str(x) + " and weight " +
                       shape_str(w) + " (need Cin = weight dim 1 * group, Cout divisible by group)");
  }
  if (attrs.has("kernel_shape") && attrs.get_ints("kernel_shape") != std::vector<std::int64_t>{g.kh, g.kw}) {
    fail("Conv2d", "kernel_shape does not match weight " + shape_str(w));
  }
  g.oh = out_size(g.h, p[0] + p[2], g.kh, g.sh, g.dh);  // pads <= 2^40 each: no overflow
  g.ow = out_size(g.w, p[1] + p[3], g.kw, g.sw, g.dw);
  if (g.oh < 1 || g.ow < 1 || g.kh < 1 || g.kw < 1) {
    fail("Conv2d", "kernel " + shape_str(w) + " with dilations " + shape_str(d) + " does not fit input " +
                       shape_str(x) + " with pads " + shape_str(p));
  }
  if (in.size() > 2 && in[2].present && in[2].shape != Shape{g.cout}) {
    fail("Conv2d", "bias must be [" + std::to_string(g.cout) + "], got " + shape_str(in[2].shape));
  }
  return g;
}

std::vector<TensorMeta> infer_conv(std::span<const TensorMeta> in, const Attrs& attrs) {
  require_same_dtype(in, "Conv2d");
  require_floating(in, 0, "Conv2d");
  const ConvGeom g = conv_geom(in, attrs);
  return {{{g.n, g.cout, g.oh, g.ow}, in[0].dtype}};
}

KernelCost cost_conv(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs& attrs) {
  const ConvGeom g = conv_geom(in, attrs);
  KernelCost c;
  c.unit = ComputeUnit::kCube;
  c.m = g.n * g.hw();
  c.n = g.cout_g();
  c.k = g.kdim();
  c.batch = g.group;
  c.flops = 2.0 * static_cast<double>(c.batch) * static_cast<double>(c.m) * static_cast<double>(c.n) *
            static_cast<double>(c.k);
  c.bytes = io_bytes(in, out);
  return c;
}

// One im2col row: for each output pixel, the input value under kernel tap (ki, kj) of one channel
// (zero where the tap falls in the padding). Valid output columns are found once per row, so the
// inner loop has no bounds checks.
template <class T>
void im2col_row(const T* x, const ConvGeom& g, std::int64_t ki, std::int64_t kj, T* row) {
  const std::int64_t woff = kj * g.dw - g.pl;  // input column of output column 0
  const std::int64_t lo = woff >= 0 ? 0 : std::min(g.ow, (-woff + g.sw - 1) / g.sw);
  const std::int64_t hi = g.w - 1 - woff < 0 ? lo : std::clamp((g.w - 1 - woff) / g.sw + 1, lo, g.ow);
  for (std::int64_t oh = 0; oh < g.oh; ++oh) {
    T* dst = row + oh * g.ow;
    const std::int64_t ih = oh * g.sh - g.pt + ki * g.dh;
    if (ih < 0 || ih >= g.h) {
      std::fill(dst, dst + g.ow, T(0));
      continue;
    }
    const T* src = x + ih * g.w;
    std::fill(dst, dst + lo, T(0));
    if (g.sw == 1) {
      std::copy(src + lo + woff, src + hi + woff, dst + lo);
    } else {
      for (std::int64_t j = lo; j < hi; ++j) dst[j] = src[j * g.sw + woff];
    }
    std::fill(dst + hi, dst + g.ow, T(0));
  }
}

// col [Cin/group · kH · kW, Hout · Wout] for one image and group (x points at its first channel).
template <class T>
void im2col(const T* x, const ConvGeom& g, T* col) {
  for (std::int64_t c = 0; c < g.cin_g(); ++c) {
    for (std::int64_t ki = 0; ki < g.kh; ++ki) {
      for (std::int64_t kj = 0; kj < g.kw; ++kj) {
        im2col_row(x + c * g.h * g.w, g, ki, kj, col + ((c * g.kh + ki) * g.kw + kj) * g.hw());
      }
    }
  }
}

// Pre-fills every output plane with its channel's bias (the GEMMs then accumulate with beta = 1).
template <class T>
void fill_bias(const ConvGeom& g, const T* bias, T* y) {
  for (std::int64_t i = 0; i < g.n; ++i) {
    for (std::int64_t co = 0; co < g.cout; ++co) {
      T* plane = y + (i * g.cout + co) * g.hw();
      std::fill(plane, plane + g.hw(), bias[co]);
    }
  }
}

template <class T>
void conv_kernel(KernelContext& ctx) {
  const std::vector<TensorMeta> meta{{*ctx.inputs[0].shape, ctx.inputs[0].dtype},
                                     {*ctx.inputs[1].shape, ctx.inputs[1].dtype}};
  const ConvGeom g = conv_geom(meta, ctx.attrs);  // validated by infer: cannot throw here
  GemmOperand<T> x(ctx.inputs[0], ctx), w(ctx.inputs[1], ctx);
  GemmResult<T> y(ctx.outputs[0]);
  const bool has_bias = ctx.inputs.size() > 2 && ctx.inputs[2].data != nullptr;
  if (has_bias) fill_bias(g, GemmOperand<T>(ctx.inputs[2], ctx).data(), y.data());
  const T beta = has_bias ? T(1) : T(0);
  const bool direct = g.direct();
  ScratchBlock col_block;
  T* col = direct ? nullptr : col_block.get<T>(g.kdim() * g.hw());
  for (std::int64_t i = 0; i < g.n; ++i) {
    for (std::int64_t gi = 0; gi < g.group; ++gi) {
      const T* xg = x.data() + (i * g.c + gi * g.cin_g()) * g.h * g.w;
      if (!direct) im2col(xg, g, col);
      gemm(false, false, g.cout_g(), g.hw(), g.kdim(), T(1), w.data() + gi * g.cout_g() * g.kdim(), g.kdim(),
           direct ? xg : col, g.hw(), beta, y.data() + (i * g.cout + gi * g.cout_g()) * g.hw(), g.hw());
    }
  }
  y.finish(ctx);
}

// CPU golden: f32/f16/bf16 in f32 (sgemm), f64 in f64 (dgemm).
void conv_cpu(KernelContext& ctx) {
  golden_wide(ctx.inputs[0].dtype) ? conv_kernel<double>(ctx) : conv_kernel<float>(ctx);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = "Conv2d",
                              .category = OpCategory::kCube,
                              .min_inputs = 2,
                              .max_inputs = 3,
                              .infer = infer_conv,
                              .cost = cost_conv});
NPUSCOPE_REGISTER_KERNEL_IF("Conv2d", Backend::kNpu, conv_kernel<float>, cube_supports);
NPUSCOPE_REGISTER_KERNEL("Conv2d", Backend::kCpu, conv_cpu);

}  // namespace npuscope::emulator::kernels

// Conv3d: NCDHW input, [Cout, Cin/group, kD, kH, kW] weight, optional bias [Cout]; attributes
// strides, pads {front, top, left, back, bottom, right}, dilations, group (see conv3d_util.h).
// vol2col + one GEMM per (image, group, depth chunk); a 1x1x1 convolution with unit strides and no
// padding reads the input directly. Cube op: see Note [Cube numerics] in gemm_util.h.
//
// Note [Conv3d depth chunks]
// A video layer's vol2col matrix is K = Cin/group · kD · kH · kW rows of Do · Ho · Wo columns: 64
// channels, a 3x3x3 kernel and a 16x56x56 output make 1728 x 50176 values (330 MiB in f32). The
// kernel fills it a few output depth slices at a time, as many as keep it within kConv3dScratchBytes
// (at least one slice), and each GEMM writes its columns of y in place (ldc = Do · Ho · Wo). A slice
// of a 56x56 output is already 3136 columns, enough for the BLAS. The late layers are the opposite:
// a 2x7x7 output is 98 columns, a skinny GEMM whose threads spin between calls (30% of a
// [8, 256, 2, 7, 7] layer's time went to libgomp). When a whole image fits, the kernel puts the
// columns of several images side by side, as Conv2d does (Note [Batched convolution GEMMs] in
// conv_util.h), and scatters the [Cout/group, nb · Do · Ho · Wo] result back to y. Either way every
// output element sums its K products in one GEMM, so neither changes a value.
#include <algorithm>
#include <string>

#include "conv3d_util.h"
#include "conv_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr const char* kOp = "Conv3d";

}  // namespace

Conv3dGeom conv3d_geom(const Shape& x, const Shape& w, const Attrs& attrs, const char* op) {
  if (x.size() != 5 || w.size() != 5) {
    fail(op,
         "input must be NCDHW and weight [Cout, Cin/group, kD, kH, kW], got " + shape_str(x) + " and " + shape_str(w));
  }
  Conv3dGeom g{.n = x[0], .c = x[1], .d = x[2], .h = x[3], .w = x[4], .cout = w[0], .kd = w[2], .kh = w[3], .kw = w[4]};
  const auto s = dim_ints(attrs, "strides", 3, 1, 1, op);
  const auto p = dim_ints(attrs, "pads", 6, 0, 0, op);
  const auto d = dim_ints(attrs, "dilations", 3, 1, 1, op);
  g.sd = s[0], g.sh = s[1], g.sw = s[2], g.pf = p[0], g.pt = p[1], g.pl = p[2], g.dd = d[0], g.dh = d[1], g.dw = d[2];
  g.group = conv_group_attr(attrs, op);
  if (g.group < 1 || g.c % g.group != 0 || g.cout % g.group != 0 || w[1] * g.group != g.c) {
    fail(op, "group " + std::to_string(g.group) + " does not fit input " + shape_str(x) + " and weight " +
                 shape_str(w) + " (need Cin = weight dim 1 * group, Cout divisible by group)");
  }
  if (attrs.has("kernel_shape") && attrs.get_ints("kernel_shape") != std::vector<std::int64_t>{g.kd, g.kh, g.kw}) {
    fail(op, "kernel_shape does not match weight " + shape_str(w));
  }
  if (g.kd < 1 || g.kh < 1 || g.kw < 1) fail(op, "weight " + shape_str(w) + " has an empty kernel");
  g.od = conv_out_size(g.d, p[0] + p[3], g.kd, g.sd, g.dd, op);  // pads <= 2^40 each: no overflow
  g.oh = conv_out_size(g.h, p[1] + p[4], g.kh, g.sh, g.dh, op);
  g.ow = conv_out_size(g.w, p[2] + p[5], g.kw, g.sw, g.dw, op);
  if (g.od < 1 || g.oh < 1 || g.ow < 1) {
    fail(op, "kernel " + shape_str(w) + " with dilations " + shape_str(d) + " does not fit input " + shape_str(x) +
                 " with pads " + shape_str(p));
  }
  return g;
}

namespace {

// Validates shapes and attributes (infer) and gives the geometry (infer, cost, kernel).
Conv3dGeom geom(std::span<const TensorMeta> in, const Attrs& attrs) {
  const Conv3dGeom g = conv3d_geom(in[0].shape, in[1].shape, attrs, kOp);
  if (in.size() > 2 && in[2].present && in[2].shape != Shape{g.cout}) {
    fail(kOp, "bias must be [" + std::to_string(g.cout) + "], got " + shape_str(in[2].shape));
  }
  return g;
}

std::vector<TensorMeta> infer_conv3d(std::span<const TensorMeta> in, const Attrs& attrs) {
  require_same_dtype(in, kOp);
  require_floating(in, 0, kOp);
  const Conv3dGeom g = geom(in, attrs);
  return {{{g.n, g.cout, g.od, g.oh, g.ow}, in[0].dtype}};
}

KernelCost cost_conv3d(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs& attrs) {
  const Conv3dGeom g = geom(in, attrs);
  return cube_cost(g.group, g.n * g.out_vol(), g.cout_g(), g.kdim(), io_bytes(in, out), out_bytes(out));
}

// y for image i and group gi: the bias (beta = 1 then), then one GEMM per chunk of depth slices.
template <class T>
void conv_image_group(const Conv3dGeom& g, const T* x, const T* w, const T* bias, T* y, std::int64_t i, std::int64_t gi,
                      std::int64_t chunk, T* col) {
  const T* xg = x + (i * g.c + gi * g.cin_g()) * g.in_vol();
  const T* wg = w + gi * g.cout_g() * g.kdim();
  T* yg = y + (i * g.cout + gi * g.cout_g()) * g.out_vol();
  if (bias != nullptr) {
    for (std::int64_t r = 0; r < g.cout_g(); ++r) {
      std::fill(yg + r * g.out_vol(), yg + (r + 1) * g.out_vol(), bias[gi * g.cout_g() + r]);
    }
  }
  const T beta = bias != nullptr ? T(1) : T(0);
  if (g.direct()) {
    gemm(false, false, g.cout_g(), g.out_vol(), g.kdim(), T(1), wg, g.kdim(), xg, g.in_vol(), beta, yg, g.out_vol());
    return;
  }
  const std::int64_t plane = g.oh * g.ow;
  for (std::int64_t oz0 = 0; oz0 < g.od; oz0 += chunk) {
    const std::int64_t oz1 = std::min(g.od, oz0 + chunk), cols = (oz1 - oz0) * plane;
    vol2col(xg, g, oz0, oz1, col, cols);
    gemm(false, false, g.cout_g(), cols, g.kdim(), T(1), wg, g.kdim(), col, cols, beta, yg + oz0 * plane, g.out_vol());
  }
}

// Images per GEMM when a whole image's columns fit (chunk == Do), else 1 (Note [Conv3d depth chunks]).
std::int64_t volumes_per_gemm(const Conv3dGeom& g, std::int64_t chunk, std::int64_t elem) {
  if (chunk < g.od) return 1;
  const std::int64_t per_image = std::max<std::int64_t>(1, (g.kdim() + g.cout_g()) * g.out_vol() * elem);
  return std::clamp<std::int64_t>(kConv3dScratchBytes / per_image, 1, std::max<std::int64_t>(g.n, 1));
}

// y for images [i0, i0 + nb) and group gi: their columns side by side in one GEMM into tmp
// [Cout/group, nb · vol], then scattered to the images' planes.
template <class T>
void conv_images_group(const Conv3dGeom& g, const T* x, const T* w, const T* bias, T* y, std::int64_t i0,
                       std::int64_t nb, std::int64_t gi, T* col, T* tmp) {
  const std::int64_t vol = g.out_vol(), ld = nb * vol;
  for (std::int64_t i = 0; i < nb; ++i) {
    vol2col(x + ((i0 + i) * g.c + gi * g.cin_g()) * g.in_vol(), g, 0, g.od, col + i * vol, ld);
  }
  for (std::int64_t r = 0; r < g.cout_g() && bias != nullptr; ++r) {
    std::fill(tmp + r * ld, tmp + (r + 1) * ld, bias[gi * g.cout_g() + r]);
  }
  gemm(false, false, g.cout_g(), ld, g.kdim(), T(1), w + gi * g.cout_g() * g.kdim(), g.kdim(), col, ld,
       bias != nullptr ? T(1) : T(0), tmp, ld);
  for (std::int64_t r = 0; r < g.cout_g(); ++r) {
    for (std::int64_t i = 0; i < nb; ++i) {
      std::copy_n(tmp + r * ld + i * vol, vol, y + ((i0 + i) * g.cout + gi * g.cout_g() + r) * vol);
    }
  }
}

template <class T>
void conv3d_kernel(KernelContext& ctx) {
  const Conv3dGeom g = geom(conv_operand_metas(ctx), ctx.attrs);  // validated by infer: cannot throw here
  ConvOperands<T> op(ctx);
  const std::int64_t chunk = conv3d_slices_per_chunk(g, sizeof(T)), nb = volumes_per_gemm(g, chunk, sizeof(T));
  ScratchBlock col_block, tmp_block;
  const T* b = op.bias();
  const T *x = op.x.data(), *w = op.w.data();
  T* y = op.y.data();
  if (nb > 1) {
    T* col = col_block.get<T>(g.kdim() * nb * g.out_vol());
    T* tmp = tmp_block.get<T>(g.cout_g() * nb * g.out_vol());
    for (std::int64_t i0 = 0; i0 < g.n; i0 += nb) {
      for (std::int64_t gi = 0; gi < g.group; ++gi) {
        conv_images_group(g, x, w, b, y, i0, std::min(nb, g.n - i0), gi, col, tmp);
      }
    }
    op.y.finish(ctx);
    return;
  }
  T* col = g.direct() ? nullptr : col_block.get<T>(g.kdim() * chunk * g.oh * g.ow);
  for (std::int64_t i = 0; i < g.n; ++i) {
    for (std::int64_t gi = 0; gi < g.group; ++gi) {
      conv_image_group(g, x, w, b, y, i, gi, chunk, col);
    }
  }
  op.y.finish(ctx);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = "Conv3d",
                              .category = OpCategory::kCube,
                              .min_inputs = 2,
                              .max_inputs = 3,
                              .infer = infer_conv3d,
                              .cost = cost_conv3d});
NPUSCOPE_REGISTER_CUBE_KERNELS("Conv3d", conv3d_kernel, cube_supports);

}  // namespace npuscope::emulator::kernels

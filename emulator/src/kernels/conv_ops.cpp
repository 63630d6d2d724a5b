// Conv2d: NCHW input, [Cout, Cin/group, kH, kW] weight, optional bias [Cout]; attributes strides,
// pads {top, left, bottom, right}, dilations, group (see conv_util.h). im2col + one GEMM per group over
// several images (Note [Batched convolution GEMMs] in conv_util.h); a 1x1 convolution with unit
// strides and no padding reads the input directly; depthwise convolutions run a
// direct kernel (Note [Direct grouped convolution] in depthwise_conv.h). Cube op: see Note [Cube
// numerics] in gemm_util.h.
#include <algorithm>
#include <string>

#include "conv_util.h"
#include "depthwise_conv.h"

namespace npuscope::emulator::kernels {
namespace {

// Validates shapes and attributes (infer) and gives the geometry (infer, cost, kernel).
ConvGeom conv2d_geom(std::span<const TensorMeta> in, const Attrs& attrs) {
  const ConvGeom g = conv_geom(in[0].shape, in[1].shape, attrs, "Conv2d");
  if (in.size() > 2 && in[2].present && in[2].shape != Shape{g.cout}) {
    fail("Conv2d", "bias must be [" + std::to_string(g.cout) + "], got " + shape_str(in[2].shape));
  }
  return g;
}

std::vector<TensorMeta> infer_conv(std::span<const TensorMeta> in, const Attrs& attrs) {
  require_same_dtype(in, "Conv2d");
  require_floating(in, 0, "Conv2d");
  const ConvGeom g = conv2d_geom(in, attrs);
  return {{{g.n, g.cout, g.oh, g.ow}, in[0].dtype}};
}

KernelCost cost_conv(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs& attrs) {
  const ConvGeom g = conv2d_geom(in, attrs);
  KernelCost c = cube_cost(g.group, g.n * g.hw(), g.cout_g(), g.kdim(), io_bytes(in, out), out_bytes(out));
  c.hf32 = true;  // torch_npu allows HF32 for convolutions (DeviceSpec::conv_hf32)
  return c;
}

// Pre-fills `rows` rows of `cols` values with each row's bias (the GEMMs then accumulate with beta = 1).
template <class T>
void fill_bias_rows(const T* bias, std::int64_t rows, std::int64_t cols, T* y) {
  for (std::int64_t r = 0; r < rows; ++r) std::fill(y + r * cols, y + (r + 1) * cols, bias[r]);
}

// y for images [i0, i0 + nb) and group gi: one GEMM over their columns side by side (Note [Batched
// convolution GEMMs]); with one image the GEMM reads x (direct) and writes y in place.
template <class T>
void conv_images(const ConvGeom& g, const T* x, const T* w, const T* bias, T* y, std::int64_t i0, std::int64_t nb,
                 std::int64_t gi, T* col, T* tmp) {
  const std::int64_t hw = g.hw(), ld = nb * hw, plane = g.h * g.w;
  const T* xg = x + (i0 * g.c + gi * g.cin_g()) * plane;
  T* yg = y + (i0 * g.cout + gi * g.cout_g()) * hw;
  const T* b = nb == 1 && g.direct() ? xg : col;
  if (g.direct() && nb > 1) gather_planes(xg, g.c * plane, g.cin_g(), plane, nb, col);
  if (!g.direct()) {
    for (std::int64_t i = 0; i < nb; ++i) im2col(xg + i * g.c * plane, g, col + i * hw, ld);
  }
  T* out = nb == 1 ? yg : tmp;
  if (bias != nullptr) fill_bias_rows(bias + gi * g.cout_g(), g.cout_g(), ld, out);
  gemm(false, false, g.cout_g(), ld, g.kdim(), T(1), w + gi * g.cout_g() * g.kdim(), g.kdim(), b, ld,
       bias != nullptr ? T(1) : T(0), out, ld);
  if (nb > 1) scatter_planes(tmp, g.cout * hw, g.cout_g(), hw, nb, yg);
}

template <class T>
void conv_kernel(KernelContext& ctx) {
  const ConvGeom g = conv2d_geom(conv_operand_metas(ctx), ctx.attrs);  // validated by infer: cannot throw here
  ConvOperands<T> op(ctx);
  if (conv_direct_applies(g)) {
    conv_direct(g, op.x.data(), op.w.data(), op.bias(), op.y.data());
    return op.y.finish(ctx);
  }
  const std::int64_t nb = images_per_gemm(g, g.kdim() + g.cout_g(), sizeof(T));
  ScratchBlock col_block, tmp_block;
  T* col = g.direct() && nb == 1 ? nullptr : col_block.get<T>(g.kdim() * nb * g.hw());
  T* tmp = nb == 1 ? nullptr : tmp_block.get<T>(g.cout_g() * nb * g.hw());
  for (std::int64_t i0 = 0; i0 < g.n; i0 += nb) {
    for (std::int64_t gi = 0; gi < g.group; ++gi) {
      conv_images(g, op.x.data(), op.w.data(), op.bias(), op.y.data(), i0, std::min(nb, g.n - i0), gi, col, tmp);
    }
  }
  op.y.finish(ctx);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = "Conv2d",
                              .category = OpCategory::kCube,
                              .min_inputs = 2,
                              .max_inputs = 3,
                              .infer = infer_conv,
                              .cost = cost_conv});
NPUSCOPE_REGISTER_CUBE_KERNELS("Conv2d", conv_kernel, cube_supports);

}  // namespace npuscope::emulator::kernels

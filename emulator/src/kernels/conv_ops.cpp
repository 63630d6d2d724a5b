// Conv2d: NCHW input, [Cout, Cin/group, kH, kW] weight, optional bias [Cout]; attributes strides,
// pads {top, left, bottom, right}, dilations, group (see conv_util.h). im2col + one GEMM per (image, group); a 1x1
// convolution with unit strides and no padding reads the input directly. Cube op: see Note [Cube
// numerics] in gemm_util.h.
#include <algorithm>
#include <string>

#include "conv_util.h"

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
  const ConvGeom g = conv2d_geom(meta, ctx.attrs);  // validated by infer: cannot throw here
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

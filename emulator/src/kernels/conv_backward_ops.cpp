// The gradients of Conv2d, as aten's convolution_backward computes them for a 2-D convolution:
//   Conv2DBackpropInput  (dy [N, Cout, Ho, Wo], w [Cout, C/group, kH, kW]; input_size) -> dx
//   Conv2DBackpropFilter (x [N, C, H, W], dy;                              filter_size) -> dw
// with Conv2d's strides, pads {top, left, bottom, right}, dilations and group (conv_util.h). The
// bias gradient is a ReduceSum of dy and no part of these ops. Cube ops: see Note [Cube numerics].
//
// Note [Conv backward as GEMM]
// Per (image, group), with col = im2col(x_g) [C/group · kH · kW, Ho · Wo]:
//   dx_g = col2im(W_gᵀ · dy_g)      (one GEMM, then the adjoint of im2col adds the taps back)
//   dW_g += dy_g · colᵀ             (accumulating over the batch in f32/f64)
// A 1x1 convolution with unit strides and no padding has col = x_g, so both skip the transform.
// The GEMMs take several images at once, their columns side by side: see Note [Batched convolution
// GEMMs] in conv_util.h.
#include <string>

#include "conv_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kInputOp[] = "Conv2DBackpropInput";
constexpr char kFilterOp[] = "Conv2DBackpropFilter";

// dy must be what Conv2d gives for this geometry.
void check_dy(const Shape& dy, const ConvGeom& g, const char* op) {
  const Shape want{g.n, g.cout, g.oh, g.ow};
  if (dy != want) fail(op, "dy has shape " + shape_str(dy) + " but the convolution's output is " + shape_str(want));
}

// Geometry of either op from its inputs and attributes (infer, cost, kernels).
template <bool kInput>
ConvGeom backward_geom(std::span<const TensorMeta> in, const Attrs& attrs) {
  const char* op = kInput ? kInputOp : kFilterOp;
  const Shape& dy = kInput ? in[0].shape : in[1].shape;
  const ConvGeom g = kInput ? conv_geom(size_attr(attrs, "input_size", {4}, op), in[1].shape, attrs, op)
                            : conv_geom(in[0].shape, size_attr(attrs, "filter_size", {4}, op), attrs, op);
  check_dy(dy, g, op);
  return g;
}

template <bool kInput>
std::vector<TensorMeta> infer_backward(std::span<const TensorMeta> in, const Attrs& attrs) {
  const char* op = kInput ? kInputOp : kFilterOp;
  require_same_dtype(in, op);
  require_floating(in, 0, op);
  backward_geom<kInput>(in, attrs);
  return {{attrs.get_ints(kInput ? "input_size" : "filter_size"), in[0].dtype}};
}

template <bool kInput>
KernelCost cost_backward(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs& attrs) {
  const ConvGeom g = backward_geom<kInput>(in, attrs);
  KernelCost c = cube_cost(g.group, kInput ? g.kdim() : g.cout_g(), kInput ? g.n * g.hw() : g.kdim(),
                           kInput ? g.cout_g() : g.n * g.hw(), io_bytes(in, out), out_bytes(out));
  c.hf32 = true;  // as the forward convolution (DeviceSpec::conv_hf32)
  return c;
}

// dx for images [i0, i0 + nb) and group gi: dy gathered to [Cout/group, nb · Ho · Wo] (in place for
// one image), one GEMM, then col2im per image (Note [Batched convolution GEMMs] in conv_util.h).
template <class T>
void input_grad_images(const ConvGeom& g, const T* dy, const T* w, T* dx, std::int64_t i0, std::int64_t nb,
                       std::int64_t gi, T* col, T* dyb) {
  const std::int64_t hw = g.hw(), ld = nb * hw, plane = g.h * g.w;
  const T* dyg = dy + (i0 * g.cout + gi * g.cout_g()) * hw;
  T* dxg = dx + (i0 * g.c + gi * g.cin_g()) * plane;
  if (nb > 1) gather_planes(dyg, g.cout * hw, g.cout_g(), hw, nb, dyb);
  T* out = g.direct() && nb == 1 ? dxg : col;
  gemm(true, false, g.kdim(), ld, g.cout_g(), T(1), w + gi * g.cout_g() * g.kdim(), g.kdim(), nb == 1 ? dyg : dyb, ld,
       T(0), out, ld);
  if (g.direct()) {
    if (nb > 1) scatter_planes(col, g.c * plane, g.cin_g(), plane, nb, dxg);
    return;
  }
  for (std::int64_t i = 0; i < nb; ++i) col2im(col + i * hw, g, dxg + i * g.c * plane, ld);
}

// dx (Note [Conv backward as GEMM]).
template <class T>
void input_grad_kernel(KernelContext& ctx) {
  const ConvGeom g = backward_geom<true>(conv_operand_metas(ctx), ctx.attrs);  // validated by infer: cannot throw here
  GemmOperand<T> dy(ctx.inputs[0], ctx), w(ctx.inputs[1], ctx);
  GemmResult<T> dx(ctx.outputs[0]);
  const std::int64_t nb = images_per_gemm(g, g.kdim() + g.cout_g(), sizeof(T));
  ScratchBlock col_block, dy_block;
  T* col = g.direct() && nb == 1 ? nullptr : col_block.get<T>(g.kdim() * nb * g.hw());
  T* dyb = nb == 1 ? nullptr : dy_block.get<T>(g.cout_g() * nb * g.hw());
  if (!g.direct()) std::fill(dx.data(), dx.data() + ctx.outputs[0].numel, T(0));
  for (std::int64_t i0 = 0; i0 < g.n; i0 += nb) {
    for (std::int64_t gi = 0; gi < g.group; ++gi) {
      input_grad_images(g, dy.data(), w.data(), dx.data(), i0, std::min(nb, g.n - i0), gi, col, dyb);
    }
  }
  dx.finish(ctx);
}

// dW_g += dy_g · colᵀ for images [i0, i0 + nb): one GEMM over their columns side by side.
template <class T>
void filter_grad_images(const ConvGeom& g, const T* x, const T* dy, T* dw, std::int64_t i0, std::int64_t nb,
                        std::int64_t gi, T* col, T* dyb) {
  const std::int64_t hw = g.hw(), ld = nb * hw, plane = g.h * g.w;
  const T* xg = x + (i0 * g.c + gi * g.cin_g()) * plane;
  const T* dyg = dy + (i0 * g.cout + gi * g.cout_g()) * hw;
  if (g.direct() && nb > 1) gather_planes(xg, g.c * plane, g.cin_g(), plane, nb, col);
  if (!g.direct()) {
    for (std::int64_t i = 0; i < nb; ++i) im2col(xg + i * g.c * plane, g, col + i * hw, ld);
  }
  if (nb > 1) gather_planes(dyg, g.cout * hw, g.cout_g(), hw, nb, dyb);
  gemm(false, true, g.cout_g(), g.kdim(), ld, T(1), nb == 1 ? dyg : dyb, ld, g.direct() && nb == 1 ? xg : col, ld, T(1),
       dw + gi * g.cout_g() * g.kdim(), g.kdim());
}

// dW (Note [Conv backward as GEMM]).
template <class T>
void filter_grad_kernel(KernelContext& ctx) {
  const ConvGeom g = backward_geom<false>(conv_operand_metas(ctx), ctx.attrs);  // validated by infer: cannot throw here
  GemmOperand<T> x(ctx.inputs[0], ctx), dy(ctx.inputs[1], ctx);
  GemmResult<T> dw(ctx.outputs[0]);
  std::fill(dw.data(), dw.data() + ctx.outputs[0].numel, T(0));
  const std::int64_t nb = images_per_gemm(g, g.kdim() + g.cout_g(), sizeof(T));
  ScratchBlock col_block, dy_block;
  T* col = g.direct() && nb == 1 ? nullptr : col_block.get<T>(g.kdim() * nb * g.hw());
  T* dyb = nb == 1 ? nullptr : dy_block.get<T>(g.cout_g() * nb * g.hw());
  for (std::int64_t i0 = 0; i0 < g.n; i0 += nb) {
    for (std::int64_t gi = 0; gi < g.group; ++gi) {
      filter_grad_images(g, x.data(), dy.data(), dw.data(), i0, std::min(nb, g.n - i0), gi, col, dyb);
    }
  }
  dw.finish(ctx);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kInputOp,
                              .category = OpCategory::kCube,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_backward<true>,
                              .cost = cost_backward<true>});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kFilterOp,
                              .category = OpCategory::kCube,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_backward<false>,
                              .cost = cost_backward<false>});
NPUSCOPE_REGISTER_CUBE_KERNELS(kInputOp, input_grad_kernel, cube_supports);
NPUSCOPE_REGISTER_CUBE_KERNELS(kFilterOp, filter_grad_kernel, cube_supports);

}  // namespace npuscope::emulator::kernels

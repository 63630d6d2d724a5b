// The gradients of Conv3d, as aten's convolution_backward computes them for a 3-D convolution
// (CANN's Conv3DBackpropInput and Conv3DBackpropFilter):
//   Conv3DBackpropInput  (dy [N, Cout, Do, Ho, Wo], w [Cout, C/group, kD, kH, kW]; input_size) -> dx
//   Conv3DBackpropFilter (x [N, C, D, H, W], dy;                                   filter_size) -> dw
// with Conv3d's strides, pads {front, top, left, back, bottom, right}, dilations and group
// (conv3d_util.h). The bias gradient is a ReduceSum of dy. Cube ops: see Note [Cube numerics].
// Per (image, group) and chunk of output depth slices (Note [Conv3d depth chunks]), with
// col = vol2col(x_g) [C/group · kD · kH · kW, slices · Ho · Wo]:
//   dx_g += col2vol(W_gᵀ · dy_g[chunk])     dW_g += dy_g[chunk] · colᵀ
// as Conv2d's gradients (Note [Conv backward as GEMM] in conv_backward_ops.cpp). A chunk's columns
// of dy_g are contiguous in each of its rows, so the GEMMs read dy in place.
#include <string>

#include "conv3d_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kInputOp[] = "Conv3DBackpropInput";
constexpr char kFilterOp[] = "Conv3DBackpropFilter";

template <bool kInput>
Conv3dGeom backward_geom(std::span<const TensorMeta> in, const Attrs& attrs) {
  const char* op = kInput ? kInputOp : kFilterOp;
  const Shape& dy = kInput ? in[0].shape : in[1].shape;
  const Conv3dGeom g = kInput ? conv3d_geom(size_attr(attrs, "input_size", {5}, op), in[1].shape, attrs, op)
                              : conv3d_geom(in[0].shape, size_attr(attrs, "filter_size", {5}, op), attrs, op);
  const Shape want{g.n, g.cout, g.od, g.oh, g.ow};
  if (dy != want) fail(op, "dy has shape " + shape_str(dy) + " but the convolution's output is " + shape_str(want));
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
  const Conv3dGeom g = backward_geom<kInput>(in, attrs);
  const std::int64_t cols = g.n * g.out_vol();
  KernelCost c = cube_cost(g.group, kInput ? g.kdim() : g.cout_g(), kInput ? cols : g.kdim(),
                           kInput ? g.cout_g() : cols, io_bytes(in, out), out_bytes(out));
  c.hf32 = true;  // as the forward convolution (DeviceSpec::conv_hf32)
  return c;
}

template <class T>
void input_grad_kernel(KernelContext& ctx) {
  const Conv3dGeom g = backward_geom<true>(conv_operand_metas(ctx), ctx.attrs);  // validated by infer: cannot throw
  GemmOperand<T> dy(ctx.inputs[0], ctx), w(ctx.inputs[1], ctx);
  GemmResult<T> dx(ctx.outputs[0]);
  std::fill(dx.data(), dx.data() + ctx.outputs[0].numel, T(0));
  const std::int64_t chunk = conv3d_slices_per_chunk(g, sizeof(T)), plane = g.oh * g.ow;
  ScratchBlock col_block;
  T* col = col_block.get<T>(g.kdim() * chunk * plane);
  for (std::int64_t i = 0; i < g.n; ++i) {
    for (std::int64_t gi = 0; gi < g.group; ++gi) {
      const T* dyg = dy.data() + (i * g.cout + gi * g.cout_g()) * g.out_vol();
      const T* wg = w.data() + gi * g.cout_g() * g.kdim();
      T* dxg = dx.data() + (i * g.c + gi * g.cin_g()) * g.in_vol();
      for (std::int64_t oz0 = 0; oz0 < g.od; oz0 += chunk) {
        const std::int64_t oz1 = std::min(g.od, oz0 + chunk), cols = (oz1 - oz0) * plane;
        gemm(true, false, g.kdim(), cols, g.cout_g(), T(1), wg, g.kdim(), dyg + oz0 * plane, g.out_vol(), T(0), col,
             cols);
        col2vol(col, g, oz0, oz1, dxg, cols);
      }
    }
  }
  dx.finish(ctx);
}

template <class T>
void filter_grad_kernel(KernelContext& ctx) {
  const Conv3dGeom g = backward_geom<false>(conv_operand_metas(ctx), ctx.attrs);  // validated by infer: cannot throw
  GemmOperand<T> x(ctx.inputs[0], ctx), dy(ctx.inputs[1], ctx);
  GemmResult<T> dw(ctx.outputs[0]);
  std::fill(dw.data(), dw.data() + ctx.outputs[0].numel, T(0));
  const std::int64_t chunk = conv3d_slices_per_chunk(g, sizeof(T)), plane = g.oh * g.ow;
  ScratchBlock col_block;
  T* col = col_block.get<T>(g.kdim() * chunk * plane);
  for (std::int64_t i = 0; i < g.n; ++i) {
    for (std::int64_t gi = 0; gi < g.group; ++gi) {
      const T* xg = x.data() + (i * g.c + gi * g.cin_g()) * g.in_vol();
      const T* dyg = dy.data() + (i * g.cout + gi * g.cout_g()) * g.out_vol();
      T* dwg = dw.data() + gi * g.cout_g() * g.kdim();
      for (std::int64_t oz0 = 0; oz0 < g.od; oz0 += chunk) {
        const std::int64_t oz1 = std::min(g.od, oz0 + chunk), cols = (oz1 - oz0) * plane;
        vol2col(xg, g, oz0, oz1, col, cols);
        gemm(false, true, g.cout_g(), g.kdim(), cols, T(1), dyg + oz0 * plane, g.out_vol(), col, cols, T(1), dwg,
             g.kdim());
      }
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

// DeformableOffsetsGrad (CANN's name): the gradient of DeformableOffsets (deformable_offsets_ops.cpp).
//   dy [N, C, H_out * kh, W_out * kw], x [N, C, H, W], offsets [N, 2 * dg * kh * kw, H_out, W_out],
//   optional mask [N, dg * kh * kw, H_out, W_out]
//   -> dx [N, C, H, W], doffsets (offsets' shape) and, with a mask, dmask (mask's shape).
// Attributes as DeformableOffsets'. Vector op; NPU: f32, the adds in a fixed order (image, group,
// kernel tap, output pixel, channel: a deterministic stand-in for atomic adds), rounded to the
// output dtype once; CPU golden: f64.
//
// Note [DeformableOffsetsGrad formulas]
// As torchvision 0.14's deformable_col2im and deformable_col2im_coord, with d the gradient of one
// sample (dy at (oy * kh + i, ox * kw + j)), m its mask value (1 without a mask), and the taps of
// Note [DeformableOffsets layout]:
//  - dx: a sample that is inside adds m · w_t · d into each neighbour t on the map, with the
//    forward's bilinear weights w_t (torchvision's |y - yp| < 1 test picks the same neighbours).
//  - doffsets: each channel of the group adds m · d · (the derivative of the bilinear sample along
//    y, or x), from the 4 neighbours (0 off the map) with no range test of its own: torchvision's
//    coordinate weight, lx · (v11 - v01) + (1 - lx) · (v10 - v00) along y and ly · (v11 - v10) +
//    (1 - ly) · (v01 - v00) along x, summed over the group's channels.
//  - dmask: d · bilinear(x, py, px) (the unmasked sample, 0 outside) summed over the group's channels.
// torchvision returns a mask gradient of zeros when use_mask is false: without a mask input this op
// has no dmask output, and the PyTorch device makes the zeros.
#include <string>
#include <vector>

#include "deformable_offsets_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kOp[] = "DeformableOffsetsGrad";

std::vector<TensorMeta> infer_deformable_offsets_grad(std::span<const TensorMeta> in, const Attrs& attrs) {
  require_floating(in, 0, kOp);
  const DeformParams p = check_deform_inputs(in, 1, attrs, kOp);
  if (in[0].dtype != in[1].dtype) fail(kOp, "dy must have x's dtype " + std::string(dtype_name(in[1].dtype)));
  const Shape want = deform_columns_shape(p, kOp);
  if (in[0].shape != want) {
    fail(kOp, "dy must be DeformableOffsets' output [N, C, H_out * kh, W_out * kw] = " + shape_str(want) + ", got " +
                  shape_str(in[0].shape));
  }
  std::vector<TensorMeta> out{{in[1].shape, in[1].dtype}, {in[2].shape, in[2].dtype}};
  if (p.modulated) out.push_back({in[3].shape, in[3].dtype});
  return out;
}

// Per element of dy: 4 read-modify-writes of dx and the 4 neighbours read again for the offsets'
// (and mask's) gradients, about 20 flops.
KernelCost cost_deformable_offsets_grad(std::span<const TensorMeta> in, std::span<const TensorMeta> out,
                                        const Attrs& attrs) {
  (void)attrs;
  const double samples = static_cast<double>(in[0].numel());
  KernelCost c = vector_cost(in, out, 0);
  c.flops = samples * 20;
  const double item = static_cast<double>(dtype_size(in[0].dtype));
  c.bytes = io_bytes(in, out) + samples * 12 * item;
  c.bytes_written = out_bytes(out) + samples * 4 * item;
  return c;
}

// The gradients' buffers (dmask empty without a mask).
template <class T>
struct DeformGrads {
  std::vector<T> dx, doff, dmask;
};

// One tap (image n, group g, kernel tap k, output pixel pix) over the group's channels.
template <class T>
void spread_tap(const DeformParams& p, const T* x, const T* dy, const DeformTap& t, T m, std::int64_t n, std::int64_t g,
                std::int64_t k, std::int64_t pix, DeformGrads<T>& grads) {
  if (!t.near) return;  // no neighbour on the map: every gradient is 0
  const std::int64_t per_group = p.c / p.groups, wk = p.out_w * p.kw, plane = p.plane();
  const std::int64_t oy = pix / p.out_w, ox = pix % p.out_w, i = k / p.kw, j = k % p.kw;
  const std::int64_t col = (oy * p.kh + i) * wk + ox * p.kw + j, col_plane = plane * p.taps();
  T wt[4];
  tap_weights(t, wt);
  const T ly = static_cast<T>(t.ly), lx = static_cast<T>(t.lx);
  T d_y = 0, d_x = 0, d_m = 0;
  for (std::int64_t ch = g * per_group; ch < (g + 1) * per_group; ++ch) {
    const std::int64_t chan = n * p.c + ch;
    const T d = dy[chan * col_plane + col];
    T v[4];
    tap_values(x + chan * p.h * p.w, p.w, t, v);
    d_y += m * (lx * (v[3] - v[1]) + (1 - lx) * (v[2] - v[0])) * d;
    d_x += m * (ly * (v[3] - v[2]) + (1 - ly) * (v[1] - v[0])) * d;
    if (!t.inside) continue;
    if (p.modulated) d_m += d * (wt[0] * v[0] + wt[1] * v[1] + wt[2] * v[2] + wt[3] * v[3]);
    T* dst = grads.dx.data() + chan * p.h * p.w + t.y0 * p.w + t.x0;
    if (t.vy0 && t.vx0) dst[0] += m * wt[0] * d;
    if (t.vy0 && t.vx1) dst[1] += m * wt[1] * d;
    if (t.vy1 && t.vx0) dst[p.w] += m * wt[2] * d;
    if (t.vy1 && t.vx1) dst[p.w + 1] += m * wt[3] * d;
  }
  const std::int64_t ng = n * p.groups + g;
  grads.doff[static_cast<std::size_t>((ng * 2 * p.taps() + 2 * k) * plane + pix)] = d_y;
  grads.doff[static_cast<std::size_t>((ng * 2 * p.taps() + 2 * k + 1) * plane + pix)] = d_x;
  if (p.modulated) grads.dmask[static_cast<std::size_t>((ng * p.taps() + k) * plane + pix)] = d_m;
}

template <class T>
void deformable_offsets_grad_kernel(KernelContext& ctx) {
  const DeformParams p = deform_params_of(ctx, 1, kOp);  // validated by infer
  DeformGrads<T> grads;
  grads.dx.assign(static_cast<std::size_t>(ctx.outputs[0].numel), T(0));
  grads.doff.assign(static_cast<std::size_t>(ctx.outputs[1].numel), T(0));
  if (p.modulated) grads.dmask.assign(static_cast<std::size_t>(ctx.outputs[2].numel), T(0));
  if (ctx.inputs[0].numel > 0 && p.h > 0 && p.w > 0) {
    const std::vector<T> dy = load<T>(ctx.inputs[0], ctx), x = load<T>(ctx.inputs[1], ctx);
    const std::vector<T> off = load<T>(ctx.inputs[2], ctx);
    const std::vector<T> mask = p.modulated ? load<T>(ctx.inputs[3], ctx) : std::vector<T>{};
    std::vector<DeformTap> taps;
    std::vector<T> mask_values;
    deform_taps(p, off.data(), p.modulated ? mask.data() : nullptr, taps, mask_values);
    std::size_t at = 0;
    for (std::int64_t n = 0; n < p.n; ++n)
      for (std::int64_t g = 0; g < p.groups; ++g)
        for (std::int64_t k = 0; k < p.taps(); ++k)
          for (std::int64_t pix = 0; pix < p.plane(); ++pix, ++at) {
            spread_tap(p, x.data(), dy.data(), taps[at], mask_values[at], n, g, k, pix, grads);
          }
  }
  store<T>(ctx.outputs[0], grads.dx.data(), ctx);
  store<T>(ctx.outputs[1], grads.doff.data(), ctx);
  if (p.modulated) store<T>(ctx.outputs[2], grads.dmask.data(), ctx);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kOp,
                              .category = OpCategory::kVector,
                              .min_inputs = 3,
                              .max_inputs = 4,
                              .infer = infer_deformable_offsets_grad,
                              .cost = cost_deformable_offsets_grad});
NPUSCOPE_REGISTER_FLOAT_KERNELS(kOp, deformable_offsets_grad_kernel);

}  // namespace npuscope::emulator::kernels

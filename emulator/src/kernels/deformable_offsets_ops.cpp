// DeformableOffsets (CANN's name): the sampling half of a deformable convolution (torchvision's
// deform_conv2d, DCN v1 and, with a mask, v2). x [N, C, H, W], offsets [N, 2 * dg * kh * kw, H_out,
// W_out], optional mask [N, dg * kh * kw, H_out, W_out] -> y [N, C, H_out * kh, W_out * kw], where
//   y[n, c, oy * kh + i, ox * kw + j] = mask[n, g, (i, j), oy, ox] · bilinear(x[n, c], py, px)
//   py = oy * stride_h - pad_top + i * dil_h + offsets[n, g, 2 * (i * kw + j), oy, ox]
//   px = ox * stride_w - pad_left + j * dil_w + offsets[n, g, 2 * (i * kw + j) + 1, oy, ox]
// for channel c of deformable group g = c / (C / dg). A Conv2d of y with stride = kernel = (kh, kw),
// no padding and the convolution's weight and groups is then the deformable convolution.
// Attributes: ksize [kh, kw] (required), strides [sh, sw] (1), pads [top, left, bottom, right] (0),
// dilations [dh, dw] (1), deformable_groups (1). Vector op; NPU: f32, rounded to the output dtype
// once; CPU golden: f64.
//
// Note [DeformableOffsets layout]
// CANN's DeformableOffsets (which torch_npu's npu_deformable_conv2d launches before a Conv2D with
// stride = kernel size; its gradient is DeformableOffsetsGrad) is documented for NHWC x and one
// offsets tensor whose 3 * dg * kh * kw channels hold all x offsets, then all y offsets, then the
// mask (mmcv reorders torchvision's (y, x) pairs and concatenates the mask before calling it), and
// samples into an NHWC [N, H_out * kh, W_out * kw, C]. Its exact internal layout is not public, so
// this op is defined here in the emulator's NCHW convention with torchvision's layout: offsets as
// (y, x) pairs per kernel tap, the mask a separate optional input (absent: DCN v1, a mask of 1),
// and y NCHW, which the emulator's Conv2d takes as it is. The work per element (four taps, a
// multiply by the mask) is the same, and the PyTorch device launches no reordering tasks that
// torch_npu's layout would need (mmcv's index_select and cat).
// Sampling, as torchvision 0.14's deformable_im2col: a position with py <= -1, py >= H, px <= -1
// or px >= W samples 0; otherwise the 4 neighbours (floor, floor + 1) are weighted bilinearly and a
// neighbour off the map counts as 0 (zero padding, not clamping). A NaN position samples 0 (where
// torchvision's int cast of NaN is undefined). The sampling lives in deformable_offsets_util.h,
// shared with the gradient (deformable_offsets_grad_ops.cpp).
#include <string>
#include <vector>

#include "deformable_offsets_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kOp[] = "DeformableOffsets";

std::vector<TensorMeta> infer_deformable_offsets(std::span<const TensorMeta> in, const Attrs& attrs) {
  const DeformParams p = check_deform_inputs(in, 0, attrs, kOp);
  return {{deform_columns_shape(p, kOp), in[0].dtype}};
}

// Per output element: 4 taps (a gather and a multiply-add each) and the mask's multiply; the
// offsets (and mask) are read once per tap and group, x's neighbours once per output element each.
KernelCost cost_deformable_offsets(std::span<const TensorMeta> in, std::span<const TensorMeta> out,
                                   const Attrs& attrs) {
  (void)attrs;
  KernelCost c = vector_cost(in, out, 9);
  const double item = static_cast<double>(dtype_size(in[0].dtype));
  double side = static_cast<double>(in[1].nbytes());
  if (has_input(in, 2)) side += static_cast<double>(in[2].nbytes());
  c.bytes = static_cast<double>(out[0].nbytes()) + 4 * static_cast<double>(out[0].numel()) * item + side;
  c.bytes_written = out_bytes(out);
  return c;
}

// The channels [c0, c0 + count) of image n, which share deformable group g's taps.
template <class T>
void sample_group(const DeformParams& p, const T* x, const DeformTap* taps, const T* mask_values, std::int64_t n,
                  std::int64_t c0, std::int64_t count, T* y) {
  const std::int64_t wk = p.out_w * p.kw, plane = p.plane();
  for (std::int64_t ch = c0; ch < c0 + count; ++ch) {
    const T* src = x + (n * p.c + ch) * p.h * p.w;
    T* dst = y + (n * p.c + ch) * p.out_h * p.kh * wk;
    for (std::int64_t k = 0; k < p.taps(); ++k) {
      const std::int64_t i = k / p.kw, j = k % p.kw;
      for (std::int64_t pix = 0; pix < plane; ++pix) {
        const std::size_t at = static_cast<std::size_t>(k * plane + pix);
        const DeformTap& t = taps[at];
        T value = 0;
        if (t.inside) {
          T v[4], wt[4];
          tap_values(src, p.w, t, v);
          tap_weights(t, wt);
          value = mask_values[at] * (wt[0] * v[0] + wt[1] * v[1] + wt[2] * v[2] + wt[3] * v[3]);
        }
        const std::int64_t oy = pix / p.out_w, ox = pix % p.out_w;
        dst[(oy * p.kh + i) * wk + ox * p.kw + j] = value;
      }
    }
  }
}

template <class T>
void deformable_offsets_kernel(KernelContext& ctx) {
  const DeformParams p = deform_params_of(ctx, 0, kOp);  // validated by infer
  std::vector<T> y(static_cast<std::size_t>(ctx.outputs[0].numel), T(0));
  if (!y.empty() && p.h > 0 && p.w > 0) {
    const std::vector<T> x = load<T>(ctx.inputs[0], ctx), off = load<T>(ctx.inputs[1], ctx);
    const std::vector<T> mask = p.modulated ? load<T>(ctx.inputs[2], ctx) : std::vector<T>{};
    std::vector<DeformTap> taps;
    std::vector<T> mask_values;
    deform_taps(p, off.data(), p.modulated ? mask.data() : nullptr, taps, mask_values);
    const std::int64_t per_group = p.c / p.groups, stride = p.taps() * p.plane();
    for (std::int64_t n = 0; n < p.n; ++n) {
      for (std::int64_t g = 0; g < p.groups; ++g) {
        const std::size_t at = static_cast<std::size_t>((n * p.groups + g) * stride);
        sample_group(p, x.data(), taps.data() + at, mask_values.data() + at, n, g * per_group, per_group, y.data());
      }
    }
  }
  store<T>(ctx.outputs[0], y.data(), ctx);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kOp,
                              .category = OpCategory::kVector,
                              .min_inputs = 2,
                              .max_inputs = 3,
                              .infer = infer_deformable_offsets,
                              .cost = cost_deformable_offsets});
NPUSCOPE_REGISTER_FLOAT_KERNELS(kOp, deformable_offsets_kernel);

}  // namespace npuscope::emulator::kernels

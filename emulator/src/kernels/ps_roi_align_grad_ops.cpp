// PSROIPoolingGradV2D (CANN's name; torchvision's _ps_roi_align_backward): the gradient of
// PSROIPoolingV2 (ps_roi_align_ops.cpp).
//   dy [R, output_dim, output_height, output_width], rois [R, 4] as (x1, y1, x2, y2), batch_indices [R]
//   (i32 / i64), channel_mapping (i32 / i64, dy's shape: the forward's) -> dx [N, C, H, W], given by
//   the attribute xdiff_shape = [N, C, H, W] (as ROIAlignGrad's; CANN's op has input_size), with
//   C = output_dim · output_height · output_width.
// Attributes sampling_ratio and spatial_scale as PSROIPoolingV2's (the output size is dy's). Each bin
// adds dy[bin] · w_i / count into the 4 neighbours of each of its samples in X's channel
// channel_mapping[bin], with the forward's samples and weights (Note [PSROIPooling sampling]); a
// sample more than one pixel outside the map, or a bin with no samples, adds nothing. That is
// torchvision's ps_roi_align_backward, which reads the channel from channel_mapping as this op does
// (CANN's op derives it from the bin, which is the same for the forward's mapping). A batch index
// outside [0, N), a mapped channel outside [0, C) or a roi not finite or too large to sample is bad
// data: a kernel fault (Note [Kernel faults]) and that roi or bin adds nothing. Vector op; NPU: f32,
// the adds in a fixed order (roi, channel, bin, sample: a deterministic stand-in for the atomic adds
// of torchvision's CUDA kernel and CANN's), rounded to the output dtype once; CPU golden: f64.
#include <string>
#include <vector>

#include "roi_pool_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kOp[] = "PSROIPoolingGradV2D";

RoiAlignParams read_params(const Attrs& attrs, const Shape& dy) {
  Attrs sized = attrs;
  sized.set("output_height", dy[2]).set("output_width", dy[3]);
  return read_ps_params(sized, kOp);
}

std::vector<TensorMeta> infer_ps_roi_align_grad(std::span<const TensorMeta> in, const Attrs& attrs) {
  require_floating(in, 0, kOp);
  const Shape& dy = in[0].shape;
  if (dy.size() != 4) {
    fail(kOp, "dy must be 4-D [num_rois, output_dim, output_height, output_width], got " + shape_str(dy));
  }
  const RoiAlignParams p = read_params(attrs, dy);
  const std::int64_t rois = check_rois(in, kOp);
  if (dy[0] != rois) {
    fail(kOp, "dy " + shape_str(dy) + " must have one row per roi (" + std::to_string(rois) + " rois)");
  }
  check_index_like(in, 3, kOp, "channel_mapping");
  const Shape x = size_attr(attrs, "xdiff_shape", {4}, kOp);
  if (x[1] != checked_mul(dy[1], p.out_h * p.out_w, kOp, "dy's output_dim * output_height * output_width")) {
    fail(kOp, "xdiff_shape " + shape_str(x) + " must have C = dy's output_dim * output_height * output_width (" +
                  std::to_string(dy[1]) + " * " + std::to_string(p.out_h * p.out_w) + ")");
  }
  checked_mul(checked_mul(x[0], x[1], kOp, "N * C"), checked_mul(x[2], x[3], kOp, "H * W"), kOp, "the dx size");
  return {{x, in[0].dtype}};
}

// As ROIAlignGrad's: one read of dy and 4 read-modify-writes of dx per sample, and dx zeroed first.
KernelCost cost_ps_roi_align_grad(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs& attrs) {
  const double ratio = static_cast<double>(attrs.get_int("sampling_ratio", 0));
  const double samples = ratio > 0 ? ratio * ratio : 4;  // adaptive: about 2 x 2 for typical rois
  const double taps = static_cast<double>(in[0].numel()) * samples * 4;
  KernelCost c = vector_cost(in, out, 0);
  c.flops = taps * 2;  // a multiply and an add per tap
  const double item = static_cast<double>(dtype_size(in[0].dtype));
  c.bytes = io_bytes(in, out) + taps * 2 * item;
  c.bytes_written = out_bytes(out) + taps * item;
  return c;
}

// One bin's gradient spread over its samples' neighbours in one channel plane of dx.
template <class T>
void spread_bin(T g, const RoiSample* samples, std::size_t per, T count, T* dx) {
  for (std::size_t k = 0; k < per; ++k) {
    const RoiSample& s = samples[k];
    if (!s.inside) continue;
    for (int i = 0; i < 4; ++i) dx[s.pos[i]] += g * static_cast<T>(s.w[i]) / count;  // torchvision's order
  }
}

template <class T>
void ps_roi_align_grad_kernel(KernelContext& ctx) {
  const Shape& dys = *ctx.inputs[0].shape;
  const RoiAlignParams p = read_params(ctx.attrs, dys);  // validated by infer
  const Shape& xs = *ctx.outputs[0].shape;
  const std::int64_t n = xs[0], c = xs[1], h = xs[2], w = xs[3], rois = dys[0];
  const std::int64_t bins = p.out_h * p.out_w, per_roi = dys[1] * bins;
  const std::vector<T> dy = load<T>(ctx.inputs[0], ctx);
  std::vector<double> boxes(static_cast<std::size_t>(ctx.inputs[1].numel));
  load_f64(ctx.inputs[1], boxes.data());
  std::vector<std::int64_t> batch(static_cast<std::size_t>(rois));
  load_i64(ctx.inputs[2], batch.data());
  std::vector<std::int64_t> mapping(static_cast<std::size_t>(ctx.inputs[3].numel));
  load_i64(ctx.inputs[3], mapping.data());
  std::vector<T> dx(static_cast<std::size_t>(ctx.outputs[0].numel), T(0));
  std::vector<RoiSample> samples;
  for (std::int64_t r = 0; r < rois && h > 0 && w > 0; ++r) {
    const std::int64_t b = batch[static_cast<std::size_t>(r)];
    std::int64_t count = 1;
    if (!sample_roi(ctx, kOp, r, b, n, boxes.data() + 4 * r, p, h, w, samples, count)) continue;
    const std::size_t per = samples.size() / static_cast<std::size_t>(bins);
    for (std::int64_t k = r * per_roi; k < (r + 1) * per_roi; ++k) {
      const std::int64_t ch = mapping[static_cast<std::size_t>(k)];
      if (ch < 0 || ch >= c) [[unlikely]] {
        if (ctx.fault.empty()) {
          set_fault(ctx, std::string(kOp) + ": channel_mapping " + std::to_string(ch) + " is outside [0, " +
                             std::to_string(c) + ") (X's C)");
        }
        continue;
      }
      const std::size_t bin = static_cast<std::size_t>(k % bins);
      spread_bin(dy[static_cast<std::size_t>(k)], samples.data() + bin * per, per, static_cast<T>(count),
                 dx.data() + (b * c + ch) * h * w);
    }
  }
  store<T>(ctx.outputs[0], dx.data(), ctx);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kOp,
                              .category = OpCategory::kVector,
                              .min_inputs = 4,
                              .max_inputs = 4,
                              .infer = infer_ps_roi_align_grad,
                              .cost = cost_ps_roi_align_grad});
NPUSCOPE_REGISTER_FLOAT_KERNELS(kOp, ps_roi_align_grad_kernel);

}  // namespace npuscope::emulator::kernels

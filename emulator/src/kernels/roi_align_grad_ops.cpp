// ROIAlignGrad (CANN's name; torchvision's _roi_align_backward): the gradient of RoiAlign's avg mode.
//   dy [R, C, output_height, output_width], rois [R, 4] as (x1, y1, x2, y2), batch_indices [R] (i32 / i64)
//   -> dx [N, C, H, W], given by the attribute xdiff_shape (CANN's name) = [N, C, H, W].
// Attributes sampling_ratio, spatial_scale and coordinate_transformation_mode as RoiAlign's (the
// output size is dy's). Every sample of a bin adds dy[bin] · w_i / count into each of its 4
// neighbours, with the forward's samples and weights (Note [RoiAlign sampling], roi_align_util.h); a
// sample more than one pixel outside the map adds nothing. That is torchvision's roi_align_backward
// (atomic adds on CUDA, and CANN's kernel accumulates atomically too); dx is zero where no sample reads.
// CANN's op takes rois [R, 5] with the batch index in column 0, as torchvision does; this one takes
// RoiAlign's inputs (the ONNX layout), so that the forward and its gradient check them with one rule:
// the PyTorch device splits torchvision's rois (pytorch/src/kernels_torchvision.cpp).
// A batch index outside [0, N) or a roi that is not finite is a kernel fault (Note [Kernel faults])
// and that roi adds nothing. Vector op; NPU: f32, the adds in a fixed order (roi, channel, bin,
// sample: a deterministic stand-in for the atomic adds), rounded to the output dtype once; CPU
// golden: f64.
#include <string>
#include <vector>

#include "roi_align_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kOp[] = "ROIAlignGrad";

RoiAlignParams read_params(const Attrs& attrs, const Shape& dy) {
  RoiAlignParams p;
  if (attrs.get_string("mode", "avg") != "avg") fail(kOp, "only mode avg has a gradient here");
  read_roi_sampling(attrs, kOp, p);
  p.out_h = dy[2];
  p.out_w = dy[3];
  return p;
}

std::vector<TensorMeta> infer_roi_align_grad(std::span<const TensorMeta> in, const Attrs& attrs) {
  require_floating(in, 0, kOp);
  const Shape& dy = in[0].shape;
  if (dy.size() != 4) fail(kOp, "dy must be 4-D [num_rois, C, output_height, output_width], got " + shape_str(dy));
  read_params(attrs, dy);
  const std::int64_t rois = check_rois(in, kOp);
  if (dy[0] != rois) {
    fail(kOp, "dy " + shape_str(dy) + " must have one row per roi (" + std::to_string(rois) + " rois)");
  }
  const Shape x = size_attr(attrs, "xdiff_shape", {4}, kOp);
  if (x[1] != dy[1]) fail(kOp, "xdiff_shape " + shape_str(x) + " must have dy's C (" + std::to_string(dy[1]) + ")");
  checked_mul(checked_mul(x[0], x[1], kOp, "N * C"), checked_mul(x[2], x[3], kOp, "H * W"), kOp, "the dx size");
  return {{x, in[0].dtype}};
}

// One read of dy and 4 read-modify-writes of dx per sample, and dx zeroed first.
KernelCost cost_roi_align_grad(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs& attrs) {
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

// One channel plane of one roi: each bin's gradient spread over its samples' neighbours.
template <class T>
void spread_bins(const T* dy, const std::vector<RoiSample>& samples, std::int64_t count, std::int64_t bins, T* dx) {
  const auto per = static_cast<std::size_t>(samples.size() / static_cast<std::size_t>(bins));
  const T n = static_cast<T>(count);
  for (std::int64_t b = 0; b < bins; ++b) {
    const T g = dy[b];
    for (std::size_t k = 0; k < per; ++k) {
      const RoiSample& s = samples[static_cast<std::size_t>(b) * per + k];
      if (!s.inside) continue;
      for (int i = 0; i < 4; ++i) dx[s.pos[i]] += g * static_cast<T>(s.w[i]) / n;  // torchvision's order
    }
  }
}

template <class T>
void roi_align_grad_kernel(KernelContext& ctx) {
  const Shape& dys = *ctx.inputs[0].shape;
  const RoiAlignParams p = read_params(ctx.attrs, dys);  // validated by infer
  const Shape& xs = *ctx.outputs[0].shape;
  const std::int64_t n = xs[0], c = xs[1], h = xs[2], w = xs[3], rois = dys[0];
  const std::int64_t bins = p.out_h * p.out_w;
  const std::vector<T> dy = load<T>(ctx.inputs[0], ctx);
  std::vector<double> boxes(static_cast<std::size_t>(ctx.inputs[1].numel));
  load_f64(ctx.inputs[1], boxes.data());
  std::vector<std::int64_t> batch(static_cast<std::size_t>(rois));
  load_i64(ctx.inputs[2], batch.data());
  std::vector<T> dx(static_cast<std::size_t>(ctx.outputs[0].numel), T(0));
  std::vector<RoiSample> samples;
  for (std::int64_t r = 0; r < rois && h > 0 && w > 0 && bins > 0; ++r) {
    const std::int64_t b = batch[static_cast<std::size_t>(r)];
    std::int64_t count = 1;
    if (!sample_roi(ctx, kOp, r, b, n, boxes.data() + 4 * r, p, h, w, samples, count)) continue;
    for (std::int64_t ch = 0; ch < c; ++ch) {
      spread_bins(dy.data() + (r * c + ch) * bins, samples, count, bins, dx.data() + (b * c + ch) * h * w);
    }
  }
  store<T>(ctx.outputs[0], dx.data(), ctx);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kOp,
                              .category = OpCategory::kVector,
                              .min_inputs = 3,
                              .max_inputs = 3,
                              .infer = infer_roi_align_grad,
                              .cost = cost_roi_align_grad});
NPUSCOPE_REGISTER_FLOAT_KERNELS(kOp, roi_align_grad_kernel);

}  // namespace npuscope::emulator::kernels

// RoiAlign (ONNX opset 10 / 16, torchvision.ops.roi_align): X [N, C, H, W], rois [R, 4] as
// (x1, y1, x2, y2) in input coordinates, batch_indices [R] (i32 / i64) -> [R, C, output_height,
// output_width]. Attributes: mode avg (default) | max, output_height / output_width (1),
// sampling_ratio (0: adaptive, ceil(roi size / output size) samples per bin and axis),
// spatial_scale (1), coordinate_transformation_mode half_pixel (default; the ONNX adapter sets
// output_half_pixel for opset 10, which had no such attribute) | output_half_pixel.
// Vector op; NPU: f32, rounded to the output dtype once; CPU golden: f64.
//
// Note [RoiAlign sampling]
// As the ONNX reference and onnxruntime do: each bin is sampled on a regular grid; a sample more
// than one pixel outside the map contributes 0, others are clamped to the map and interpolated
// bilinearly from their 4 neighbours. avg averages the samples; max takes, per sample, the largest
// of the 4 *weighted* neighbours (w_i · v_i, onnxruntime's definition, which the reference and the
// backend tests follow) and the largest over the samples. output_half_pixel forces a malformed
// (smaller than one pixel) roi to 1 x 1. A batch index outside [0, N) or a roi that is not finite
// is bad data: a kernel fault (Note [Kernel faults]) and zeros for that roi. The sampling lives in
// roi_align_util.h, shared with the gradient (ROIAlignGrad, roi_align_grad_ops.cpp).
#include <algorithm>
#include <string>

#include "roi_align_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kOp[] = "RoiAlign";

RoiAlignParams read_params(const Attrs& attrs) {
  RoiAlignParams p;
  const std::string mode = attrs.get_string("mode", "avg");
  if (mode != "avg" && mode != "max") fail(kOp, "unknown mode '" + mode + "' (expected avg or max)");
  p.max = mode == "max";
  read_roi_sampling(attrs, kOp, p);
  p.out_h = attrs.get_int("output_height", 1);
  p.out_w = attrs.get_int("output_width", 1);
  if (p.out_h < 1 || p.out_w < 1) {
    fail(kOp, "output_height and output_width must be >= 1, got " + std::to_string(p.out_h) + " x " +
                  std::to_string(p.out_w));
  }
  return p;
}

std::vector<TensorMeta> infer_roi_align(std::span<const TensorMeta> in, const Attrs& attrs) {
  const RoiAlignParams p = read_params(attrs);
  require_floating(in, 0, kOp);
  const Shape& x = in[0].shape;
  if (x.size() != 4) fail(kOp, "X must be 4-D [N, C, H, W], got " + shape_str(x));
  const std::int64_t rois = check_rois(in, kOp);
  const std::int64_t c = x[1];
  const std::int64_t plane = checked_mul(p.out_h, p.out_w, kOp, "output_height * output_width");
  checked_mul(checked_mul(rois, c, kOp, "num_rois * C"), plane, kOp, "the output size");
  return {{{rois, c, p.out_h, p.out_w}, in[0].dtype}};
}

KernelCost cost_roi_align(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs& attrs) {
  const double ratio = static_cast<double>(attrs.get_int("sampling_ratio", 0));
  const double samples = ratio > 0 ? ratio * ratio : 4;  // adaptive: about 2 x 2 for typical rois
  KernelCost c = vector_cost(in, out, 8 * samples);      // 4 multiply-adds per sample
  // Only the rois' windows of X are read, not all of X.
  c.bytes = static_cast<double>(out[0].nbytes()) * (1 + 4 * samples) + static_cast<double>(in[1].nbytes());
  return c;
}

// One channel plane of one roi: avg or max over each bin's samples.
template <class T>
void pool_bins(const T* src, const std::vector<RoiSample>& samples, std::int64_t count, std::int64_t bins, bool max,
               T* dst) {
  const auto per = static_cast<std::size_t>(samples.size() / static_cast<std::size_t>(bins));
  for (std::int64_t b = 0; b < bins; ++b) {
    T acc = 0;
    for (std::size_t k = 0; k < per; ++k) {
      const RoiSample& s = samples[static_cast<std::size_t>(b) * per + k];
      if (max) {
        T v = static_cast<T>(s.w[0]) * src[s.pos[0]];
        for (int i = 1; i < 4; ++i) v = std::max(v, static_cast<T>(s.w[i]) * src[s.pos[i]]);
        acc = k == 0 ? v : std::max(acc, v);
      } else {
        for (int i = 0; i < 4; ++i) acc += static_cast<T>(s.w[i]) * src[s.pos[i]];
      }
    }
    dst[b] = max ? acc : acc / static_cast<T>(count);
  }
}

template <class T>
void roi_align_kernel(KernelContext& ctx) {
  const RoiAlignParams p = read_params(ctx.attrs);  // validated by infer
  const Shape& xs = *ctx.inputs[0].shape;
  const std::int64_t n = xs[0], c = xs[1], h = xs[2], w = xs[3], rois = (*ctx.inputs[1].shape)[0];
  const std::int64_t bins = p.out_h * p.out_w;
  const std::vector<T> x = load<T>(ctx.inputs[0], ctx);
  std::vector<double> boxes(static_cast<std::size_t>(ctx.inputs[1].numel));
  load_f64(ctx.inputs[1], boxes.data());
  std::vector<std::int64_t> batch(static_cast<std::size_t>(rois));
  load_i64(ctx.inputs[2], batch.data());
  std::vector<T> y(static_cast<std::size_t>(ctx.outputs[0].numel), T(0));
  std::vector<RoiSample> samples;
  for (std::int64_t r = 0; r < rois && h > 0 && w > 0; ++r) {
    const std::int64_t b = batch[static_cast<std::size_t>(r)];
    std::int64_t count = 1;
    if (!sample_roi(ctx, kOp, r, b, n, boxes.data() + 4 * r, p, h, w, samples, count)) continue;
    for (std::int64_t ch = 0; ch < c; ++ch) {
      pool_bins(x.data() + (b * c + ch) * h * w, samples, count, bins, p.max, y.data() + (r * c + ch) * bins);
    }
  }
  store<T>(ctx.outputs[0], y.data(), ctx);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kOp,
                              .category = OpCategory::kVector,
                              .min_inputs = 3,
                              .max_inputs = 3,
                              .infer = infer_roi_align,
                              .cost = cost_roi_align});
NPUSCOPE_REGISTER_FLOAT_KERNELS(kOp, roi_align_kernel);

}  // namespace npuscope::emulator::kernels

// PSROIPoolingV2 (CANN's name, torch_npu's npu_ps_roi_pooling; here torchvision.ops.ps_roi_align):
// position-sensitive RoiAlign.
//   X [N, C, H, W], rois [R, 4] as (x1, y1, x2, y2), batch_indices [R] (i32 / i64)
//   -> y [R, C / (output_height · output_width), output_height, output_width] in X's dtype and
//      channel_mapping (i32, y's shape: the X channel each output read).
// Attributes output_height / output_width (>= 1; CANN's group_size is both), sampling_ratio (0:
// adaptive) and spatial_scale (1), as RoiAlign's; C must be a multiple of output_height · output_width
// (CANN's output_dim is the quotient). CANN's op pools whole-pixel bins from rois [B, 5, R] in 5HD;
// this one takes RoiAlign's rois and batch_indices and samples as torchvision does, so that the
// calibration of CANN's kernel times lands on the op torchvision's models run. Its gradient is
// PSROIPoolingGradV2D (ps_roi_align_grad_ops.cpp).
//
// Note [PSROIPooling sampling]
// As torchvision 0.14's ps_roi_align (csrc/ops/cpu/ps_roi_align_kernel.cpp): output channel c of bin
// (i, j) reads X's channel (c · output_height + i) · output_width + j of the roi's image (written to
// channel_mapping), and averages that channel over the bin's samples exactly as RoiAlign with
// half_pixel coordinates (Note [RoiAlign sampling], roi_align_util.h): a half-pixel offset, no
// minimum roi size, a sample more than one pixel outside the map contributes 0. An adaptive grid of
// no samples gives NaN or 0 as torchvision's (Note [PSROIPooling empty grids], roi_pool_util.h). A
// batch index outside [0, N) or a roi not finite or too large to sample is a kernel fault (Note
// [Kernel faults]): zeros for that roi. Vector op; NPU: f32 (torchvision's own f32 kernel places its
// samples in f32, the emulator in f64: the values differ in the last bits), rounded to the output
// dtype once; CPU golden: f64.
#include <limits>
#include <string>
#include <vector>

#include "roi_pool_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kOp[] = "PSROIPoolingV2";

std::vector<TensorMeta> infer_ps_roi_align(std::span<const TensorMeta> in, const Attrs& attrs) {
  const RoiAlignParams p = read_ps_params(attrs, kOp);
  require_floating(in, 0, kOp);
  const Shape& x = in[0].shape;
  if (x.size() != 4) fail(kOp, "X must be 4-D [N, C, H, W], got " + shape_str(x));
  const std::int64_t rois = check_rois(in, kOp);
  const std::int64_t dim = ps_output_dim(x[1], p, kOp);
  checked_mul(rois, x[1], kOp, "the output size");  // = num_rois * output_dim * output_height * output_width
  checked_mul(x[2], x[3], kOp, "H * W");
  const Shape y{rois, dim, p.out_h, p.out_w};
  return {{y, in[0].dtype}, {y, DType::kI32}};
}

// As RoiAlign's: 4 multiply-adds per sample, and only the rois' windows of X read.
KernelCost cost_ps_roi_align(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs& attrs) {
  const double ratio = static_cast<double>(attrs.get_int("sampling_ratio", 0));
  const double samples = ratio > 0 ? ratio * ratio : 4;  // adaptive: about 2 x 2 for typical rois
  KernelCost c = vector_cost(in, out, 0);
  c.flops = static_cast<double>(out[0].numel()) * 8 * samples;
  c.bytes = static_cast<double>(out[0].nbytes()) * (1 + 4 * samples) + static_cast<double>(out[1].nbytes()) +
            static_cast<double>(in[1].nbytes() + in[2].nbytes());
  return c;
}

// One output channel of one roi: bin b averages X's channel first + b (planes of `plane` elements
// from x) over its samples; `empty` when the bins have none.
template <class T>
void average_bins(const T* x, std::int64_t plane, std::int64_t first, const std::vector<RoiSample>& samples,
                  std::int64_t count, std::int64_t bins, T empty, T* dst) {
  const auto per = static_cast<std::size_t>(samples.size() / static_cast<std::size_t>(bins));
  for (std::int64_t b = 0; b < bins; ++b) {
    const T* src = x + (first + b) * plane;
    T acc = 0;
    for (std::size_t k = 0; k < per; ++k) {
      const RoiSample& s = samples[static_cast<std::size_t>(b) * per + k];
      for (int i = 0; i < 4; ++i) acc += static_cast<T>(s.w[i]) * src[s.pos[i]];
    }
    dst[b] = per == 0 ? empty : acc / static_cast<T>(count);
  }
}

template <class T>
void ps_roi_align_kernel(KernelContext& ctx) {
  const RoiAlignParams p = read_ps_params(ctx.attrs, kOp);  // validated by infer
  const Shape& xs = *ctx.inputs[0].shape;
  const std::int64_t n = xs[0], c = xs[1], h = xs[2], w = xs[3], rois = (*ctx.inputs[1].shape)[0];
  const std::int64_t bins = p.out_h * p.out_w, dim = c / bins;
  const std::vector<T> x = load<T>(ctx.inputs[0], ctx);
  std::vector<double> boxes(static_cast<std::size_t>(ctx.inputs[1].numel));
  load_f64(ctx.inputs[1], boxes.data());
  std::vector<std::int64_t> batch(static_cast<std::size_t>(rois));
  load_i64(ctx.inputs[2], batch.data());
  std::vector<T> y(static_cast<std::size_t>(ctx.outputs[0].numel), T(0));
  std::vector<std::int64_t> mapping(y.size(), 0);
  std::vector<RoiSample> samples;
  for (std::int64_t r = 0; r < rois; ++r) {
    // channel_mapping does not depend on the data: written even for a faulty roi.
    for (std::int64_t k = 0; k < dim * bins; ++k) mapping[static_cast<std::size_t>(r * dim * bins + k)] = k;
    const std::int64_t b = batch[static_cast<std::size_t>(r)];
    std::int64_t count = 1;
    const double* box = boxes.data() + 4 * r;
    if (h == 0 || w == 0 || !sample_roi(ctx, kOp, r, b, n, box, p, h, w, samples, count)) continue;
    const T empty = ps_empty_grid_is_nan(box, p) ? std::numeric_limits<T>::quiet_NaN() : T(0);
    for (std::int64_t oc = 0; oc < dim; ++oc) {
      const std::int64_t o = (r * dim + oc) * bins;
      average_bins(x.data() + b * c * h * w, h * w, oc * bins, samples, count, bins, empty, y.data() + o);
    }
  }
  store<T>(ctx.outputs[0], y.data(), ctx);
  store_i64(ctx.outputs[1], mapping.data());
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kOp,
                              .category = OpCategory::kVector,
                              .min_inputs = 3,
                              .max_inputs = 3,
                              .infer = infer_ps_roi_align,
                              .cost = cost_ps_roi_align});
NPUSCOPE_REGISTER_FLOAT_KERNELS(kOp, ps_roi_align_kernel);

}  // namespace npuscope::emulator::kernels

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
// is bad data: a kernel fault (Note [Kernel faults]) and zeros for that roi.
#include <algorithm>
#include <cmath>
#include <string>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kOp[] = "RoiAlign";
// Samples per bin and axis, and per roi, beyond which a roi is taken as malformed (a fault).
constexpr double kMaxGrid = 4096, kMaxSamples = 1 << 24;

struct Params {
  bool max = false, half_pixel = true;
  std::int64_t out_h = 1, out_w = 1, sampling_ratio = 0;
  double spatial_scale = 1;
};

Params read_params(const Attrs& attrs) {
  Params p;
  const std::string mode = attrs.get_string("mode", "avg");
  if (mode != "avg" && mode != "max") fail(kOp, "unknown mode '" + mode + "' (expected avg or max)");
  p.max = mode == "max";
  const std::string ctm = attrs.get_string("coordinate_transformation_mode", "half_pixel");
  if (ctm != "half_pixel" && ctm != "output_half_pixel") {
    fail(kOp, "unknown coordinate_transformation_mode '" + ctm + "' (expected half_pixel or output_half_pixel)");
  }
  p.half_pixel = ctm == "half_pixel";
  p.out_h = attrs.get_int("output_height", 1);
  p.out_w = attrs.get_int("output_width", 1);
  p.sampling_ratio = attrs.get_int("sampling_ratio", 0);
  p.spatial_scale = attrs.get_float("spatial_scale", 1.0);
  if (p.out_h < 1 || p.out_w < 1) {
    fail(kOp, "output_height and output_width must be >= 1, got " + std::to_string(p.out_h) + " x " +
                  std::to_string(p.out_w));
  }
  if (p.sampling_ratio < 0 || p.sampling_ratio > static_cast<std::int64_t>(kMaxGrid)) {
    fail(kOp, "sampling_ratio must be in [0, 4096] (0: adaptive), got " + std::to_string(p.sampling_ratio));
  }
  if (!std::isfinite(p.spatial_scale)) fail(kOp, "spatial_scale must be finite");
  return p;
}

std::vector<TensorMeta> infer_roi_align(std::span<const TensorMeta> in, const Attrs& attrs) {
  const Params p = read_params(attrs);
  require_floating(in, 0, kOp);
  require_floating(in, 1, kOp);
  if (in[2].dtype != DType::kI64 && in[2].dtype != DType::kI32) {
    fail(kOp, "batch_indices must be i32 or i64, got " + std::string(dtype_name(in[2].dtype)));
  }
  const Shape &x = in[0].shape, &rois = in[1].shape, &idx = in[2].shape;
  if (x.size() != 4) fail(kOp, "X must be 4-D [N, C, H, W], got " + shape_str(x));
  if (rois.size() != 2 || rois[1] != 4) fail(kOp, "rois must be [num_rois, 4], got " + shape_str(rois));
  if (idx.size() != 1 || idx[0] != rois[0]) {
    fail(kOp, "batch_indices must be [num_rois] = [" + std::to_string(rois[0]) + "], got " + shape_str(idx));
  }
  const std::int64_t c = x[1];
  const std::int64_t plane = checked_mul(p.out_h, p.out_w, kOp, "output_height * output_width");
  checked_mul(checked_mul(rois[0], c, kOp, "num_rois * C"), plane, kOp, "the output size");
  return {{{rois[0], c, p.out_h, p.out_w}, in[0].dtype}};
}

KernelCost cost_roi_align(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs& attrs) {
  const double ratio = static_cast<double>(attrs.get_int("sampling_ratio", 0));
  const double samples = ratio > 0 ? ratio * ratio : 4;  // adaptive: about 2 x 2 for typical rois
  KernelCost c = vector_cost(in, out, 8 * samples);      // 4 multiply-adds per sample
  // Only the rois' windows of X are read, not all of X.
  c.bytes = static_cast<double>(out[0].nbytes()) * (1 + 4 * samples) + static_cast<double>(in[1].nbytes());
  return c;
}

// ---- sampling (Note [RoiAlign sampling]) --------------------------------------------------------

struct Sample {
  std::int64_t pos[4] = {0, 0, 0, 0};
  double w[4] = {0, 0, 0, 0};
};

Sample bilinear_sample(double y, double x, std::int64_t h, std::int64_t w) {
  Sample s;
  if (y < -1.0 || y > static_cast<double>(h) || x < -1.0 || x > static_cast<double>(w)) return s;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  auto y_lo = static_cast<std::int64_t>(y), x_lo = static_cast<std::int64_t>(x);
  std::int64_t y_hi = y_lo + 1, x_hi = x_lo + 1;
  if (y_lo >= h - 1) y = static_cast<double>(y_hi = y_lo = h - 1);
  if (x_lo >= w - 1) x = static_cast<double>(x_hi = x_lo = w - 1);
  const double ly = y - static_cast<double>(y_lo), lx = x - static_cast<double>(x_lo), hy = 1 - ly, hx = 1 - lx;
  s = {{y_lo * w + x_lo, y_lo * w + x_hi, y_hi * w + x_lo, y_hi * w + x_hi}, {hy * hx, hy * lx, ly * hx, ly * lx}};
  return s;
}

// The samples of every bin of one roi ([out_h][out_w][grid_h][grid_w]), or false if it is malformed.
bool roi_samples(const double box[4], const Params& p, std::int64_t h, std::int64_t w, std::vector<Sample>& out,
                 std::int64_t& count) {
  const double offset = p.half_pixel ? 0.5 : 0.0;
  const double x0 = box[0] * p.spatial_scale - offset, y0 = box[1] * p.spatial_scale - offset;
  double rw = box[2] * p.spatial_scale - offset - x0, rh = box[3] * p.spatial_scale - offset - y0;
  if (!std::isfinite(x0) || !std::isfinite(y0) || !std::isfinite(rw) || !std::isfinite(rh)) return false;
  if (!p.half_pixel) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
  const double bin_h = rh / static_cast<double>(p.out_h), bin_w = rw / static_cast<double>(p.out_w);
  const double gh_d = p.sampling_ratio > 0 ? static_cast<double>(p.sampling_ratio) : std::ceil(bin_h);
  const double gw_d = p.sampling_ratio > 0 ? static_cast<double>(p.sampling_ratio) : std::ceil(bin_w);
  if (gh_d > kMaxGrid || gw_d > kMaxGrid || gh_d * gw_d * static_cast<double>(p.out_h * p.out_w) > kMaxSamples) {
    return false;
  }
  const auto gh = static_cast<std::int64_t>(std::max(gh_d, 0.0)), gw = static_cast<std::int64_t>(std::max(gw_d, 0.0));
  count = std::max<std::int64_t>(gh * gw, 1);
  out.clear();
  for (std::int64_t ph = 0; ph < p.out_h; ++ph)
    for (std::int64_t pw = 0; pw < p.out_w; ++pw)
      for (std::int64_t iy = 0; iy < gh; ++iy) {
        const double y = y0 + static_cast<double>(ph) * bin_h + (static_cast<double>(iy) + 0.5) * bin_h / gh_d;
        for (std::int64_t ix = 0; ix < gw; ++ix) {
          const double x = x0 + static_cast<double>(pw) * bin_w + (static_cast<double>(ix) + 0.5) * bin_w / gw_d;
          out.push_back(bilinear_sample(y, x, h, w));
        }
      }
  return true;
}

// One channel plane of one roi: avg or max over each bin's samples.
template <class T>
void pool_bins(const T* src, const std::vector<Sample>& samples, std::int64_t count, std::int64_t bins, bool max,
               T* dst) {
  const auto per = static_cast<std::size_t>(samples.size() / static_cast<std::size_t>(bins));
  for (std::int64_t b = 0; b < bins; ++b) {
    T acc = 0;
    for (std::size_t k = 0; k < per; ++k) {
      const Sample& s = samples[static_cast<std::size_t>(b) * per + k];
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
  const Params p = read_params(ctx.attrs);  // validated by infer
  const Shape& xs = *ctx.inputs[0].shape;
  const std::int64_t n = xs[0], c = xs[1], h = xs[2], w = xs[3], rois = (*ctx.inputs[1].shape)[0];
  const std::int64_t bins = p.out_h * p.out_w;
  const std::vector<T> x = load<T>(ctx.inputs[0], ctx);
  std::vector<double> boxes(static_cast<std::size_t>(ctx.inputs[1].numel));
  load_f64(ctx.inputs[1], boxes.data());
  std::vector<std::int64_t> batch(static_cast<std::size_t>(rois));
  load_i64(ctx.inputs[2], batch.data());
  std::vector<T> y(static_cast<std::size_t>(ctx.outputs[0].numel), T(0));
  std::vector<Sample> samples;
  for (std::int64_t r = 0; r < rois && h > 0 && w > 0; ++r) {
    const std::int64_t b = batch[static_cast<std::size_t>(r)];
    if (b < 0 || b >= n) {
      set_fault(ctx, std::string(kOp) + ": batch_indices[" + std::to_string(r) + "] = " + std::to_string(b) +
                         " is outside [0, " + std::to_string(n) + ") (X's N)");
      continue;
    }
    std::int64_t count = 1;
    if (!roi_samples(boxes.data() + 4 * r, p, h, w, samples, count)) {
      set_fault(ctx, std::string(kOp) + ": roi " + std::to_string(r) + " is not finite or too large to sample");
      continue;
    }
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

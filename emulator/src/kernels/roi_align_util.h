// The sampling of RoiAlign (Note [RoiAlign sampling] in roi_align_ops.cpp), shared by its forward
// (roi_align_ops.cpp) and its gradient ROIAlignGrad (roi_align_grad_ops.cpp): the gradient spreads each
// output over exactly the taps and weights the forward read, and both ops check their rois and
// sampling attributes with one set of rules and messages.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {

// Samples per bin and axis, and per roi, beyond which a roi is taken as malformed (a fault).
inline constexpr double kRoiMaxGrid = 4096, kRoiMaxSamples = 1 << 24;

struct RoiAlignParams {
  bool max = false, half_pixel = true;
  std::int64_t out_h = 1, out_w = 1, sampling_ratio = 0;
  double spatial_scale = 1;
};

// The attributes both ops take: coordinate_transformation_mode, sampling_ratio and spatial_scale.
inline void read_roi_sampling(const Attrs& attrs, const char* op, RoiAlignParams& p) {
  const std::string ctm = attrs.get_string("coordinate_transformation_mode", "half_pixel");
  if (ctm != "half_pixel" && ctm != "output_half_pixel") {
    fail(op, "unknown coordinate_transformation_mode '" + ctm + "' (expected half_pixel or output_half_pixel)");
  }
  p.half_pixel = ctm == "half_pixel";
  p.sampling_ratio = attrs.get_int("sampling_ratio", 0);
  p.spatial_scale = attrs.get_float("spatial_scale", 1.0);
  if (p.sampling_ratio < 0 || p.sampling_ratio > static_cast<std::int64_t>(kRoiMaxGrid)) {
    fail(op, "sampling_ratio must be in [0, 4096] (0: adaptive), got " + std::to_string(p.sampling_ratio));
  }
  if (!std::isfinite(p.spatial_scale)) fail(op, "spatial_scale must be finite");
}

// Inputs 1 and 2 of both ops: rois [R, 4] (floating) and batch_indices [R] (i32 / i64). Returns R.
inline std::int64_t check_rois(std::span<const TensorMeta> in, const char* op) {
  require_floating(in, 1, op);
  if (in[2].dtype != DType::kI64 && in[2].dtype != DType::kI32) {
    fail(op, "batch_indices must be i32 or i64, got " + std::string(dtype_name(in[2].dtype)));
  }
  const Shape &rois = in[1].shape, &idx = in[2].shape;
  if (rois.size() != 2 || rois[1] != 4) fail(op, "rois must be [num_rois, 4], got " + shape_str(rois));
  if (idx.size() != 1 || idx[0] != rois[0]) {
    fail(op, "batch_indices must be [num_rois] = [" + std::to_string(rois[0]) + "], got " + shape_str(idx));
  }
  return rois[0];
}

// One sample: its 4 neighbours (flat indices into an H x W plane) and their bilinear weights. A sample
// more than one pixel outside the map is not `inside`: zero weights, and the gradient skips it.
struct RoiSample {
  std::int64_t pos[4] = {0, 0, 0, 0};
  double w[4] = {0, 0, 0, 0};
  bool inside = false;
};

inline RoiSample bilinear_sample(double y, double x, std::int64_t h, std::int64_t w) {
  RoiSample s;
  if (y < -1.0 || y > static_cast<double>(h) || x < -1.0 || x > static_cast<double>(w)) return s;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  auto y_lo = static_cast<std::int64_t>(y), x_lo = static_cast<std::int64_t>(x);
  std::int64_t y_hi = y_lo + 1, x_hi = x_lo + 1;
  if (y_lo >= h - 1) y = static_cast<double>(y_hi = y_lo = h - 1);
  if (x_lo >= w - 1) x = static_cast<double>(x_hi = x_lo = w - 1);
  const double ly = y - static_cast<double>(y_lo), lx = x - static_cast<double>(x_lo), hy = 1 - ly, hx = 1 - lx;
  return {
      {y_lo * w + x_lo, y_lo * w + x_hi, y_hi * w + x_lo, y_hi * w + x_hi}, {hy * hx, hy * lx, ly * hx, ly * lx}, true};
}

// The samples of every bin of one roi ([out_h][out_w][grid_h][grid_w]) and the count each bin averages
// over, or false if the roi is not finite or too large to sample.
inline bool roi_samples(const double box[4], const RoiAlignParams& p, std::int64_t h, std::int64_t w,
                        std::vector<RoiSample>& out, std::int64_t& count) {
  const double offset = p.half_pixel ? 0.5 : 0.0;
  const double x0 = box[0] * p.spatial_scale - offset, y0 = box[1] * p.spatial_scale - offset;
  double rw = box[2] * p.spatial_scale - offset - x0, rh = box[3] * p.spatial_scale - offset - y0;
  if (!std::isfinite(x0) || !std::isfinite(y0) || !std::isfinite(rw) || !std::isfinite(rh)) return false;
  if (!p.half_pixel) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
  const double bin_h = rh / static_cast<double>(p.out_h), bin_w = rw / static_cast<double>(p.out_w);
  const double gh_d = p.sampling_ratio > 0 ? static_cast<double>(p.sampling_ratio) : std::ceil(bin_h);
  const double gw_d = p.sampling_ratio > 0 ? static_cast<double>(p.sampling_ratio) : std::ceil(bin_w);
  if (gh_d > kRoiMaxGrid || gw_d > kRoiMaxGrid ||
      gh_d * gw_d * static_cast<double>(p.out_h * p.out_w) > kRoiMaxSamples) {
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

// roi_samples for roi r of a kernel, whose batch index must be in [0, n): false after recording a
// kernel fault naming the roi (Note [Kernel faults]), which the caller then skips.
inline bool sample_roi(KernelContext& ctx, const char* op, std::int64_t r, std::int64_t batch, std::int64_t n,
                       const double box[4], const RoiAlignParams& p, std::int64_t h, std::int64_t w,
                       std::vector<RoiSample>& samples, std::int64_t& count) {
  if (batch < 0 || batch >= n) {
    set_fault(ctx, std::string(op) + ": batch_indices[" + std::to_string(r) + "] = " + std::to_string(batch) +
                       " is outside [0, " + std::to_string(n) + ") (X's N)");
    return false;
  }
  if (!roi_samples(box, p, h, w, samples, count)) {
    set_fault(ctx, std::string(op) + ": roi " + std::to_string(r) + " is not finite or too large to sample");
    return false;
  }
  return true;
}

}  // namespace npuscope::emulator::kernels

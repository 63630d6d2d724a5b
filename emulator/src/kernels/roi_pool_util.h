// What RoiPoolingWithArgMax (roi_pool_ops.cpp), PSROIPoolingV2 (ps_roi_align_ops.cpp) and their
// gradients share beyond roi_align_util.h: the check of a roi's batch index, the check of an index
// tensor that a forward returned and its gradient takes back (argmax, channel_mapping), and
// PSROIPoolingV2's attributes, read and checked by the forward and its gradient with one rule.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <string>

#include "roi_align_util.h"

namespace npuscope::emulator::kernels {

// Whether roi r's batch index is in [0, n); if not, records a kernel fault naming it (Note [Kernel
// faults]) and the caller skips the roi.
inline bool roi_batch_ok(KernelContext& ctx, const char* op, std::int64_t r, std::int64_t batch, std::int64_t n) {
  if (batch >= 0 && batch < n) return true;
  set_fault(ctx, std::string(op) + ": batch_indices[" + std::to_string(r) + "] = " + std::to_string(batch) +
                     " is outside [0, " + std::to_string(n) + ") (X's N)");
  return false;
}

// Input i is an i32 / i64 tensor of dy's shape (a gradient's argmax or channel_mapping).
inline void check_index_like(std::span<const TensorMeta> in, int i, const char* op, const char* name) {
  if (in[i].dtype != DType::kI32 && in[i].dtype != DType::kI64) {
    fail(op, std::string(name) + " must be i32 or i64, got " + std::string(dtype_name(in[i].dtype)));
  }
  if (in[i].shape != in[0].shape) {
    fail(op, std::string(name) + " must have dy's shape " + shape_str(in[0].shape) + ", got " + shape_str(in[i].shape));
  }
}

// PSROIPoolingV2's attributes: output_height / output_width (>= 1), and sampling_ratio and
// spatial_scale as RoiAlign's. Its coordinates are always half_pixel (torchvision's ps_roi_align).
inline RoiAlignParams read_ps_params(const Attrs& attrs, const char* op) {
  RoiAlignParams p;
  read_roi_sampling(attrs, op, p);
  if (!p.half_pixel) fail(op, "only coordinate_transformation_mode half_pixel is supported");
  p.out_h = attrs.get_int("output_height", 1);
  p.out_w = attrs.get_int("output_width", 1);
  if (p.out_h < 1 || p.out_w < 1 || p.out_h > (1 << 20) || p.out_w > (1 << 20)) {
    fail(op, "output_height and output_width must be in [1, 2^20], got " + std::to_string(p.out_h) + " x " +
                 std::to_string(p.out_w));
  }
  return p;
}

// The input channels C of PSROIPoolingV2 must be output_dim · output_height · output_width; returns
// output_dim.
inline std::int64_t ps_output_dim(std::int64_t channels, const RoiAlignParams& p, const char* op) {
  const std::int64_t bins = p.out_h * p.out_w;
  if (channels % bins != 0) {
    fail(op, "X's channels (" + std::to_string(channels) + ") must be a multiple of output_height * output_width (" +
                 std::to_string(bins) + ")");
  }
  return channels / bins;
}

// Note [PSROIPooling empty grids]
// torchvision's ps_roi_align divides each bin's sum by grid_h · grid_w with no floor of 1 (its
// roi_align has one): with adaptive sampling, a roi whose size over the output size is in (-1, 0] on
// either axis gets a grid of 0 samples and its bins 0 / 0 = NaN; a roi more negative than that on
// both axes gets a negative grid, no samples and 0. roi_samples (roi_align_util.h) clamps both to an
// empty grid, and this tells the forward which of the two the bins of box are.
inline bool ps_empty_grid_is_nan(const double box[4], const RoiAlignParams& p) {
  if (p.sampling_ratio > 0) return false;
  const double x0 = box[0] * p.spatial_scale - 0.5, y0 = box[1] * p.spatial_scale - 0.5;  // as roi_samples
  const double rw = box[2] * p.spatial_scale - 0.5 - x0, rh = box[3] * p.spatial_scale - 0.5 - y0;
  return std::ceil(rh / static_cast<double>(p.out_h)) == 0 || std::ceil(rw / static_cast<double>(p.out_w)) == 0;
}

}  // namespace npuscope::emulator::kernels

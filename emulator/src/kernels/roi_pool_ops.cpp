// RoiPoolingWithArgMax (CANN's name, the op mmcv's NPU roi_pool launches; torchvision.ops.roi_pool):
//   X [N, C, H, W], rois [R, 4] as (x1, y1, x2, y2) in input coordinates, batch_indices [R] (i32 / i64)
//   -> y [R, C, pooled_h, pooled_w] in X's dtype and argmax [R, C, pooled_h, pooled_w] (i32).
// Attributes pooled_h and pooled_w (CANN's names, >= 1) and spatial_scale (1: CANN's spatial_scale_h
// and spatial_scale_w in one, as torchvision has one). CANN's op takes rois [R, 5] with the batch index
// in column 0; this one takes RoiAlign's rois and batch_indices, checked with RoiAlign's rule
// (roi_align_util.h), and the PyTorch device splits torchvision's rois
// (pytorch/src/kernels_torchvision_roi_pool.cpp). The gradient is RoiPoolingGradWithArgMax
// (roi_pool_grad_ops.cpp), which reads argmax back.
//
// Note [RoiPooling bins]
// As torchvision 0.14's roi_pool (csrc/ops/cpu/roi_pool_kernel.cpp): a roi's corners are scaled and
// rounded to whole pixels (halves away from zero), its size is end - start + 1 and at least 1 (a
// malformed roi becomes one pixel), and bin (ph, pw) covers the rows [floor(ph · s), ceil((ph + 1) · s))
// with s = roi height / pooled_h, offset by the roi's first row and clipped to the map; columns alike.
// A bin yields its largest value and that value's flat index in the H x W plane (the first one,
// row-major, on ties). A bin clipped away is empty: 0 and argmax -1, which the gradient skips. A bin
// whose values are all NaN or -inf yields -FLT_MAX and -1 (torchvision's start value, which neither
// beats). The geometry is computed in float for f16 / f32 rois and in double for f64 ones, as
// torchvision computes it in the rois' dtype (in half for f16, which float stands in for), and the
// same way on both backends: the NPU and CPU kernels pick the same elements, and y copies X's values,
// so the two agree exactly. A batch index outside [0, N), or a roi whose scaled corners are not finite
// or beyond 2^30 pixels, is bad data: a kernel fault (Note [Kernel faults]), and 0 and -1 for that roi.
// Vector op (a max reduction per bin); NPU: f32; CPU golden: f64 — both exact here.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>
#include <vector>

#include "roi_pool_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kOp[] = "RoiPoolingWithArgMax";
constexpr double kMaxCorner = 1 << 30;  // pixels; beyond that a scaled corner is taken as malformed

struct RoiPoolParams {
  std::int64_t pooled_h = 1, pooled_w = 1;
  double spatial_scale = 1;
};

RoiPoolParams read_params(const Attrs& attrs) {
  RoiPoolParams p;
  p.pooled_h = attrs.get_int("pooled_h", 1);
  p.pooled_w = attrs.get_int("pooled_w", 1);
  p.spatial_scale = attrs.get_float("spatial_scale", 1.0);
  if (p.pooled_h < 1 || p.pooled_w < 1 || p.pooled_h > (1 << 20) || p.pooled_w > (1 << 20)) {
    fail(kOp, "pooled_h and pooled_w must be in [1, 2^20], got " + std::to_string(p.pooled_h) + " x " +
                  std::to_string(p.pooled_w));
  }
  if (!std::isfinite(p.spatial_scale)) fail(kOp, "spatial_scale must be finite");
  return p;
}

std::vector<TensorMeta> infer_roi_pool(std::span<const TensorMeta> in, const Attrs& attrs) {
  const RoiPoolParams p = read_params(attrs);
  require_floating(in, 0, kOp);
  const Shape& x = in[0].shape;
  if (x.size() != 4) fail(kOp, "X must be 4-D [N, C, H, W], got " + shape_str(x));
  const std::int64_t rois = check_rois(in, kOp);
  const std::int64_t plane = checked_mul(p.pooled_h, p.pooled_w, kOp, "pooled_h * pooled_w");
  checked_mul(checked_mul(rois, x[1], kOp, "num_rois * C"), plane, kOp, "the output size");
  checked_mul(x[2], x[3], kOp, "H * W");
  const Shape y{rois, x[1], p.pooled_h, p.pooled_w};
  return {{y, in[0].dtype}, {y, DType::kI32}};
}

// A bin reads its window once (a compare and the argmax's bookkeeping per tap); the rois' sizes are
// data, so a bin is taken to cover 1 / pooled_h x 1 / pooled_w of a roi over a quarter of the map.
KernelCost cost_roi_pool(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs& attrs) {
  const Shape& x = in[0].shape;
  const double bins = static_cast<double>(attrs.get_int("pooled_h", 1) * attrs.get_int("pooled_w", 1));
  const double taps = std::max(1.0, static_cast<double>(x[2] * x[3]) / (4 * std::max(bins, 1.0)));
  KernelCost c = vector_cost(in, out, 0);
  const double outputs = static_cast<double>(out[0].numel());
  c.flops = outputs * taps;
  c.argmax_taps = outputs * taps;
  c.bytes = static_cast<double>(out[0].nbytes()) * taps + io_bytes(in.subspan(1), out);
  return c;
}

// One bin: rows [h0, h1) and columns [w0, w1) of the plane, empty when either is.
struct Bin {
  std::int64_t h0 = 0, h1 = 0, w0 = 0, w1 = 0;
};

// The bins of one roi ([pooled_h][pooled_w]), with the geometry in G (Note [RoiPooling bins]); false
// when a scaled corner is not finite or too large.
template <class G>
bool roi_bins(const double box[4], const RoiPoolParams& p, std::int64_t h, std::int64_t w, std::vector<Bin>& bins) {
  const auto scale = static_cast<G>(p.spatial_scale);
  std::int64_t corner[4];
  for (int i = 0; i < 4; ++i) {
    const auto v = static_cast<double>(std::round(static_cast<G>(box[i]) * scale));
    if (!(std::abs(v) <= kMaxCorner)) return false;  // also NaN
    corner[i] = static_cast<std::int64_t>(v);
  }
  const std::int64_t roi_w = std::max<std::int64_t>(corner[2] - corner[0] + 1, 1);
  const std::int64_t roi_h = std::max<std::int64_t>(corner[3] - corner[1] + 1, 1);
  const G bin_h = static_cast<G>(roi_h) / static_cast<G>(p.pooled_h);
  const G bin_w = static_cast<G>(roi_w) / static_cast<G>(p.pooled_w);
  auto edge = [](G v, std::int64_t start, std::int64_t size) {
    return std::clamp(static_cast<std::int64_t>(v) + start, std::int64_t{0}, size);
  };
  bins.clear();
  for (std::int64_t ph = 0; ph < p.pooled_h; ++ph) {
    const std::int64_t h0 = edge(std::floor(static_cast<G>(ph) * bin_h), corner[1], h);
    const std::int64_t h1 = edge(std::ceil(static_cast<G>(ph + 1) * bin_h), corner[1], h);
    for (std::int64_t pw = 0; pw < p.pooled_w; ++pw) {
      bins.push_back({h0, h1, edge(std::floor(static_cast<G>(pw) * bin_w), corner[0], w),
                      edge(std::ceil(static_cast<G>(pw + 1) * bin_w), corner[0], w)});
    }
  }
  return true;
}

// One channel plane of one roi: each bin's largest value and its index (Note [RoiPooling bins]).
template <class T>
void pool_plane(const T* src, std::int64_t w, const std::vector<Bin>& bins, T* dst, std::int64_t* arg) {
  for (std::size_t b = 0; b < bins.size(); ++b) {
    const Bin& bin = bins[b];
    const bool empty = bin.h1 <= bin.h0 || bin.w1 <= bin.w0;
    T best = empty ? T(0) : static_cast<T>(-FLT_MAX);
    std::int64_t at = -1;
    for (std::int64_t i = bin.h0; i < bin.h1; ++i) {
      for (std::int64_t j = bin.w0; j < bin.w1; ++j) {
        if (src[i * w + j] > best) best = src[i * w + j], at = i * w + j;
      }
    }
    dst[b] = best;
    arg[b] = at;
  }
}

template <class T>
void roi_pool_kernel(KernelContext& ctx) {
  const RoiPoolParams p = read_params(ctx.attrs);  // validated by infer
  const Shape& xs = *ctx.inputs[0].shape;
  const std::int64_t n = xs[0], c = xs[1], h = xs[2], w = xs[3], rois = (*ctx.inputs[1].shape)[0];
  const std::int64_t plane = p.pooled_h * p.pooled_w;
  const std::vector<T> x = load<T>(ctx.inputs[0], ctx);
  std::vector<double> boxes(static_cast<std::size_t>(ctx.inputs[1].numel));
  load_f64(ctx.inputs[1], boxes.data());
  std::vector<std::int64_t> batch(static_cast<std::size_t>(rois));
  load_i64(ctx.inputs[2], batch.data());
  std::vector<T> y(static_cast<std::size_t>(ctx.outputs[0].numel), T(0));
  std::vector<std::int64_t> arg(y.size(), -1);
  const bool wide = ctx.inputs[1].dtype == DType::kF64;
  std::vector<Bin> bins;
  for (std::int64_t r = 0; r < rois; ++r) {
    const std::int64_t b = batch[static_cast<std::size_t>(r)];
    if (!roi_batch_ok(ctx, kOp, r, b, n)) continue;
    const double* box = boxes.data() + 4 * r;
    if (!(wide ? roi_bins<double>(box, p, h, w, bins) : roi_bins<float>(box, p, h, w, bins))) {
      set_fault(ctx, std::string(kOp) + ": roi " + std::to_string(r) + " is not finite or too large");
      continue;
    }
    for (std::int64_t ch = 0; ch < c; ++ch) {
      const std::int64_t o = (r * c + ch) * plane;
      pool_plane(x.data() + (b * c + ch) * h * w, w, bins, y.data() + o, arg.data() + o);
    }
  }
  store<T>(ctx.outputs[0], y.data(), ctx);
  store_i64(ctx.outputs[1], arg.data());
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kOp,
                              .category = OpCategory::kVector,
                              .min_inputs = 3,
                              .max_inputs = 3,
                              .infer = infer_roi_pool,
                              .cost = cost_roi_pool});
NPUSCOPE_REGISTER_FLOAT_KERNELS(kOp, roi_pool_kernel);

}  // namespace npuscope::emulator::kernels

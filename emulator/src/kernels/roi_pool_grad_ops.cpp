// RoiPoolingGradWithArgMax (CANN's name; torchvision's _roi_pool_backward): the gradient of
// RoiPoolingWithArgMax (roi_pool_ops.cpp).
//   dy [R, C, pooled_h, pooled_w], rois [R, 4], batch_indices [R] (i32 / i64), argmax [R, C, pooled_h,
//   pooled_w] (i32 / i64, the forward's) -> dx [N, C, H, W], given by the attribute xdiff_shape
//   = [N, C, H, W] (as ROIAlignGrad's; CANN's op takes X for its shape).
// Each bin adds dy into dx at its argmax in the plane of its roi's batch index and channel; a bin with
// argmax -1 (empty, Note [RoiPooling bins]) adds nothing: torchvision's roi_pool_backward. dx is zero
// where no argmax points. The rois are checked (RoiAlign's rule) but only their batch indices are
// read, as in torchvision. A batch index outside [0, N) or an argmax outside [-1, H · W) is bad data:
// a kernel fault (Note [Kernel faults]) and that roi or bin adds nothing. Vector op (CANN's kernel adds
// atomically); NPU: f32, the adds in a fixed order (roi, channel, bin: a deterministic stand-in for
// the atomic adds), rounded to the output dtype once; CPU golden: f64.
#include <string>
#include <vector>

#include "roi_pool_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kOp[] = "RoiPoolingGradWithArgMax";

std::vector<TensorMeta> infer_roi_pool_grad(std::span<const TensorMeta> in, const Attrs& attrs) {
  require_floating(in, 0, kOp);
  const Shape& dy = in[0].shape;
  if (dy.size() != 4) fail(kOp, "dy must be 4-D [num_rois, C, pooled_h, pooled_w], got " + shape_str(dy));
  const std::int64_t rois = check_rois(in, kOp);
  if (dy[0] != rois) {
    fail(kOp, "dy " + shape_str(dy) + " must have one row per roi (" + std::to_string(rois) + " rois)");
  }
  check_index_like(in, 3, kOp, "argmax");
  const Shape x = size_attr(attrs, "xdiff_shape", {4}, kOp);
  if (x[1] != dy[1]) fail(kOp, "xdiff_shape " + shape_str(x) + " must have dy's C (" + std::to_string(dy[1]) + ")");
  checked_mul(checked_mul(x[0], x[1], kOp, "N * C"), checked_mul(x[2], x[3], kOp, "H * W"), kOp, "the dx size");
  return {{x, in[0].dtype}};
}

// dx zeroed, then one read of dy and argmax and one read-modify-write of dx per bin.
KernelCost cost_roi_pool_grad(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  KernelCost c = vector_cost(in, out, 0);
  const double bins = static_cast<double>(in[0].numel());
  const double item = static_cast<double>(dtype_size(in[0].dtype));
  c.flops = bins;
  c.argmax_taps = bins;  // each gradient scatters to its argmax's tap
  c.bytes = io_bytes(in, out) + bins * 2 * item;
  c.bytes_written = out_bytes(out) + bins * item;
  return c;
}

template <class T>
void roi_pool_grad_kernel(KernelContext& ctx) {
  const Shape& dys = *ctx.inputs[0].shape;
  const Shape& xs = *ctx.outputs[0].shape;
  const std::int64_t n = xs[0], c = xs[1], plane = xs[2] * xs[3], rois = dys[0], bins = dys[2] * dys[3];
  const std::vector<T> dy = load<T>(ctx.inputs[0], ctx);
  std::vector<std::int64_t> batch(static_cast<std::size_t>(rois));
  load_i64(ctx.inputs[2], batch.data());
  std::vector<std::int64_t> arg(static_cast<std::size_t>(ctx.inputs[3].numel));
  load_i64(ctx.inputs[3], arg.data());
  std::vector<T> dx(static_cast<std::size_t>(ctx.outputs[0].numel), T(0));
  for (std::int64_t r = 0; r < rois; ++r) {
    const std::int64_t b = batch[static_cast<std::size_t>(r)];
    if (!roi_batch_ok(ctx, kOp, r, b, n)) continue;
    for (std::int64_t ch = 0; ch < c; ++ch) {
      T* dst = dx.data() + (b * c + ch) * plane;
      const std::int64_t o = (r * c + ch) * bins;
      for (std::int64_t k = o; k < o + bins; ++k) {
        const std::int64_t at = arg[static_cast<std::size_t>(k)];
        if (at >= 0 && at < plane) {
          dst[at] += dy[static_cast<std::size_t>(k)];
        } else if (at != -1 && ctx.fault.empty()) [[unlikely]] {
          set_fault(ctx, std::string(kOp) + ": argmax " + std::to_string(at) + " is outside [-1, " +
                             std::to_string(plane) + ") (the H * W plane; -1: an empty bin)");
        }
      }
    }
  }
  store<T>(ctx.outputs[0], dx.data(), ctx);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kOp,
                              .category = OpCategory::kVector,
                              .min_inputs = 4,
                              .max_inputs = 4,
                              .infer = infer_roi_pool_grad,
                              .cost = cost_roi_pool_grad});
NPUSCOPE_REGISTER_FLOAT_KERNELS(kOp, roi_pool_grad_kernel);

}  // namespace npuscope::emulator::kernels

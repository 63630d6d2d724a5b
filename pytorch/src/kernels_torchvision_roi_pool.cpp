// torchvision's roi_pool (RoiPoolingWithArgMax) and ps_roi_align (PSROIPoolingV2) on the device, with
// their backwards _roi_pool_backward (RoiPoolingGradWithArgMax) and _ps_roi_align_backward
// (PSROIPoolingGradV2D). torchvision's autograd kernels stay in front of ours, as for roi_align
// (kernels_torchvision.cpp), and call the _backward ops, which land here too.
//
// Note [torchvision roi pooling on the device]
// torchvision 0.14's CPU kernels (csrc/ops/cpu/roi_pool_kernel.cpp, ps_roi_align_kernel.cpp) against
// the emulator's ops, as for roi_align (Note [torchvision on the device] in kernels_torchvision.cpp):
//  - rois [K, 5] hold the batch index in column 0: the ops take rois [K, 4] and int64 batch_indices
//    [K] (a Cast, which truncates as torchvision's int cast does).
//  - roi_pool returns (output, argmax): argmax is the int32 flat index of each bin's maximum in its
//    H x W plane, -1 for an empty bin (Note [RoiPooling bins] in roi_pool_ops.cpp). Its backward adds
//    each gradient at its argmax, which the device reads back from the forward's argmax.
//  - ps_roi_align returns (output, channel_mapping): the int32 input channel each output bin read
//    (Note [PSROIPooling sampling] in ps_roi_align_ops.cpp). Its backward spreads each gradient over
//    the forward's samples in the channel channel_mapping names. sampling_ratio <= 0 is adaptive.
//  - A batch index outside the input, a roi not finite (or too large), an argmax or channel_mapping
//    outside the plane or the channels is a kernel fault (an error) where torchvision reads out of
//    bounds or computes on.
// A call outside these cases (float64, mismatched dtypes, devices or shapes, a channel count that is
// not a multiple of the bins, an empty map, pooled sizes below 1) runs on the CPU fallback (Note
// [Native or fallback] in kernel_support.h), counted and reported as any fallback, through
// TORCHVISION_FALLBACK (torchvision_op.h): torchvision's own checks then raise its errors.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "torchvision_op.h"

namespace npuscope::pytorch {
namespace {

constexpr char kRoiPool[] = "torchvision::roi_pool";
constexpr char kRoiPoolBackward[] = "torchvision::_roi_pool_backward";
constexpr char kPsRoiAlign[] = "torchvision::ps_roi_align";
constexpr char kPsRoiAlignBackward[] = "torchvision::_ps_roi_align_backward";
using Pair = std::tuple<at::Tensor, at::Tensor>;
using RoiPoolOp =
    TorchvisionOp<kRoiPool, Pair(const at::Tensor&, const at::Tensor&, double, std::int64_t, std::int64_t)>;
using RoiPoolBackwardOp =
    TorchvisionOp<kRoiPoolBackward,
                  at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, double, std::int64_t,
                             std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t)>;
using PsRoiAlignOp = TorchvisionOp<kPsRoiAlign, Pair(const at::Tensor&, const at::Tensor&, double, std::int64_t,
                                                     std::int64_t, std::int64_t)>;
using PsRoiAlignBackwardOp =
    TorchvisionOp<kPsRoiAlignBackward,
                  at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, double, std::int64_t,
                             std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t)>;

// The emulator ops take pooled sizes and sampling grids up to these (roi_pool_util.h, roi_align_util.h).
constexpr std::int64_t kMaxPooled = 1 << 20, kMaxSamplingRatio = 4096;

// What every call of the four needs to run natively: a float (f32, f16, bf16) 4-D tensor `x` (the
// input or the gradient), rois [K, 5] of its dtype on its device, and pooled sizes in [1, 2^20].
bool native_rois(const at::Tensor& x, const at::Tensor& rois, std::int64_t pooled_h, std::int64_t pooled_w) {
  return is_float(x.scalar_type()) && x.dim() == 4 && rois.dim() == 2 && rois.size(1) == 5 &&
         rois.scalar_type() == x.scalar_type() && rois.device() == x.device() && pooled_h >= 1 && pooled_w >= 1 &&
         pooled_h <= kMaxPooled && pooled_w <= kMaxPooled;
}

// A backward's saved index tensor (argmax, channel_mapping): int32 / int64 of the gradient's shape,
// on its device; and the gradient's shape the forward's for these sizes.
bool native_backward(const at::Tensor& grad, const at::Tensor& rois, const at::Tensor& index, std::int64_t dim,
                     std::int64_t pooled_h, std::int64_t pooled_w, std::int64_t batch_size, std::int64_t height,
                     std::int64_t width) {
  return index_dtype(index.scalar_type()) && index.device() == grad.device() && index.sizes() == grad.sizes() &&
         grad.size(0) == rois.size(0) && grad.size(1) == dim && grad.size(2) == pooled_h && grad.size(3) == pooled_w &&
         batch_size >= 0 && height >= 0 && width >= 0;
}

// torchvision's rois [K, 5] as the ops' rois [K, 4] (in `type`) and int64 batch_indices [K].
std::vector<at::Tensor> split_rois(const at::Tensor& rois, at::ScalarType type, const char* aten) {
  return {operand(rois.slice(1, 1, 5), type, aten), operand(rois.select(1, 0), at::kLong, aten)};
}

// ---- roi_pool ---------------------------------------------------------------------------------------

Pair roi_pool(const at::Tensor& input, const at::Tensor& rois, double spatial_scale, std::int64_t pooled_height,
              std::int64_t pooled_width) {
  if (!native_rois(input, rois, pooled_height, pooled_width) || input.size(2) == 0 || input.size(3) == 0) {
    return TORCHVISION_FALLBACK(RoiPoolOp, input, rois, spatial_scale, pooled_height, pooled_width);
  }
  const std::vector<std::int64_t> shape{rois.size(0), input.size(1), pooled_height, pooled_width};
  at::Tensor out = at::empty(shape, input.options());
  at::Tensor argmax = at::empty(shape, input.options().dtype(at::kInt));
  if (out.numel() == 0) return {out, argmax};
  const at::ScalarType type = input.scalar_type();
  std::vector<at::Tensor> inputs = split_rois(rois, type, kRoiPool);
  inputs.insert(inputs.begin(), operand(input, type, kRoiPool));
  const emulator::Attrs attrs{
      {"pooled_h", pooled_height}, {"pooled_w", pooled_width}, {"spatial_scale", spatial_scale}};
  run_op("RoiPoolingWithArgMax", kRoiPool, inputs, attrs, {out, argmax});
  return {out, argmax};
}

// The gradient of the input, [batch_size, channels, height, width].
at::Tensor roi_pool_backward(const at::Tensor& grad, const at::Tensor& rois, const at::Tensor& argmax,
                             double spatial_scale, std::int64_t pooled_height, std::int64_t pooled_width,
                             std::int64_t batch_size, std::int64_t channels, std::int64_t height, std::int64_t width) {
  const bool native =
      native_rois(grad, rois, pooled_height, pooled_width) &&
      native_backward(grad, rois, argmax, channels, pooled_height, pooled_width, batch_size, height, width);
  if (!native) {
    return TORCHVISION_FALLBACK(RoiPoolBackwardOp, grad, rois, argmax, spatial_scale, pooled_height, pooled_width,
                                batch_size, channels, height, width);
  }
  const std::vector<std::int64_t> shape{batch_size, channels, height, width};
  if (grad.numel() == 0) return at::zeros(shape, grad.options());
  at::Tensor dx = at::empty(shape, grad.options());
  if (dx.numel() == 0) return dx;
  const at::ScalarType type = grad.scalar_type();
  std::vector<at::Tensor> inputs = split_rois(rois, type, kRoiPoolBackward);
  inputs.insert(inputs.begin(), operand(grad, type, kRoiPoolBackward));
  inputs.push_back(contiguous(argmax, kRoiPoolBackward));
  run_op("RoiPoolingGradWithArgMax", kRoiPoolBackward, inputs, {{"xdiff_shape", shape}}, {dx});
  return dx;
}

// ---- ps_roi_align -----------------------------------------------------------------------------------

emulator::Attrs ps_attrs(double spatial_scale, std::int64_t sampling_ratio) {
  return {{"spatial_scale", spatial_scale}, {"sampling_ratio", std::max<std::int64_t>(sampling_ratio, 0)}};
}

Pair ps_roi_align(const at::Tensor& input, const at::Tensor& rois, double spatial_scale, std::int64_t pooled_height,
                  std::int64_t pooled_width, std::int64_t sampling_ratio) {
  const bool native = native_rois(input, rois, pooled_height, pooled_width) && input.size(2) > 0 && input.size(3) > 0 &&
                      input.size(1) % (pooled_height * pooled_width) == 0 && sampling_ratio <= kMaxSamplingRatio;
  if (!native) {
    return TORCHVISION_FALLBACK(PsRoiAlignOp, input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio);
  }
  const std::vector<std::int64_t> shape{rois.size(0), input.size(1) / (pooled_height * pooled_width), pooled_height,
                                        pooled_width};
  at::Tensor out = at::empty(shape, input.options());
  at::Tensor mapping = at::empty(shape, input.options().dtype(at::kInt));
  if (out.numel() == 0) return {out, mapping};
  const at::ScalarType type = input.scalar_type();
  std::vector<at::Tensor> inputs = split_rois(rois, type, kPsRoiAlign);
  inputs.insert(inputs.begin(), operand(input, type, kPsRoiAlign));
  emulator::Attrs attrs = ps_attrs(spatial_scale, sampling_ratio);
  attrs.set("output_height", pooled_height).set("output_width", pooled_width);
  run_op("PSROIPoolingV2", kPsRoiAlign, inputs, attrs, {out, mapping});
  return {out, mapping};
}

at::Tensor ps_roi_align_backward(const at::Tensor& grad, const at::Tensor& rois, const at::Tensor& channel_mapping,
                                 double spatial_scale, std::int64_t pooled_height, std::int64_t pooled_width,
                                 std::int64_t sampling_ratio, std::int64_t batch_size, std::int64_t channels,
                                 std::int64_t height, std::int64_t width) {
  const std::int64_t bins = pooled_height * pooled_width;
  const bool native = native_rois(grad, rois, pooled_height, pooled_width) && channels >= 0 && channels % bins == 0 &&
                      sampling_ratio <= kMaxSamplingRatio &&
                      native_backward(grad, rois, channel_mapping, channels / bins, pooled_height, pooled_width,
                                      batch_size, height, width);
  if (!native) {
    return TORCHVISION_FALLBACK(PsRoiAlignBackwardOp, grad, rois, channel_mapping, spatial_scale, pooled_height,
                                pooled_width, sampling_ratio, batch_size, channels, height, width);
  }
  const std::vector<std::int64_t> shape{batch_size, channels, height, width};
  if (grad.numel() == 0) return at::zeros(shape, grad.options());
  at::Tensor dx = at::empty(shape, grad.options());
  if (dx.numel() == 0) return dx;
  const at::ScalarType type = grad.scalar_type();
  std::vector<at::Tensor> inputs = split_rois(rois, type, kPsRoiAlignBackward);
  inputs.insert(inputs.begin(), operand(grad, type, kPsRoiAlignBackward));
  inputs.push_back(contiguous(channel_mapping, kPsRoiAlignBackward));
  emulator::Attrs attrs = ps_attrs(spatial_scale, sampling_ratio);
  attrs.set("xdiff_shape", shape);
  run_op("PSROIPoolingGradV2D", kPsRoiAlignBackward, inputs, attrs, {dx});
  return dx;
}

}  // namespace

TORCH_LIBRARY_IMPL(torchvision, PrivateUse1, m) {
  m.impl("roi_pool", TORCH_FN(roi_pool));
  m.impl("_roi_pool_backward", TORCH_FN(roi_pool_backward));
  m.impl("ps_roi_align", TORCH_FN(ps_roi_align));
  m.impl("_ps_roi_align_backward", TORCH_FN(ps_roi_align_backward));
}

}  // namespace npuscope::pytorch

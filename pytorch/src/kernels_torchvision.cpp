// torchvision's detection ops on the device: nms (NonMaxSuppression, an AI CPU op on Ascend, after
// the host counts the boxes it keeps), roi_align (RoiAlign) and its backward _roi_align_backward
// (ROIAlignGrad). torchvision's autograd kernel of roi_align (registered for every autograd key)
// stays in front of ours and calls _roi_align_backward, which lands here too.
// roi_pool and ps_roi_align are in kernels_torchvision_roi_pool.cpp, deform_conv2d in
// kernels_torchvision_deform_conv.cpp.
//
// Note [torchvision on the device]
// torchvision 0.14's CPU kernels (csrc/ops/cpu/nms_kernel.cpp, roi_align_kernel.cpp) against the
// emulator's ONNX-style ops:
//  - nms keeps boxes (x1, y1, x2, y2) in descending score order unless a kept box overlaps one with
//    IoU > iou_threshold: NonMaxSuppression with one batch and one class. Its corners are
//    [y1, x1, y2, x2], and IoU does not change when x and y swap, so the boxes go in as they are.
//    The two differ on NaN scores (torchvision sorts them first and keeps them; ONNX drops them),
//    on boxes with x2 < x1 or y2 < y1 or not finite (torchvision's areas turn negative; ONNX orders
//    the corners) and on thresholds outside [0, 1] (ONNX rejects them). The host reads the boxes and
//    scores anyway, to count the kept boxes for the output size (Note [Data-dependent shapes] in
//    kernels_gather_scatter.cpp: one device-to-host copy that waits for them, as torch_npu's AI CPU
//    nms does), and sends those calls to the CPU fallback. Equal scores: ONNX takes the lower index
//    first; torchvision's sort is not stable, so its order among ties may differ. The IoUs are
//    float64 (torchvision's are in the boxes' dtype): a pair whose IoU is within rounding of the
//    threshold may be decided the other way.
//  - roi_align's rois [K, 5] hold the batch index in column 0: RoiAlign takes rois [K, 4] and int64
//    batch_indices [K] (a Cast, which truncates as torchvision's int cast does). aligned=True is
//    half_pixel (a half-pixel offset); False is output_half_pixel (no offset, rois of at least
//    1 x 1). sampling_ratio <= 0 is adaptive (RoiAlign's 0). The backward is ROIAlignGrad with the
//    same inputs and sampling, so its taps are the forward's. A batch index outside the input, or a
//    roi not finite or too large to sample, is a kernel fault (an error) where torchvision reads
//    out of bounds or computes on.
// A call outside these cases (float64 roi_align, mismatched dtypes or shapes, the nms cases above)
// runs on the CPU fallback (Note [Native or fallback] in kernel_support.h), counted and reported as
// any fallback, through TORCHVISION_FALLBACK (torchvision_op.h).
#include <ATen/ATen.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "npuscope/emulator/nms.h"
#include "torchvision_op.h"

namespace npuscope::pytorch {
namespace {

constexpr char kNms[] = "torchvision::nms";
constexpr char kRoiAlign[] = "torchvision::roi_align";
constexpr char kRoiAlignBackward[] = "torchvision::_roi_align_backward";
using NmsOp = TorchvisionOp<kNms, at::Tensor(const at::Tensor&, const at::Tensor&, double)>;
using RoiAlignOp = TorchvisionOp<kRoiAlign, at::Tensor(const at::Tensor&, const at::Tensor&, double, std::int64_t,
                                                       std::int64_t, std::int64_t, bool)>;
using RoiAlignBackwardOp =
    TorchvisionOp<kRoiAlignBackward,
                  at::Tensor(const at::Tensor&, const at::Tensor&, double, std::int64_t, std::int64_t, std::int64_t,
                             std::int64_t, std::int64_t, std::int64_t, std::int64_t, bool)>;

bool floating(at::ScalarType t) { return is_float(t) || t == at::kDouble; }

// ---- nms ------------------------------------------------------------------------------------------

// Whether NonMaxSuppression selects what torchvision's nms does (Note [torchvision on the device]):
// finite boxes with x1 <= x2 and y1 <= y2, and no NaN score. Host tensors, float64, contiguous.
bool onnx_agrees(const at::Tensor& boxes, const at::Tensor& scores) {
  const double* b = boxes.data_ptr<double>();
  const double* s = scores.data_ptr<double>();
  for (std::int64_t i = 0; i < scores.numel(); ++i, b += 4) {
    const bool finite = std::isfinite(b[0]) && std::isfinite(b[1]) && std::isfinite(b[2]) && std::isfinite(b[3]);
    if (!finite || b[2] < b[0] || b[3] < b[1] || std::isnan(s[i])) return false;
  }
  return true;
}

// The indices of the kept boxes, int64 [count], by descending score.
at::Tensor nms(const at::Tensor& dets, const at::Tensor& scores, double iou_threshold) {
  const bool native = dets.dim() == 2 && dets.size(1) == 4 && scores.dim() == 1 && scores.size(0) == dets.size(0) &&
                      floating(dets.scalar_type()) && scores.scalar_type() == dets.scalar_type() &&
                      scores.device() == dets.device() && iou_threshold >= 0 && iou_threshold <= 1;
  if (!native) return TORCHVISION_FALLBACK(NmsOp, dets, scores, iou_threshold);
  const std::int64_t n = dets.size(0);
  at::Tensor keep = at::empty({0}, dets.options().dtype(at::kLong));
  if (n == 0) return keep;
  const at::Tensor host_boxes = dets.cpu().to(at::kDouble).contiguous();
  const at::Tensor host_scores = scores.cpu().to(at::kDouble).contiguous();
  if (!onnx_agrees(host_boxes, host_scores)) return TORCHVISION_FALLBACK(NmsOp, dets, scores, iou_threshold);
  const emulator::NmsParams params{.max_per_class = n, .iou_threshold = iou_threshold};
  const auto count = static_cast<std::int64_t>(
      emulator::nms_select(host_boxes.data_ptr<double>(), host_scores.data_ptr<double>(), 1, 1, n, params).size());
  if (count == 0) return keep;
  at::Tensor selected = at::empty({count, 3}, keep.options());  // (batch, class, box) triples
  run_op("NonMaxSuppression", kNms, {contiguous(dets, kNms).view({1, n, 4}), contiguous(scores, kNms).view({1, 1, n})},
         {{"max_output_boxes_per_class", n}, {"iou_threshold", iou_threshold}, {"count", count}}, {selected});
  return contiguous(selected.select(1, 2), kNms);
}

// ---- roi_align --------------------------------------------------------------------------------------

bool native_roi_align(const at::Tensor& x, const at::Tensor& rois, std::int64_t sampling_ratio) {
  return is_float(x.scalar_type()) && x.dim() == 4 && rois.dim() == 2 && rois.size(1) == 5 &&
         rois.scalar_type() == x.scalar_type() && rois.device() == x.device() && sampling_ratio <= 4096;
}

// RoiAlign's and ROIAlignGrad's attributes for torchvision's arguments.
emulator::Attrs roi_attrs(double spatial_scale, std::int64_t sampling_ratio, bool aligned) {
  return {{"spatial_scale", spatial_scale},
          {"sampling_ratio", std::max<std::int64_t>(sampling_ratio, 0)},
          {"coordinate_transformation_mode", std::string(aligned ? "half_pixel" : "output_half_pixel")}};
}

// torchvision's rois [K, 5] as RoiAlign's rois [K, 4] (in `type`) and int64 batch_indices [K].
struct SplitRois {
  at::Tensor boxes, batch;
};
SplitRois split_rois(const at::Tensor& rois, at::ScalarType type, const char* aten) {
  return {operand(rois.slice(1, 1, 5), type, aten), operand(rois.select(1, 0), at::kLong, aten)};
}

at::Tensor roi_align(const at::Tensor& input, const at::Tensor& rois, double spatial_scale, std::int64_t pooled_height,
                     std::int64_t pooled_width, std::int64_t sampling_ratio, bool aligned) {
  if (!native_roi_align(input, rois, sampling_ratio) || pooled_height < 1 || pooled_width < 1 || input.size(2) == 0 ||
      input.size(3) == 0) {
    return TORCHVISION_FALLBACK(RoiAlignOp, input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio,
                                aligned);
  }
  at::Tensor out = at::empty({rois.size(0), input.size(1), pooled_height, pooled_width}, input.options());
  if (out.numel() == 0) return out;
  const at::ScalarType type = input.scalar_type();
  const SplitRois r = split_rois(rois, type, kRoiAlign);
  emulator::Attrs attrs = roi_attrs(spatial_scale, sampling_ratio, aligned);
  attrs.set("output_height", pooled_height).set("output_width", pooled_width);
  run_op("RoiAlign", kRoiAlign, {operand(input, type, kRoiAlign), r.boxes, r.batch}, attrs, {out});
  return out;
}

// The gradient of the input, [batch_size, channels, height, width].
at::Tensor roi_align_backward(const at::Tensor& grad, const at::Tensor& rois, double spatial_scale,
                              std::int64_t pooled_height, std::int64_t pooled_width, std::int64_t batch_size,
                              std::int64_t channels, std::int64_t height, std::int64_t width,
                              std::int64_t sampling_ratio, bool aligned) {
  const bool native = native_roi_align(grad, rois, sampling_ratio) && grad.size(0) == rois.size(0) &&
                      grad.size(1) == channels && grad.size(2) == pooled_height && grad.size(3) == pooled_width &&
                      batch_size >= 0 && height >= 0 && width >= 0;
  if (!native) {
    return TORCHVISION_FALLBACK(RoiAlignBackwardOp, grad, rois, spatial_scale, pooled_height, pooled_width, batch_size,
                                channels, height, width, sampling_ratio, aligned);
  }
  if (grad.numel() == 0) return at::zeros({batch_size, channels, height, width}, grad.options());
  at::Tensor dx = at::empty({batch_size, channels, height, width}, grad.options());
  if (dx.numel() == 0) return dx;
  const at::ScalarType type = grad.scalar_type();
  const SplitRois r = split_rois(rois, type, kRoiAlignBackward);
  emulator::Attrs attrs = roi_attrs(spatial_scale, sampling_ratio, aligned);
  attrs.set("xdiff_shape", std::vector<std::int64_t>{batch_size, channels, height, width});
  run_op("ROIAlignGrad", kRoiAlignBackward, {operand(grad, type, kRoiAlignBackward), r.boxes, r.batch}, attrs, {dx});
  return dx;
}

}  // namespace

TORCH_LIBRARY_IMPL(torchvision, PrivateUse1, m) {
  m.impl("nms", TORCH_FN(nms));
  m.impl("roi_align", TORCH_FN(roi_align));
  m.impl("_roi_align_backward", TORCH_FN(roi_align_backward));
}

}  // namespace npuscope::pytorch

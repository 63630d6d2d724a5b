// ONNX adapters for the detection ops (Note [ONNX adapters]): RoiAlign (opset 10 had no
// coordinate_transformation_mode and behaved as output_half_pixel; 16 defaults to half_pixel) and
// NonMaxSuppression (its scalar inputs become attributes, and the number of selected boxes is
// worked out on the host first: Note [Data-dependent output sizes] in kernels/nms_ops.cpp).
// MaxUnpool (its optional output_shape input -> attribute). GridSample and BitShift run by the
// default rule.
#include <optional>
#include <string>
#include <vector>

#include "npuscope/emulator/nms.h"
#include "onnx_adapter.h"

namespace npuscope::emulator::onnx_import {
namespace {

std::vector<Tensor> roi_align(NodeContext& ctx) {
  for (std::size_t i = 0; i < 3; ++i) {
    if (!ctx.has_input(i)) ctx.fail("needs X, rois and batch_indices");
  }
  Attrs a = ctx.attrs;
  if (ctx.opset < 16) a.set("coordinate_transformation_mode", std::string("output_half_pixel"));
  return {call_op1("RoiAlign", {ctx.input(0), ctx.input(1), ctx.input(2)}, a, ctx.call())};
}

// An optional scalar input of NonMaxSuppression, or nullopt when left out.
std::optional<double> optional_scalar(const NodeContext& ctx, std::size_t i, const char* what) {
  if (!ctx.has_input(i)) return std::nullopt;
  const auto v = ctx.input_floats(i);
  if (v.size() != 1) ctx.fail(std::string(what) + " must hold one value, got " + std::to_string(v.size()));
  return v[0];
}

std::vector<Tensor> non_max_suppression(NodeContext& ctx) {
  if (!ctx.has_input(0) || !ctx.has_input(1)) ctx.fail("needs boxes and scores");
  Attrs a = ctx.attrs;
  std::int64_t max_per_class = 0;
  if (ctx.has_input(2)) {
    const auto v = ctx.input_ints(2);
    if (v.size() != 1) ctx.fail("max_output_boxes_per_class must hold one value, got " + std::to_string(v.size()));
    max_per_class = v[0];
  }
  a.set("max_output_boxes_per_class", max_per_class);
  if (auto iou = optional_scalar(ctx, 3, "iou_threshold")) a.set("iou_threshold", *iou);
  if (auto score = optional_scalar(ctx, 4, "score_threshold")) a.set("score_threshold", *score);
  NmsParams p{.center_point_box = a.get_int("center_point_box", 0) == 1,
              .max_per_class = max_per_class,
              .iou_threshold = a.get_float("iou_threshold", 0.0),
              .has_score_threshold = a.has("score_threshold"),
              .score_threshold = a.get_float("score_threshold", 0.0)};
  const Tensor &boxes = ctx.input(0), &scores = ctx.input(1);
  std::int64_t count = 0;
  if (boxes.ndim() == 3 && scores.ndim() == 3 && boxes.shape()[2] == 4 && scores.shape()[0] == boxes.shape()[0] &&
      scores.shape()[2] == boxes.shape()[1]) {  // else the op names the bad shapes
    const auto b = ctx.input_floats(0), s = ctx.input_floats(1);
    count = static_cast<std::int64_t>(
        nms_select(b.data(), s.data(), scores.shape()[0], scores.shape()[1], scores.shape()[2], p).size());
  }
  a.set("count", count);
  return {call_op1("NonMaxSuppression", {boxes, scores}, a, ctx.call())};
}

// MaxUnpool: the optional output_shape input becomes the attribute.
std::vector<Tensor> max_unpool(NodeContext& ctx) {
  if (!ctx.has_input(0) || !ctx.has_input(1)) ctx.fail("needs X and I");
  Attrs a = ctx.attrs;
  if (ctx.has_input(2)) a.set("output_shape", ctx.input_ints(2));
  return {call_op1("MaxUnpool", {ctx.input(0), ctx.input(1)}, a, ctx.call())};
}

}  // namespace

NPUSCOPE_REGISTER_ONNX_ADAPTER("RoiAlign", roi_align);
NPUSCOPE_REGISTER_ONNX_ADAPTER("MaxUnpool", max_unpool);
NPUSCOPE_REGISTER_ONNX_ADAPTER("NonMaxSuppression", non_max_suppression);

}  // namespace npuscope::emulator::onnx_import

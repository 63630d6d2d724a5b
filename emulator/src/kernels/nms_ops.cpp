// NonMaxSuppression (ONNX opset 10+, torchvision.ops.nms / batched_nms): boxes [batches, boxes, 4],
// scores [batches, classes, boxes] -> selected_indices i64 [count, 3] of (batch, class, box).
// Attributes: center_point_box (0: boxes as two corners [y1, x1, y2, x2] in any order; 1: [x_center,
// y_center, width, height]), max_output_boxes_per_class (0: nothing selected), iou_threshold,
// score_threshold (absent: no threshold; else only scores > it take part), count (below).
// Per batch and class, the boxes are taken by descending score (equal scores: lower index first;
// NaN scores never) and a box is kept unless its IoU with a box kept before exceeds iou_threshold,
// as onnxruntime's kernel does (a box of zero area, or an empty intersection, suppresses nothing).
// An AI CPU op on Ascend: it has only the CPU kernel, which the dispatcher runs as an AI CPU task on
// the NPU (the fallback rule of op_registry.h).
//
// Note [Data-dependent output sizes]
// The dispatcher infers every output shape before a kernel runs, so an op whose output size
// depends on the values (NonZero, NonMaxSuppression) takes it as the attribute 'count', which the
// caller works out on the host first, as a framework synchronises to read the size back. The ONNX
// adapter (onnx/adapters_vision.cpp) and the PyTorch device's torchvision::nms run nms_select
// (npuscope/emulator/nms.h) on the host copies of the inputs for it; the kernel runs the selection
// again on the device's data and writes the first `count` triples (zeros fill the rest if it finds
// fewer).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "kernel_util.h"
#include "npuscope/emulator/nms.h"

namespace npuscope::emulator {
namespace {

struct Corners {
  double x_min, y_min, x_max, y_max;
};

Corners corners(const double* b, bool center) {
  if (center) {
    return {b[0] - b[2] / 2, b[1] - b[3] / 2, b[0] + b[2] / 2, b[1] + b[3] / 2};
  }
  return {std::min(b[1], b[3]), std::min(b[0], b[2]), std::max(b[1], b[3]), std::max(b[0], b[2])};
}

// Whether box b suppresses box a (onnxruntime's SuppressByIOU).
bool suppresses(const Corners& a, const Corners& b, double threshold) {
  const double ix = std::min(a.x_max, b.x_max) - std::max(a.x_min, b.x_min);
  const double iy = std::min(a.y_max, b.y_max) - std::max(a.y_min, b.y_min);
  if (!(ix > 0) || !(iy > 0)) return false;
  const double inter = ix * iy;
  const double area_a = (a.x_max - a.x_min) * (a.y_max - a.y_min), area_b = (b.x_max - b.x_min) * (b.y_max - b.y_min);
  const double uni = area_a + area_b - inter;
  if (!(area_a > 0) || !(area_b > 0) || !(uni > 0)) return false;
  return inter / uni > threshold;
}

}  // namespace

std::vector<std::array<std::int64_t, 3>> nms_select(const double* boxes, const double* scores, std::int64_t batches,
                                                    std::int64_t classes, std::int64_t num_boxes, const NmsParams& p) {
  std::vector<std::array<std::int64_t, 3>> out;
  if (p.max_per_class <= 0) return out;
  std::vector<std::int64_t> order;
  std::vector<Corners> kept;
  for (std::int64_t b = 0; b < batches; ++b) {
    const double* box = boxes + b * num_boxes * 4;
    for (std::int64_t c = 0; c < classes; ++c) {
      const double* s = scores + (b * classes + c) * num_boxes;
      order.clear();
      for (std::int64_t i = 0; i < num_boxes; ++i) {
        if (!std::isnan(s[i]) && (!p.has_score_threshold || s[i] > p.score_threshold)) order.push_back(i);
      }
      std::stable_sort(order.begin(), order.end(), [&](std::int64_t i, std::int64_t j) { return s[i] > s[j]; });
      kept.clear();
      for (std::int64_t i : order) {
        if (static_cast<std::int64_t>(kept.size()) >= p.max_per_class) break;
        const Corners ci = corners(box + 4 * i, p.center_point_box);
        const bool drop =
            std::any_of(kept.begin(), kept.end(), [&](const Corners& k) { return suppresses(ci, k, p.iou_threshold); });
        if (drop) continue;
        kept.push_back(ci);
        out.push_back({b, c, i});
      }
    }
  }
  return out;
}

namespace kernels {
namespace {

constexpr char kOp[] = "NonMaxSuppression";

NmsParams read_params(const Attrs& attrs) {
  NmsParams p;
  const std::int64_t center = attrs.get_int("center_point_box", 0);
  if (center != 0 && center != 1) fail(kOp, "center_point_box must be 0 or 1, got " + std::to_string(center));
  p.center_point_box = center == 1;
  p.max_per_class = attrs.get_int("max_output_boxes_per_class", 0);
  p.iou_threshold = attrs.get_float("iou_threshold", 0.0);
  if (!(p.iou_threshold >= 0 && p.iou_threshold <= 1)) {
    fail(kOp, "iou_threshold must be in [0, 1], got " + std::to_string(p.iou_threshold));
  }
  p.has_score_threshold = attrs.has("score_threshold");
  p.score_threshold = attrs.get_float("score_threshold", 0.0);
  return p;
}

std::vector<TensorMeta> infer_nms(std::span<const TensorMeta> in, const Attrs& attrs) {
  const NmsParams p = read_params(attrs);
  require_floating(in, 0, kOp);
  require_floating(in, 1, kOp);
  const Shape &boxes = in[0].shape, &scores = in[1].shape;
  if (boxes.size() != 3 || boxes[2] != 4) fail(kOp, "boxes must be [batches, boxes, 4], got " + shape_str(boxes));
  if (scores.size() != 3 || scores[0] != boxes[0] || scores[2] != boxes[1]) {
    fail(kOp, "scores must be [batches, classes, boxes] = [" + std::to_string(boxes[0]) + ", classes, " +
                  std::to_string(boxes[1]) + "] for boxes " + shape_str(boxes) + ", got " + shape_str(scores));
  }
  if (!attrs.has("count")) {
    fail(kOp,
         "needs the 'count' attribute (the number of selected boxes, worked out on the host first: the output "
         "shape depends on the values)");
  }
  const std::int64_t count = attrs.get_int("count", 0);
  const std::int64_t most = in[1].numel();
  if (count < 0 || count > most || (p.max_per_class <= 0 && count != 0)) {
    fail(kOp,
         "count " + std::to_string(count) + " is outside [0, " + std::to_string(p.max_per_class <= 0 ? 0 : most) + "]");
  }
  return {{{count, 3}, DType::kI64}};
}

// A sort of each class's scores, then up to one IoU per pair of candidate and kept box.
KernelCost cost_nms(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs& attrs) {
  const double n = static_cast<double>(in[0].shape[1]);
  const double kept =
      std::min(n, static_cast<double>(std::max<std::int64_t>(attrs.get_int("max_output_boxes_per_class", 0), 0)));
  KernelCost c = vector_cost(in, out, 0);
  c.flops = static_cast<double>(in[1].numel()) * (std::log2(n + 1) + 12 * kept);
  return c;
}

void nms_kernel(KernelContext& ctx) {
  const NmsParams p = read_params(ctx.attrs);  // validated by infer
  const Shape& scores_shape = *ctx.inputs[1].shape;
  std::vector<double> boxes(static_cast<std::size_t>(ctx.inputs[0].numel));
  std::vector<double> scores(static_cast<std::size_t>(ctx.inputs[1].numel));
  load_f64(ctx.inputs[0], boxes.data());
  load_f64(ctx.inputs[1], scores.data());
  const auto selected = nms_select(boxes.data(), scores.data(), scores_shape[0], scores_shape[1], scores_shape[2], p);
  std::vector<std::int64_t> out(static_cast<std::size_t>(ctx.outputs[0].numel), 0);
  for (std::size_t i = 0; i < selected.size() && 3 * i < out.size(); ++i) {
    std::copy(selected[i].begin(), selected[i].end(), out.begin() + static_cast<std::ptrdiff_t>(3 * i));
  }
  store_i64(ctx.outputs[0], out.data());
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kOp,
                              .category = OpCategory::kVector,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_nms,
                              .cost = cost_nms});
// No NPU kernel: an AI CPU task on the device (see the header comment).
NPUSCOPE_REGISTER_KERNEL(kOp, Backend::kCpu, nms_kernel);

}  // namespace kernels
}  // namespace npuscope::emulator

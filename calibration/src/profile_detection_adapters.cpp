// The adapters of profile_adapters.h for a detector's box loss and its NMS: CANN's smooth L1 loss
// takes (predict, label[, dout]) with its reduction as a string attribute, where the emulator's takes
// (dloss, x, y) and an integer reduction; CANN's NonMaxSuppressionV3 / V4 select over one class's
// boxes [N, 4] and give [M] indices, where the emulator's (ONNX's) takes batches and classes and gives
// [M, 3] triples. (ROIAlign and its gradient sit with the ROI pools in profile_pool_adapters.cpp.)
//
// Note [Detection attributes a profile does not record]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// As Note [Attributes a profile does not record] (profile_pool_adapters.cpp): what the shapes fix is
// read from them, the rest takes a default.
// SmoothL1LossV2 and its gradient: the reduction from the loss's shape (the gradient's: dout's):
// predict's shape is none, a scalar is mean (sum costs the same: one pass over x and y); sigma (the
// emulator's beta) 1, PyTorch's default, which the cost does not read.
// NonMaxSuppressionV3 (torchvision_npu's nms) and V4 (torch_npu.npu_nms_v4) take max_output_size,
// iou_threshold and score_threshold as scalar tensors, whose values a profile does not record. Their
// output has max_output_size entries (torchvision_npu asks for N, every box; npu_nms_v4 for its
// argument), padded with -1: how many boxes were kept is data. The emulator's count (its output's
// rows) and max_output_boxes_per_class are both taken as M, that length (at most N), so the cost
// compares each candidate with up to M kept boxes: the bound, not the data's count of IoUs, and an
// NMS that keeps few boxes is modelled high. iou_threshold 0.5 (CANN's NonMaxSuppression default) and
// no score threshold, which the cost does not read. CANN versions without ops-cv's AI Core kernel run
// NonMaxSuppressionV3 on the AI CPU: those kernels are skipped whatever their type (the cost model
// times NPU kernels). The emulator's NonMaxSuppression has only a CPU kernel, so an AI Core kernel of
// it is priced as the emulator runs it, an AI CPU task (nms_ops.cpp): far slower than ops-cv's kernel
// (1000 boxes: ~3 ms on ascend910b), until the emulator has an NPU kernel for it.
#include <algorithm>

#include "profile_adapters.h"

namespace npuscope::calibration::profile {

using emulator::Shape;
using emulator::shape_str;
using emulator::TensorMeta;

// SmoothL1LossV2 (predict, label) -> loss: predict's shape (reduction none) or a scalar.
std::string smooth_l1_loss(const KernelTensors& k, Adapted& a) {
  if (auto e = need(k, 2, 1); !e.empty()) return e;
  if (auto e = generic(k, a); !e.empty()) return e;
  a.inputs.resize(2);
  const bool none = !a.outputs[0].empty() && a.outputs[0] == a.inputs[0].shape;
  a.attrs.set("reduction", std::int64_t{none ? 0 : 1}).set("beta", 1.0);
  a.outputs.resize(1);
  return {};
}

// SmoothL1LossGradV2 (predict, label, dout) -> the emulator's (dloss, x, y); dout is 0-dim for a
// reduced loss ([1] is read as that scalar).
std::string smooth_l1_loss_grad(const KernelTensors& k, Adapted& a) {
  if (auto e = need(k, 3, 1); !e.empty()) return e;
  if (auto e = generic(k, a); !e.empty()) return e;
  TensorMeta dout = a.inputs[2];
  const bool none = !dout.shape.empty() && dout.shape == a.inputs[0].shape;
  if (!none && dout.numel() == 1) dout.shape = {};
  a.inputs = {dout, a.inputs[0], a.inputs[1]};
  a.attrs.set("reduction", std::int64_t{none ? 0 : 1}).set("beta", 1.0);
  a.outputs.resize(1);
  return {};
}

// NonMaxSuppressionV3 / V4 (boxes [N, 4], scores [N], max_output_size, iou_threshold, score_threshold)
// -> selected_indices i32 [M] (V4: and valid_outputs): one batch and one class of the emulator's.
std::string non_max_suppression(const KernelTensors& k, Adapted& a) {
  if (auto e = need(k, 2, 1); !e.empty()) return e;
  TensorMeta boxes, scores;
  if (auto e = as_input(k.inputs[0], boxes); !e.empty()) return e;
  if (auto e = as_input(k.inputs[1], scores); !e.empty()) return e;
  const Shape &b = boxes.shape, &s = scores.shape, &y = k.outputs[0].shape;
  if (b.size() != 2 || b[1] != 4 || s != Shape{b[0]} || y.size() != 1) {
    return "expected boxes [N, 4], scores [N] and indices [M], got " + shape_str(b) + ", " + shape_str(s) + " and " +
           shape_str(y);
  }
  const std::int64_t n = b[0], m = y[0], count = std::min(m, n);
  a.inputs = {meta({1, n, 4}, boxes.dtype), meta({1, 1, n}, scores.dtype)};
  a.attrs.set("max_output_boxes_per_class", m).set("iou_threshold", 0.5).set("count", count);
  a.outputs = {{count, 3}};
  return {};
}

}  // namespace npuscope::calibration::profile

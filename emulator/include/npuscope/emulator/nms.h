// The box selection of NonMaxSuppression (kernels/nms_ops.cpp), for the callers that need the op's
// output size on the host before they launch it (Note [Data-dependent output sizes] in nms_ops.cpp):
// the ONNX adapter (onnx/adapters_vision.cpp) and the PyTorch device's torchvision::nms
// (pytorch/src/kernels_torchvision.cpp). The kernel runs the same selection on the device's data.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace npuscope::emulator {

struct NmsParams {
  bool center_point_box = false;  // boxes as (x_center, y_center, width, height), else two corners
  std::int64_t max_per_class = 0;
  double iou_threshold = 0;
  bool has_score_threshold = false;
  double score_threshold = 0;
};

// boxes [batches, boxes, 4], scores [batches, classes, boxes], row-major. Returns the selected
// (batch, class, box) triples in ONNX's order: by batch, then class, then in selection order
// (highest score first; equal scores: lower box index first).
std::vector<std::array<std::int64_t, 3>> nms_select(const double* boxes, const double* scores, std::int64_t batches,
                                                    std::int64_t classes, std::int64_t num_boxes, const NmsParams& p);

}  // namespace npuscope::emulator

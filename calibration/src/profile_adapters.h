// The adapters of Note [Kernels as data points] (profile_points.h): one per row of the CANN op-type
// table that needs more than "inputs as recorded".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "npuscope/emulator/attrs.h"
#include "npuscope/emulator/op_registry.h"

namespace npuscope::calibration::profile {

// One tensor of a kernel, as recorded.
struct KernelTensor {
  emulator::Shape shape;
  std::optional<DType> dtype;  // nullopt: a dtype npuscope has no name for ("UINT16")
  std::string dtype_name;      // as the trace writes it
  std::string format;          // "NC1HWC0", "FRACTAL_Z", "NCHW", "ND" (FORMAT_ND), "NC1HWC0:1"; "" unknown
};

struct KernelTensors {
  std::vector<KernelTensor> inputs, outputs;
};

// What an adapter makes of a kernel: the emulator op, its inputs and attributes, and the logical
// shapes its outputs must infer to (the recorded ones, with private formats undone).
struct Adapted {
  std::string op;
  std::vector<emulator::TensorMeta> inputs;
  emulator::Attrs attrs;
  std::vector<emulator::Shape> outputs;
  bool numel_only = false;  // compare output element counts only (Foreach* records its outputs flat)
};

// An adapter fills `a` (a.op is set to the table's emulator op beforehand) and returns "" or why
// it cannot.
using Adapter = std::string (*)(const KernelTensors& k, Adapted& a);

// Shared by the adapters: a tensor with this shape and dtype; a recorded tensor as the emulator's
// input (its logical shape, its dtype; else why not); "" when the kernel has at least these many
// inputs and outputs, else what it has.
emulator::TensorMeta meta(emulator::Shape shape, DType dtype);
std::string as_input(const KernelTensor& t, emulator::TensorMeta& out);
std::string need(const KernelTensors& k, std::size_t inputs, std::size_t outputs);

// The smallest stride, then the smallest pad (each side), with which a window of `k` over `in` gives
// `out` positions (floor division, as Conv2d and MaxPool without ceil_mode); strides and pads up to
// 64, so that garbage sizes cost nothing. nullopt when none does.
std::optional<std::pair<std::int64_t, std::int64_t>> stride_pad(std::int64_t in, std::int64_t k, std::int64_t out);

// The generic adapter: every input as recorded (logical shapes), no attributes.
std::string generic(const KernelTensors& k, Adapted& a);

// Cube, pooling and layout (profile_adapters.cpp).
std::string conv2d(const KernelTensors& k, Adapted& a);
std::string conv2d_backprop_input(const KernelTensors& k, Adapted& a);
std::string conv2d_backprop_filter(const KernelTensors& k, Adapted& a);
std::string matmul(const KernelTensors& k, Adapted& a);  // MatMul*, BatchMatMul*: a bias makes a Gemm
std::string max_pool_argmax(const KernelTensors& k, Adapted& a);
std::string max_pool_grad_argmax(const KernelTensors& k, Adapted& a);
std::string adaptive_avg_pool3d(const KernelTensors& k, Adapted& a);
std::string adaptive_avg_pool3d_grad(const KernelTensors& k, Adapted& a);
std::string trans_data(const KernelTensors& k, Adapted& a);

// 3-D max pooling, ROI pooling and alignment and deformable sampling (profile_pool_adapters.cpp;
// Note [Attributes a profile does not record] there).
std::string max_pool3d_argmax(const KernelTensors& k, Adapted& a);      // aclnn (V2): NCDHW, window guessed
std::string max_pool3d_argmax_6hd(const KernelTensors& k, Adapted& a);  // TBE: NDC1HWC0, window from the bitmask
std::string max_pool3d_grad_argmax(const KernelTensors& k, Adapted& a);
std::string deformable_offsets(const KernelTensors& k, Adapted& a);
std::string deformable_offsets_grad(const KernelTensors& k, Adapted& a);
std::string roi_pool(const KernelTensors& k, Adapted& a);  // RoiPoolingWithArgMax
std::string roi_pool_grad(const KernelTensors& k, Adapted& a);
std::string ps_roi_pool(const KernelTensors& k, Adapted& a);  // PSROIPoolingV2
std::string ps_roi_pool_grad(const KernelTensors& k, Adapted& a);
std::string roi_align(const KernelTensors& k, Adapted& a);  // ROIAlign -> RoiAlign
std::string roi_align_grad(const KernelTensors& k, Adapted& a);

// A detector's box loss and NMS (profile_detection_adapters.cpp; Note [Detection attributes a
// profile does not record] there).
std::string smooth_l1_loss(const KernelTensors& k, Adapted& a);       // reduction from the loss's shape
std::string smooth_l1_loss_grad(const KernelTensors& k, Adapted& a);  // (predict, label, dout) -> (dout, x, y)
std::string non_max_suppression(const KernelTensors& k, Adapted& a);  // NonMaxSuppressionV3 / V4: one class

// Vector ops whose CANN form differs from the emulator's (profile_vector_adapters.cpp).
std::string tensor_move(const KernelTensors& k, Adapted& a);    // -> ViewCopy of the whole tensor
std::string transpose(const KernelTensors& k, Adapted& a);      // perm tensor -> perm from the shapes
std::string broadcast_to(const KernelTensors& k, Adapted& a);   // shape tensor -> Expand's shape
std::string fill(const KernelTensors& k, Adapted& a);           // Fill / OnesLike / ZerosLike: x of the output
std::string cast(const KernelTensors& k, Adapted& a);           // `to` from the output dtype
std::string scalar_binary(const KernelTensors& k, Adapted& a);  // Mul/Add with a scalar operand -> Muls/Adds
std::string dropout_do_mask(const KernelTensors& k, Adapted& a);
std::string nll_loss(const KernelTensors& k, Adapted& a);
std::string nll_loss_grad(const KernelTensors& k, Adapted& a);
std::string top_k(const KernelTensors& k, Adapted& a);
std::string reduce(const KernelTensors& k, Adapted& a);     // axes tensor -> axes and keepdims from the shapes
std::string foreach (const KernelTensors& k, Adapted & a);  // every input; outputs compared by element count

// The logical form of a private-format storage shape: NC1HWC0 [N,C1,H,W,C0] -> [N, C1*C0, H, W];
// other formats unchanged. nullopt for a 5HD format whose shape is not 5-D.
std::optional<emulator::Shape> logical_shape(const KernelTensor& t);

// Format names as kernel_details writes them, FORMAT_ND as "ND".
std::string normal_format(std::string_view format);

}  // namespace npuscope::calibration::profile

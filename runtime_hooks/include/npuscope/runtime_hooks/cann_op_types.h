// Ascend (CANN) op types and the emulator ops that model them, declared once.
//
// Note [CANN op types]
// ~~~~~~~~~~~~~~~~~~~~
// A real Ascend profile names each device kernel by its CANN op type (kernel_details' "Type",
// COMPUTE_TASK_INFO.opType): "Conv2D", "MatMulV2", "ReluGrad", "TensorMove". The emulator names the
// same work by its own op types ("Conv2d", "MatMul", "ThresholdGrad", "ViewCopy"). This table is the
// one place that says which is which; `npuscope calibrate --from-profile` maps real kernels to
// emulator ops through it, `npuscope diff` pairs emulated ops with real ones through it, and the
// table of docs/calibration.md is generated from it. It is header-only vocabulary in the lowest
// layer, so every layer may use it.
//
// Rows are (CANN type, emulator op, note). A CANN type may have several rows when the emulator op
// depends on the kernel's inputs (MatMulV2 with a bias input is a Gemm); `emulator_op_of` gives the
// first. An emulator op may be reached from several CANN types (MatMulV2, MatMulV3 -> MatMul);
// `cann_op_of` gives the first row naming it, so the row a 910B with torch_npu actually launches
// comes first. Every emulator name is checked against the op registry by
// tests/emulator/cann_op_types_test.cpp.
#pragma once

#include <string_view>

namespace npuscope {

struct CannOpType {
  std::string_view cann;      // the CANN op type, as a profile writes it
  std::string_view emulator;  // the emulator op (an OpRegistry type) that models it
  std::string_view note;      // how the kernel's inputs become the emulator op's (one line; may be empty)
};

inline constexpr CannOpType kCannOpTypes[] = {
    // Cube.
    {"Conv2D", "Conv2d", "5HD input, FRACTAL_Z weight back to NCHW; stride/pad inferred from the output"},
    {"Conv2DBackpropInput", "Conv2DBackpropInput", "INT32 size input -> input_size attr; FRACTAL_Z weight"},
    {"Conv2DBackpropFilter", "Conv2DBackpropFilter", "INT32 size input -> filter_size attr; FRACTAL_Z output"},
    {"Conv3D", "Conv3d", ""},
    {"Conv2DTranspose", "ConvTranspose", ""},
    {"MatMulV2", "MatMul", "transposes from the output shape; a bias input makes it a Gemm"},
    {"MatMulV2", "Gemm", "with a bias input (aclnnAddmm)"},
    {"MatMulV3", "MatMul", "as MatMulV2"},
    {"MatMul", "MatMul", "as MatMulV2"},
    {"BatchMatMulV2", "BatchMatMul", "transposes from the output shape"},
    {"BatchMatMul", "BatchMatMul", "as BatchMatMulV2"},
    {"BatchMatMulV3", "BatchMatMul", "as BatchMatMulV2"},
    // Layout and data movement.
    {"TransData", "TransData", "src/dst format and the logical shape from the kernel's formats"},
    {"TensorMove", "ViewCopy", "a device-to-device copy (aclnnInplaceCopy)"},
    {"ViewCopy", "ViewCopy", ""},
    {"TensorMove", "Identity", "a contiguous device-to-device copy_ (the emulator's Identity)"},
    {"MemSet", "MemSet", "zeroing before an atomic-accumulated output"},
    {"Transpose", "Transpose", "perm from the input and output shapes"},
    {"BroadcastTo", "Expand", ""},
    {"Expand", "Expand", ""},
    {"ConcatD", "Concat", ""},
    {"ConcatV2", "Concat", ""},
    {"SplitV", "Split", ""},
    {"StridedSliceD", "Slice", ""},
    {"Slice", "Slice", ""},
    {"GatherV2", "Gather", ""},
    {"GatherElements", "GatherElements", ""},
    {"GatherNd", "GatherND", ""},
    {"ScatterElements", "ScatterElements", ""},
    {"ScatterNd", "ScatterND", ""},
    {"TileD", "Tile", ""},
    {"Tile", "Tile", ""},
    {"PadV3", "Pad", ""},
    {"AsStrided", "AsStrided", ""},
    {"Fill", "Fill", ""},
    {"OnesLike", "Fill", "value 1"},
    {"ZerosLike", "Fill", "value 0"},
    {"Cast", "Cast", ""},
    // Optimizer.
    {"ForeachAddList", "ForeachAddList", "one launch over all tensors of the lists"},
    {"ForeachMulScalar", "ForeachMulScalar", "one launch over all tensors of the list"},
    {"ForeachMulList", "ForeachMulList", ""},
    {"ForeachDivList", "ForeachDivList", ""},
    {"ForeachAddScalar", "ForeachAddScalar", ""},
    {"ForeachDivScalar", "ForeachDivScalar", ""},
    {"ForeachAddScalarList", "ForeachAddScalarList", ""},
    {"ForeachMulScalarList", "ForeachMulScalarList", ""},
    {"ForeachDivScalarList", "ForeachDivScalarList", ""},
    {"ForeachSqrt", "ForeachSqrt", ""},
    {"ForeachAddcmulScalar", "ForeachAddcmulScalar", ""},
    {"ForeachAddcmulScalarList", "ForeachAddcmulScalarList", ""},
    {"ForeachAddcdivScalar", "ForeachAddcdivScalar", ""},
    {"ForeachAddcdivScalarList", "ForeachAddcdivScalarList", ""},
    // Element-wise.
    {"Add", "Add", ""},
    {"Add", "Adds", "a scalar operand (aclnnAdds)"},
    {"Adds", "Adds", ""},
    {"Sub", "Sub", ""},
    {"Mul", "Mul", ""},
    {"Mul", "Muls", "a scalar operand (aclnnMuls)"},
    {"Muls", "Muls", ""},
    {"RealDiv", "Div", ""},
    {"Div", "Div", ""},
    {"Axpy", "Axpy", ""},
    {"Addcdiv", "Addcdiv", ""},
    {"Addcmul", "Addcmul", ""},
    {"Lerp", "Lerp", ""},
    {"Pow", "Pow", ""},
    {"Maximum", "Max", ""},
    {"Minimum", "Min", ""},
    {"FloorMod", "Mod", ""},
    {"Equal", "Equal", ""},
    {"Greater", "Greater", ""},
    {"GreaterEqual", "GreaterOrEqual", ""},
    {"Less", "Less", ""},
    {"LessEqual", "LessOrEqual", ""},
    {"LogicalAnd", "And", ""},
    {"LogicalOr", "Or", ""},
    {"LogicalNot", "Not", ""},
    {"BitwiseAnd", "BitwiseAnd", ""},
    {"BitwiseOr", "BitwiseOr", ""},
    {"BitwiseXor", "BitwiseXor", ""},
    {"SelectV2", "Where", ""},
    {"Select", "Where", ""},
    {"MaskedFill", "MaskedFill", ""},
    {"Abs", "Abs", ""},
    {"Neg", "Neg", ""},
    {"Exp", "Exp", ""},
    {"Log", "Log", "base, scale, shift attrs as CANN's (log2, log10: base 2, 10)"},
    {"Sqrt", "Sqrt", ""},
    {"Rsqrt", "Rsqrt", ""},
    {"Reciprocal", "Reciprocal", ""},
    {"Sign", "Sign", ""},
    {"Floor", "Floor", ""},
    {"Ceil", "Ceil", ""},
    {"Round", "Round", ""},
    {"Erf", "Erf", ""},
    {"Sin", "Sin", ""},
    {"Cos", "Cos", ""},
    {"Tan", "Tan", ""},
    {"IsInf", "IsInf", ""},
    {"IsNan", "IsNaN", ""},
    {"ClipByValue", "Clip", ""},
    // Activations and their gradients.
    {"Relu", "Relu", ""},
    {"ReluGrad", "ThresholdGrad", "threshold 0"},
    {"ThresholdGradV2D", "ThresholdGrad", ""},
    {"LeakyRelu", "LeakyRelu", ""},
    {"PRelu", "PRelu", ""},
    {"Elu", "Elu", ""},
    {"Selu", "Selu", ""},
    {"Celu", "Celu", ""},
    {"Sigmoid", "Sigmoid", ""},
    {"SigmoidGrad", "SigmoidGrad", ""},
    {"Tanh", "Tanh", ""},
    {"TanhGrad", "TanhGrad", ""},
    {"Gelu", "Gelu", ""},
    {"GeluV2", "GeluV2", ""},
    {"GeluGrad", "GeluGrad", ""},
    {"FastGelu", "FastGelu", ""},
    {"Swish", "Silu", ""},
    {"SwishGrad", "SiluGrad", ""},
    {"HardSigmoid", "HardSigmoid", ""},
    {"HardSigmoidGrad", "HardsigmoidGrad", ""},
    {"HardSwish", "HardSwish", ""},
    {"HardSwishGrad", "HardswishGrad", ""},
    {"HardtanhGrad", "HardtanhGrad", ""},
    {"Softplus", "Softplus", ""},
    {"SwiGlu", "SwiGlu", ""},
    {"DropOutDoMask", "DropoutDoMask", "the mask input is bits"},
    {"DropOutDoMaskV3", "DropoutDoMask", ""},
    // Softmax, losses, norms.
    {"SoftmaxV2", "Softmax", ""},
    {"SoftmaxGrad", "SoftmaxGrad", ""},
    {"LogSoftmaxV2", "LogSoftmax", ""},
    {"LogSoftmaxGrad", "LogSoftmaxGrad", ""},
    {"NLLLoss", "NLLLoss", "reduction from the output shape"},
    {"NLLLossGrad", "NLLLossGrad", "reduction from the grad input's shape"},
    {"MseLoss", "MseLoss", ""},
    {"MseLossGrad", "MseLossGrad", ""},
    {"SmoothL1LossV2", "SmoothL1LossV2", "reduction from the loss's shape (a scalar: mean); sigma 1 (unrecorded)"},
    {"SmoothL1LossGradV2", "SmoothL1LossGradV2", "(predict, label, dout) -> (dout, x, y); reduction from dout's shape"},
    {"CTCLossV2", "CTCLossV2", "padded targets: max_target_length is their width"},
    {"CTCLossV3", "CTCLossV2", "as CTCLossV2 (910B, f16/bf16 too)"},
    {"CTCLossV2Grad", "CTCLossV2Grad", ""},
    {"CTCLossV3Grad", "CTCLossV2Grad", "as CTCLossV2Grad"},
    {"LayerNormV3", "LayerNormV3", ""},
    {"LayerNorm", "LayerNorm", ""},
    {"LayerNormGrad", "LayerNormGrad", ""},
    {"RmsNorm", "RMSNorm", ""},
    // Reductions and selections.
    {"ReduceSum", "ReduceSum", "axes from the input and output shapes"},
    {"ReduceMean", "ReduceMean", "axes from the input and output shapes"},
    {"ReduceMax", "ReduceMax", ""},
    {"ReduceMin", "ReduceMin", ""},
    {"ReduceProd", "ReduceProd", ""},
    {"ReduceAll", "ReduceAll", ""},
    {"ReduceAny", "ReduceAny", ""},
    {"ArgMaxV2", "ArgMax", ""},
    {"ArgMin", "ArgMin", ""},
    {"TopKV2", "TopK", "k from the output shape"},
    {"TopK", "TopK", ""},
    {"NonMaxSuppressionV3", "NonMaxSuppression",
     "torchvision_npu's nms: one class of [1,N,4] boxes; count = max per class = the [M] output's M; an AI CPU cost"},
    {"NonMaxSuppressionV4", "NonMaxSuppression", "as NonMaxSuppressionV3 (torch_npu.npu_nms_v4)"},
    {"Cumsum", "CumSum", ""},
    {"OneHot", "OneHot", ""},
    {"NonZero", "NonZero", ""},
    {"Unique", "Unique", ""},
    {"EmbeddingDenseGrad", "EmbeddingDenseGrad", ""},
    {"EmbeddingBag", "EmbeddingBag", ""},
    {"LinSpace", "LinSpace", ""},
    {"Randperm", "Randperm", ""},
    // Pooling.
    {"MaxPoolWithArgmaxV1", "MaxPoolWithArgmax", "5HD (C0 16) back to NCHW; kernel from the mask"},
    {"MaxPoolGradWithArgmaxV1", "MaxPoolGradWithArgmax", "as MaxPoolWithArgmaxV1"},
    {"MaxPool3DWithArgmaxV2", "MaxPool3DWithArgmax",
     "aclnn, NCDHW; no window recorded: per axis kernel = stride, else stride+1 and a pad (overlaps cost low)"},
    {"MaxPool3DWithArgmax", "MaxPool3DWithArgmax",
     "TBE: NDC1HWC0 back to NCDHW; kd*kh*kw from the bitmask rows over C1, the most cubic window"},
    {"MaxPool3DGradWithArgmax", "MaxPool3DGradWithArgmax",
     "(x, grad, argmax; grad is argmax's shape): x's shape -> input_size; window as MaxPool3DWithArgmaxV2's"},
    {"MaxPoolV3", "MaxPool", ""},
    {"AvgPoolV2", "AvgPool", ""},
    {"GridSampler2D", "GridSample", ""},
    {"GridSampler2DGrad", "GridSampler2DGrad", ""},
    {"DeformableOffsets", "DeformableOffsets",
     "NHWC x, offsets [N,Ho,Wo,3*dg*kh*kw] -> NCHW x, offsets, mask inputs; kh, kw from y over the offsets"},
    {"DeformableOffsetsGrad", "DeformableOffsetsGrad",
     "as DeformableOffsets; grad_offsets as two outputs, the offsets' and the mask's gradients"},
    {"RoiPoolingWithArgMax", "RoiPoolingWithArgMax",
     "rois [R,5] or [B,5,R/B] -> [R,4] + i32 batch_indices; pooled_h/w from y; spatial_scale 1 (unrecorded)"},
    {"RoiPoolingGradWithArgMax", "RoiPoolingGradWithArgMax",
     "(grad, x, rois, roi_actual_num?, argmax): rois as RoiPoolingWithArgMax; dx's shape -> xdiff_shape"},
    {"PSROIPoolingV2", "PSROIPoolingV2",
     "5HD back to NCHW; group_size from y; rois as RoiPoolingWithArgMax; spatial_scale 1, sampling_ratio 0"},
    {"PSROIPoolingGradV2D", "PSROIPoolingGradV2D",
     "as PSROIPoolingV2; dx's shape -> xdiff_shape; channel_mapping an i32 input of dy's shape"},
    {"ROIAlign", "RoiAlign",
     "5HD or NCHW; rois as RoiPoolingWithArgMax; output size from y; sample_num 2, spatial_scale 1 (unrecorded)"},
    {"ROIAlignGrad", "ROIAlignGrad", "(ydiff, rois, rois_n?): as ROIAlign; xdiff's shape -> xdiff_shape"},
    {"AdaptiveAvgPool3d", "AdaptiveAvgPool2d", "aclnnAdaptiveAvgPool2d runs the 3d kernel on [N,C,1,H,W]"},
    {"AdaptiveAvgPool3dGrad", "AdaptiveAvgPool2dGrad", "as AdaptiveAvgPool3d"},
    {"AdaptiveAvgPool2d", "AdaptiveAvgPool2d", ""},
    {"AdaptiveAvgPool2dGrad", "AdaptiveAvgPool2dGrad", ""},
};

// The emulator op modelling a CANN op type (its first row); empty when the table has none.
constexpr std::string_view emulator_op_of(std::string_view cann) {
  for (const CannOpType& row : kCannOpTypes) {
    if (row.cann == cann) return row.emulator;
  }
  return {};
}

// The CANN op type a 910B launches for an emulator op (the first row naming it); empty when none.
constexpr std::string_view cann_op_of(std::string_view emulator) {
  for (const CannOpType& row : kCannOpTypes) {
    if (row.emulator == emulator) return row.cann;
  }
  return {};
}

}  // namespace npuscope

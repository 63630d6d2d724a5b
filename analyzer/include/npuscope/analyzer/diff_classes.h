// What `npuscope diff`'s overall table splits Computing into: msprof-analyze's OverallMetrics
// classes (Flash Attention, Conv, Matmul, Paged Attention, Vector, Cube, SDMA (Tensor Move), MC2,
// Other), for an NPU's tasks and a GPU's kernels alike, so that the two line up row by row.
//
// Note [Kernel classes]
// msprof-analyze's compare (compare_backend base_profiling_parser.py categorize_computing_performance_data,
// kernel_details_bean.py, trace_event_bean.py, compare_config.ini) classes each kernel in this order:
// 1. an NPU kernel whose op type has "pagedattention": Paged Attention; one named aclnnInplaceCopy*
//    with "tensormove": SDMA (Tensor Move); an MC2 kernel (AllGatherMatmul, MatmulReduceScatter,
//    MatmulAllReduce): MC2;
// 2. a kernel launched inside a framework op whose name has a flash-attention mask (flash_attention,
//    fusion_attention, flashattn, xformers_flash, efficient_attention, flash2attn), "aten::conv", or a
//    matmul mask (aten::addmm, aten::bmm, aten::mm, aten::matmul), the earliest-starting such op
//    that contains the launch: Flash Attention, Conv or Matmul, backward when that op's name has
//    bwd, backward, back or grad (a conv also when it ran in the backward pass: msprof-analyze takes
//    the backward thread), Cube or Vector by the kernel (below);
// 3. an NPU kernel by its op type: "flashattention" (backward with bwd or grad), starting "conv"
//    (backward with bwd, backward, back or grad), "matmul": Flash Attention, Conv, Matmul (Cube);
// 4. a cube kernel: Cube; a vector one named with cast, transdata or transpose: Vector (Trans);
//    the rest Vector (No Trans). What is left of Computing is Other (AI CPU: its kernel_details row
//    has no PMU, which msprof-analyze skips).
// A kernel is a cube one on an NPU when it ran on the AI Core (AI_CORE, MIX_AIC: what its
// aicore_time or aic_total_time > 0 says, and msprof-analyze's own fallback without PMU), on a GPU
// when its name has gemm, conv, cutlass, wgrad or gemvx.
// npuscope adds, for a GPU:
// - cube kernels: ROCm's Tensile GEMMs (Cijk_*), which the masks miss, and the attention kernels
//   (flash, fmha, attn_fwd, attn_bwd: tensor-core work, as an NPU's FlashAttentionScore is
//   MIX_AIC; the masks catch FlashAttention-2 only through the "cutlass" of its template arguments);
// - step 3 by kernel name: flash, fmha, attn_fwd/attn_bwd: Flash Attention; convolution, convolve,
//   conv1d/2d/3d, fprop, dgrad, wgrad, MIOpen's igemm_fwd/bwd/wrw: Conv; gemm, gemv, Cijk_: Matmul;
//   so that a kernel launched outside a named framework op lines up with an NPU kernel of the same
//   work;
// - Trans for transpose and NCHW<->NHWC layout kernels (msprof-analyze has no Trans on a GPU;
//   "cast" is not read there: PyTorch's elementwise kernels are named gpu_kernel_impl_nocast).
#pragma once

#include <cstdint>
#include <string_view>

namespace npuscope::analyzer {

// The leaves of the Computing split, in the table's order (the parents, Flash Attention (Forward),
// Matmul, Vector, ..., are sums of consecutive leaves: diff_report.cpp).
#define NPUSCOPE_COMPUTE_CLASSES(X)                                       \
  X(kMc2, "MC2")                                                          \
  X(kFlashAttentionForwardCube, "Flash Attention (Forward) (Cube)")       \
  X(kFlashAttentionForwardVector, "Flash Attention (Forward) (Vector)")   \
  X(kFlashAttentionBackwardCube, "Flash Attention (Backward) (Cube)")     \
  X(kFlashAttentionBackwardVector, "Flash Attention (Backward) (Vector)") \
  X(kConvForwardCube, "Conv (Forward) (Cube)")                            \
  X(kConvForwardVector, "Conv (Forward) (Vector)")                        \
  X(kConvBackwardCube, "Conv (Backward) (Cube)")                          \
  X(kConvBackwardVector, "Conv (Backward) (Vector)")                      \
  X(kMatmulCube, "Matmul (Cube)")                                         \
  X(kMatmulVector, "Matmul (Vector)")                                     \
  X(kPagedAttention, "Paged Attention")                                   \
  X(kVectorTrans, "Vector (Trans)")                                       \
  X(kVectorNoTrans, "Vector (No Trans)")                                  \
  X(kCube, "Cube")                                                        \
  X(kSdmaTensorMove, "SDMA (Tensor Move)")                                \
  X(kOther, "Other (AI CPU, host CPU)")

enum class ComputeClass : std::int8_t {
#define NPUSCOPE_X(name, label) name,
  NPUSCOPE_COMPUTE_CLASSES(NPUSCOPE_X)
#undef NPUSCOPE_X
};
inline constexpr int kComputeClasses = 0
#define NPUSCOPE_X(name, label) +1
    NPUSCOPE_COMPUTE_CLASSES(NPUSCOPE_X)
#undef NPUSCOPE_X
    ;

std::string_view compute_class_label(ComputeClass c);

// What a framework op (PYTORCH_API) says of the kernels launched inside it (step 2).
struct FrameworkOpClass {
  enum Kind : std::int8_t { kNone, kFlashAttention, kConv, kMatmul } kind = kNone;
  bool backward = false;
  bool operator==(const FrameworkOpClass&) const = default;
};
// `backward_pass`: the op ran in the backward pass (PYTORCH_API.pass).
FrameworkOpClass framework_op_class(std::string_view name, bool backward_pass = false);

// What a kernel's name and op type say (bits), each distinct string looked at once.
using KernelTraits = std::uint16_t;
KernelTraits kernel_name_traits(std::string_view name);
KernelTraits op_type_traits(std::string_view op_type);

// The class of a task of TASK.task_type `task_type` (an NPU's AI_CORE, AI_VECTOR_CORE, MIX_AIC,
// MIX_AIV; a GPU's KERNEL; anything else computing is Other), its name's and op type's traits OR'ed.
ComputeClass compute_class(std::int32_t task_type, KernelTraits traits, FrameworkOpClass framework = {});
// The same from the strings.
ComputeClass compute_class(std::int32_t task_type, std::string_view name, std::string_view op_type,
                           FrameworkOpClass framework = {});

}  // namespace npuscope::analyzer

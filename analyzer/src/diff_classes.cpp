// The classes of Note [Kernel classes] (diff_classes.h): masks over lowercased names, then the order
// msprof-analyze's compare classes a kernel in.
#include "npuscope/analyzer/diff_classes.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <span>
#include <string>

#include "npuscope/runtime_hooks/vocabulary.h"

namespace npuscope::analyzer {
namespace {

// The traits' bits: what a kernel name says (kGpu*: read on a GPU kernel only; kNpu*: on an NPU
// task only), then what an op type says (read on an NPU task only).
enum : KernelTraits {
  kGpuCubeName = 1 << 0,         // msprof-analyze's CUBE_MASK, and Tensile's Cijk_
  kNpuTransName = 1 << 1,        // msprof-analyze's TRANS_MASK
  kGpuTransName = 1 << 2,        // transposes and layout kernels
  kTensorMoveName = 1 << 3,      // aclnnInplaceCopy*TensorMove: SDMA (Tensor Move)
  kMc2 = 1 << 4,                 // msprof-analyze's MC2_KERNEL, by name or op type
  kGpuFlashAttention = 1 << 5,   // by kernel name (npuscope's counterpart of step 3)
  kGpuConv = 1 << 6,             //   likewise
  kGpuGemm = 1 << 7,             //   likewise
  kGpuBackward = 1 << 8,         //   a backward kernel by its name
  kNpuFlashAttention = 1 << 9,   // op type
  kNpuFlashBackward = 1 << 10,   //   bwd or grad
  kNpuConv = 1 << 11,            // op type starts with conv
  kNpuConvBackward = 1 << 12,    //   msprof-analyze's BWD_LIST
  kNpuMatmul = 1 << 13,          // op type
  kNpuPagedAttention = 1 << 14,  // op type
};

using Masks = std::span<const std::string_view>;

// msprof-analyze's masks (compare_config.ini [OP_MASK], Constant.BWD_LIST).
constexpr std::string_view kFlashAttentionMask[] = {"flash_attention",     "fusion_attention", "flashattn",
                                                    "efficient_attention", "xformers_flash",   "flash2attn"};
constexpr std::string_view kConvMask[] = {"aten::conv"};
constexpr std::string_view kMatmulMask[] = {"aten::addmm", "aten::bmm", "aten::mm", "aten::matmul"};
constexpr std::string_view kCubeMask[] = {"gemm", "conv", "cutlass", "wgrad", "gemvx"};
constexpr std::string_view kTransMask[] = {"cast", "transdata", "transpose"};
constexpr std::string_view kMc2Kernels[] = {"allgathermatmul", "matmulreducescatter", "matmulallreduce"};
constexpr std::string_view kBackwardMask[] = {"bwd", "backward", "back", "grad"};
// npuscope's, for a GPU's kernel names.
constexpr std::string_view kGpuFlashAttentionMask[] = {"flash", "fmha", "attn_fwd", "attn_bwd"};
constexpr std::string_view kGpuConvMask[] = {"convolution", "convolve", "conv1d",    "conv2d",    "conv3d",   "fprop",
                                             "dgrad",       "wgrad",    "igemm_fwd", "igemm_bwd", "igemm_wrw"};
constexpr std::string_view kGpuGemmMask[] = {"gemm", "gemv", "cijk_"};
constexpr std::string_view kGpuTransMask[] = {"transpose", "nchwtonhwc", "nhwctonchw"};
constexpr std::string_view kGpuBackwardMask[] = {"bwd", "backward", "grad", "wrw"};

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

bool has_any(std::string_view s, Masks masks) {
  return std::any_of(masks.begin(), masks.end(), [&](std::string_view m) { return s.find(m) != s.npos; });
}

bool is_any(std::string_view s, Masks masks) { return std::find(masks.begin(), masks.end(), s) != masks.end(); }

constexpr std::array<std::string_view, kComputeClasses> kLabels = {
#define NPUSCOPE_X(name, label) label,
    NPUSCOPE_COMPUTE_CLASSES(NPUSCOPE_X)
#undef NPUSCOPE_X
};

ComputeClass pick(bool backward, bool cube, ComputeClass fwd_cube, ComputeClass fwd_vector, ComputeClass bwd_cube,
                  ComputeClass bwd_vector) {
  return backward ? (cube ? bwd_cube : bwd_vector) : (cube ? fwd_cube : fwd_vector);
}

ComputeClass by_framework_op(FrameworkOpClass f, bool cube) {
  using C = ComputeClass;
  switch (f.kind) {
    case FrameworkOpClass::kFlashAttention:
      return pick(f.backward, cube, C::kFlashAttentionForwardCube, C::kFlashAttentionForwardVector,
                  C::kFlashAttentionBackwardCube, C::kFlashAttentionBackwardVector);
    case FrameworkOpClass::kConv:
      return pick(f.backward, cube, C::kConvForwardCube, C::kConvForwardVector, C::kConvBackwardCube,
                  C::kConvBackwardVector);
    case FrameworkOpClass::kMatmul: return cube ? C::kMatmulCube : C::kMatmulVector;
    case FrameworkOpClass::kNone: break;
  }
  return C::kOther;
}

// Step 3 (Note [Kernel classes]): an NPU task by its op type, a GPU kernel by its name.
FrameworkOpClass by_own_name(KernelTraits t, bool npu) {
  using F = FrameworkOpClass;
  if (npu) {
    if (t & kNpuFlashAttention) return {F::kFlashAttention, (t & kNpuFlashBackward) != 0};
    if (t & kNpuConv) return {F::kConv, (t & kNpuConvBackward) != 0};
    if (t & kNpuMatmul) return {F::kMatmul, false};
    return {};
  }
  if (t & kGpuFlashAttention) return {F::kFlashAttention, (t & kGpuBackward) != 0};
  if (t & kGpuConv) return {F::kConv, (t & kGpuBackward) != 0};
  if (t & kGpuGemm) return {F::kMatmul, false};
  return {};
}

}  // namespace

std::string_view compute_class_label(ComputeClass c) { return kLabels[static_cast<std::size_t>(c)]; }

FrameworkOpClass framework_op_class(std::string_view name, bool backward_pass) {
  const std::string n = lower(name);
  const bool backward_name = has_any(n, kBackwardMask);
  if (has_any(n, kFlashAttentionMask)) return {FrameworkOpClass::kFlashAttention, backward_name};
  if (has_any(n, kConvMask)) return {FrameworkOpClass::kConv, backward_name || backward_pass};
  if (has_any(n, kMatmulMask)) return {FrameworkOpClass::kMatmul, false};
  return {};
}

KernelTraits kernel_name_traits(std::string_view name) {
  const std::string n = lower(name);
  KernelTraits t = 0;
  if (has_any(n, kCubeMask) || n.starts_with("cijk_") || has_any(n, kGpuFlashAttentionMask)) t |= kGpuCubeName;
  if (has_any(n, kTransMask)) t |= kNpuTransName;
  if (has_any(n, kGpuTransMask)) t |= kGpuTransName;
  if (n.starts_with("aclnninplacecopy") && n.find("tensormove") != n.npos) t |= kTensorMoveName;
  if (is_any(n, kMc2Kernels)) t |= kMc2;
  if (has_any(n, kGpuFlashAttentionMask)) t |= kGpuFlashAttention;
  if (has_any(n, kGpuConvMask)) t |= kGpuConv;
  if (has_any(n, kGpuGemmMask)) t |= kGpuGemm;
  if (has_any(n, kGpuBackwardMask)) t |= kGpuBackward;
  return t;
}

KernelTraits op_type_traits(std::string_view op_type) {
  const std::string n = lower(op_type);
  KernelTraits t = 0;
  if (n.find("flashattention") != n.npos) t |= kNpuFlashAttention;
  if (n.find("bwd") != n.npos || n.find("grad") != n.npos) t |= kNpuFlashBackward;
  if (n.starts_with("conv")) t |= kNpuConv;
  if (has_any(n, kBackwardMask)) t |= kNpuConvBackward;
  if (n.find("matmul") != n.npos) t |= kNpuMatmul;
  if (n.find("pagedattention") != n.npos) t |= kNpuPagedAttention;
  if (is_any(n, kMc2Kernels)) t |= kMc2;
  return t;
}

ComputeClass compute_class(std::int32_t task_type, KernelTraits t, FrameworkOpClass framework) {
  const bool npu = is(task_type, TaskType::kAiCore) || is(task_type, TaskType::kAiVectorCore) ||
                   is(task_type, TaskType::kMixAiCore) || is(task_type, TaskType::kMixAiVector);
  if (!npu && !is(task_type, TaskType::kKernel)) return ComputeClass::kOther;
  if (npu && (t & kNpuPagedAttention)) return ComputeClass::kPagedAttention;
  if (npu && (t & kTensorMoveName)) return ComputeClass::kSdmaTensorMove;
  if (t & kMc2) return ComputeClass::kMc2;
  const bool cube =
      npu ? is(task_type, TaskType::kAiCore) || is(task_type, TaskType::kMixAiCore) : (t & kGpuCubeName) != 0;
  if (framework.kind != FrameworkOpClass::kNone) return by_framework_op(framework, cube);
  if (const FrameworkOpClass own = by_own_name(t, npu); own.kind != FrameworkOpClass::kNone) {
    return by_framework_op(own, npu || cube);  // msprof-analyze: an NPU's by op type is Cube
  }
  if (cube) return ComputeClass::kCube;
  return (t & (npu ? kNpuTransName : kGpuTransName)) ? ComputeClass::kVectorTrans : ComputeClass::kVectorNoTrans;
}

ComputeClass compute_class(std::int32_t task_type, std::string_view name, std::string_view op_type,
                           FrameworkOpClass framework) {
  return compute_class(task_type, static_cast<KernelTraits>(kernel_name_traits(name) | op_type_traits(op_type)),
                       framework);
}

}  // namespace npuscope::analyzer

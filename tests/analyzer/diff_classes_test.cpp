// Note [Kernel classes] (npuscope/analyzer/diff_classes.h) on the names real profiles hold: the
// 910B job's kernel_details.csv (shared/realdata/ascend_pytorch_profiler), the H100 and MI300X
// Kineto traces of one ViT and one BERT (shared/realdata/kineto/cross_hw), each kernel with the aten
// op that launched it there; and the whole 910B kernel_details.csv against msprof-analyze's own rule.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "../realdata_util.h"
#include "npuscope/analyzer/diff_classes.h"
#include "npuscope/runtime_hooks/vocabulary.h"

using namespace npuscope;
using namespace npuscope::analyzer;
using C = ComputeClass;
using F = FrameworkOpClass;

namespace {

constexpr auto kAiCore = static_cast<std::int32_t>(TaskType::kAiCore);
constexpr auto kAiVector = static_cast<std::int32_t>(TaskType::kAiVectorCore);
constexpr auto kMixAiv = static_cast<std::int32_t>(TaskType::kMixAiVector);
constexpr auto kMixAic = static_cast<std::int32_t>(TaskType::kMixAiCore);
constexpr auto kGpu = static_cast<std::int32_t>(TaskType::kKernel);

// The 910B's kernels: name, op type, unit as kernel_details.csv has them.
C npu(std::int32_t unit, std::string_view name, std::string_view op_type, F framework = {}) {
  return compute_class(unit, name, op_type, framework);
}
C gpu(std::string_view kernel, std::string_view aten_op = "") {
  return compute_class(kGpu, kernel, aten_op, framework_op_class(aten_op));
}

}  // namespace

TEST(DiffClassesTest, FrameworkOpsByMsprofAnalyzesMasks) {
  EXPECT_EQ(framework_op_class("aten::addmm"), (F{F::kMatmul, false}));
  EXPECT_EQ(framework_op_class("aten::mm", true), (F{F::kMatmul, false}));  // a matmul has no backward row
  EXPECT_EQ(framework_op_class("aten::conv2d"), (F{F::kConv, false}));
  EXPECT_EQ(framework_op_class("aten::convolution_backward"), (F{F::kConv, true}));
  EXPECT_EQ(framework_op_class("aten::convolution", true), (F{F::kConv, true}));  // the backward pass
  EXPECT_EQ(framework_op_class("aten::_flash_attention_forward"), (F{F::kFlashAttention, false}));
  EXPECT_EQ(framework_op_class("aten::_scaled_dot_product_efficient_attention_backward"),
            (F{F::kFlashAttention, true}));
  EXPECT_EQ(framework_op_class("npu::npu_fusion_attention_grad"), (F{F::kFlashAttention, true}));
  // torch_npu's CANN-level ops and autograd nodes are not classing ops; an aten op's own name is.
  EXPECT_EQ(framework_op_class("aclnnMm"), F{});
  EXPECT_EQ(framework_op_class("autograd::engine::evaluate_function: AddmmBackward0"), F{});
  EXPECT_EQ(framework_op_class("aten::cudnn_convolution"), F{});  // under aten::conv2d: that one classes
}

TEST(DiffClassesTest, The910BsKernelsByTheirOpType) {
  EXPECT_EQ(npu(kAiCore, "aclnnAddmm_MatMulCommon_MatMulV2", "MatMulV2"), C::kMatmulCube);
  EXPECT_EQ(npu(kAiCore, "aclnnMm_MatMulV3Common_MatMulV3", "MatMulV3"), C::kMatmulCube);
  EXPECT_EQ(npu(kAiCore, "Conv2D1", "Conv2D"), C::kConvForwardCube);
  EXPECT_EQ(npu(kAiCore, "Conv2DBackpropInput5", "Conv2DBackpropInput"), C::kConvBackwardCube);
  EXPECT_EQ(npu(kAiCore, "Conv2DBackpropFilter6", "Conv2DBackpropFilter"), C::kConvBackwardCube);
  EXPECT_EQ(npu(kMixAic, "aclnnFlashAttentionScore_FlashAttentionScore_FlashAttentionScore", "FlashAttentionScore"),
            C::kFlashAttentionForwardCube);
  EXPECT_EQ(npu(kMixAic, "aclnnFlashAttentionScoreGrad_FlashAttentionScoreGrad", "FlashAttentionScoreGrad"),
            C::kFlashAttentionBackwardCube);
  EXPECT_EQ(npu(kMixAic, "PagedAttention", "PagedAttentionMaskNd"), C::kPagedAttention);
  EXPECT_EQ(npu(kAiVector, "trans_TransData_0", "TransData"), C::kVectorTrans);
  EXPECT_EQ(npu(kAiVector, "aclnnTopk_CastAiCore_Cast", "Cast"), C::kVectorTrans);
  EXPECT_EQ(npu(kAiVector, "aclnnAdaptiveAvgPool2d_TransposeAiCore_Transpose", "Transpose"), C::kVectorTrans);
  EXPECT_EQ(npu(kAiVector, "aclnnEqTensor_BroadcastToAiCore_BroadcastTo", "BroadcastTo"), C::kVectorTrans);  // "cast"
  EXPECT_EQ(npu(kAiVector, "aclnnInplaceMuls_MulAiCore_Mul", "Mul"), C::kVectorNoTrans);
  EXPECT_EQ(npu(kMixAiv, "aclnnReduceSum_ReduceSumOpAiCore_ReduceSum", "ReduceSum"), C::kVectorNoTrans);
  EXPECT_EQ(npu(kAiVector, "aclnnInplaceCopy_TensorMoveAiCore_TensorMove", "TensorMove"), C::kSdmaTensorMove);
  EXPECT_EQ(npu(kAiCore, "AllGatherMatmul", "AllGatherMatmul"), C::kMc2);
  EXPECT_EQ(npu(static_cast<std::int32_t>(TaskType::kAiCpu), "Cumsum", "Cumsum"), C::kOther);
  EXPECT_EQ(npu(static_cast<std::int32_t>(TaskType::kHostCpu), "mm", "MatMul"), C::kOther);
}

TEST(DiffClassesTest, TheFrameworkOpComesFirstCubeOrVectorByTheUnit) {
  const F conv = framework_op_class("aten::conv2d");
  const F conv_backward = framework_op_class("aten::convolution_backward");
  const F addmm = framework_op_class("aten::addmm");
  EXPECT_EQ(npu(kAiCore, "Conv2D1", "Conv2D", conv), C::kConvForwardCube);
  EXPECT_EQ(npu(kAiVector, "trans_TransData_0", "TransData", conv), C::kConvForwardVector);
  EXPECT_EQ(npu(kMixAiv, "ReduceSum7", "ReduceSum", conv_backward), C::kConvBackwardVector);  // the bias' gradient
  EXPECT_EQ(npu(kAiVector, "aclnnAdd_AddAiCore_Add", "Add", addmm), C::kMatmulVector);
  // Step 1 before the framework op: a TensorMove is SDMA wherever it ran.
  EXPECT_EQ(npu(kAiVector, "aclnnInplaceCopy_TensorMoveAiCore_TensorMove", "TensorMove", addmm), C::kSdmaTensorMove);
}

TEST(DiffClassesTest, TheH100sAndMi300xsKernelsLineUp) {
  // GEMMs in aten::addmm: cuBLAS, CUTLASS and rocBLAS' Tensile (Cijk_) alike.
  EXPECT_EQ(gpu("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_"
                "off_kernel__5x_cublas",
                "aten::addmm"),
            C::kMatmulCube);
  EXPECT_EQ(gpu("void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_128x64_64x6_tn_align8>("
                "cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_128x64_64x6_tn_align8::Params)",
                "aten::addmm"),
            C::kMatmulCube);
  EXPECT_EQ(
      gpu("Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT64x32x128_MI16x16x1_SN_LDSB1_AFC1_AFEM1", "aten::addmm"),
      C::kMatmulCube);
  // Flash attention: FlashAttention-2 on the H100, the Triton/CK attn_fwd on the MI300X.
  EXPECT_EQ(gpu("void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, false, "
                "false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> "
                ">, false, false, false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)",
                "aten::_flash_attention_forward"),
            C::kFlashAttentionForwardCube);
  EXPECT_EQ(gpu("attn_fwd", "aten::_flash_attention_forward"), C::kFlashAttentionForwardCube);
  // Convolutions (launched in aten::cudnn_convolution / aten::miopen_convolution, inside aten::conv2d):
  // the conv kernel is Cube, the layout kernels around it Vector.
  EXPECT_EQ(gpu("void cutlass__5x_cudnn::Kernel<cutlass_tensorop_bf16_s16816fprop_optimized_bf16_256x64_32x4_nhwc_"
                "align8>(cutlass_tensorop_bf16_s16816fprop_optimized_bf16_256x64_32x4_nhwc_align8::Params)",
                "aten::conv2d"),
            C::kConvForwardCube);
  EXPECT_EQ(
      gpu("igemm_fwd_gtcx3_nhwc_bf16_bx0_ex1_bt64x64x16_wt16x16x4_ws1x1_wr2x2_ta1x1x4x1_1x16x1x16", "aten::conv2d"),
      C::kConvForwardCube);
  EXPECT_EQ(
      gpu("void cudnn::engines_precompiled::nchwToNhwcKernel<__nv_bfloat16, __nv_bfloat16, float, false, true, "
          "(cudnnKernelDataType_t)0>(cudnn::engines_precompiled::nchw2nhwc_params_t<float>, __nv_bfloat16 const*, "
          "__nv_bfloat16*)",
          "aten::conv2d"),
      C::kConvForwardVector);
  EXPECT_EQ(gpu("batched_transpose_256x4_half", "aten::conv2d"), C::kConvForwardVector);
  // The rest: vector work, a transpose or layout kernel Trans; PyTorch's "nocast" is no cast.
  EXPECT_EQ(gpu("void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::"
                "TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const",
                "aten::gelu"),
            C::kVectorNoTrans);
  EXPECT_EQ(gpu("void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::"
                "CUDAFunctor_add<c10::BFloat16> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<c10::"
                "BFloat16> const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast)",
                "aten::add_"),
            C::kVectorNoTrans);
  EXPECT_EQ(gpu("batched_transpose_32x16_half"), C::kVectorTrans);
  EXPECT_EQ(gpu("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, "
                "float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::"
                "BFloat16*)",
                "aten::native_layer_norm"),
            C::kVectorNoTrans);
}

TEST(DiffClassesTest, AGpuKernelOutsideANamedFrameworkOpByItsName) {
  EXPECT_EQ(gpu("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64"), C::kMatmulCube);
  EXPECT_EQ(gpu("Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT16x16x128"), C::kMatmulCube);
  EXPECT_EQ(gpu("void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits>"),
            C::kFlashAttentionBackwardCube);
  EXPECT_EQ(gpu("sm80_xmma_wgrad_implicit_gemm_indexed_bf16bf16_bf16f32_f32_nhwckrsc_nhwc"), C::kConvBackwardCube);
  EXPECT_EQ(gpu("igemm_fwd_gtcx3_nhwc_bf16_bx0_ex1"), C::kConvForwardCube);
  EXPECT_EQ(gpu("void cutlass::Kernel<cutlass_80_tensorop_reduce_kernel>"), C::kCube);  // cube, nothing more said
}

// Every row of the 910B's kernel_details.csv classed by its own op type and unit (no framework op),
// as msprof-analyze classes kernel_details.csv without flows; a row without PMU (DSA, HCCL) is Other.
TEST(DiffClassesTest, The910BsKernelDetailsAsMsprofAnalyzeClassesThem) {
  NPUSCOPE_REALDATA_OR_SKIP(
      csv_path, "ascend_pytorch_profiler/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv");
  const std::map<std::string, std::int32_t> units = {
      {"AI_CORE", kAiCore}, {"AI_VECTOR_CORE", kAiVector}, {"MIX_AIC", kMixAic}, {"MIX_AIV", kMixAiv}};
  std::ifstream in(csv_path);
  std::string line;
  std::getline(in, line);  // Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,...
  std::map<C, int> got;
  while (std::getline(in, line)) {
    std::vector<std::string> f;  // the first 8 columns: no quoted field before Input Shapes
    std::istringstream cells(line);
    for (std::string cell; f.size() < 8 && std::getline(cells, cell, ',');) f.push_back(cell);
    ASSERT_EQ(f.size(), 8u) << line;
    const auto unit = units.find(f[7]);
    ++got[npu(unit != units.end() ? unit->second : static_cast<std::int32_t>(TaskType::kOtherDeviceTask), f[4], f[5])];
  }
  // msprof-analyze's rule run over the same file (kernel_details_bean.py; cube: aicore_time > 0).
  EXPECT_EQ(got, (std::map<C, int>{{C::kConvForwardCube, 5},
                                   {C::kConvBackwardCube, 9},
                                   {C::kMatmulCube, 9},
                                   {C::kVectorTrans, 67},
                                   {C::kVectorNoTrans, 84},
                                   {C::kSdmaTensorMove, 11},
                                   {C::kOther, 6}}));
}

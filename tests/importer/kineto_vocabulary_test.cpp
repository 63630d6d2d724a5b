// The words of a Kineto trace (kineto_vocabulary.h), one function at a time.
#include "../../importer/src/kineto_vocabulary.h"

#include <gtest/gtest.h>

#include "../../importer/src/tensor_lists.h"

namespace npuscope::importer::kineto {
namespace {

std::string dims(std::string_view json) { return input_shapes(json); }
std::string types(std::string_view json) { return input_dtypes(json); }

TEST(KinetoVocabulary, InputDimsAndTypesInNpuscopesForm) {
  EXPECT_EQ(dims("[[1, 141, 512], [], [512]]"), "1,141,512;;512;");
  EXPECT_EQ(dims("[]"), "");
  EXPECT_EQ(dims("[[[2, 3], [4]], [5]]"), "[2,3],[4];5;");  // a tensor list keeps its brackets
  EXPECT_EQ(dims("[[]]"), ";");                             // one 0-dim tensor
  EXPECT_EQ(dims("[[], []]"), ";;");
  EXPECT_EQ(types(R"(["float", "c10::BFloat16", "Scalar", "", "long int", "c10::Half"])"), "f32;bf16;Scalar;;i64;f16;");
  EXPECT_EQ(types(R"([""])"), ";");
  EXPECT_EQ(types("[]"), "");
}

// A GPU op's lists read as an Ascend profile's op's (tensor_lists.h): diff pairs them by shapes.
TEST(KinetoVocabulary, InputListsAreTheSharedForm) {
  EXPECT_EQ(dims("[[32, 3, 224, 224], [64, 3, 11, 11], [64]]"), shape_list("32,3,224,224;64,3,11,11;64"));
  EXPECT_EQ(types(R"(["c10::BFloat16", "float", "long int", "double", "bool"])"),
            dtype_list("DT_BF16;FLOAT;INT64;DOUBLE;BOOL"));
}

TEST(KinetoVocabulary, Categories) {
  EXPECT_EQ(classify("X", "cpu_op", "aten::mm"), EventKind::kHostOp);
  EXPECT_EQ(classify("X", "Operator", "aten::mm"), EventKind::kHostOp);
  EXPECT_EQ(classify("X", "Kernel", "k"), EventKind::kKernel);
  EXPECT_EQ(classify("X", "mtia_ccp_events", "pe_exe"), EventKind::kKernel);
  EXPECT_EQ(classify("X", "gpu_memcpy", "Memcpy HtoD"), EventKind::kMemcpy);
  EXPECT_EQ(classify("X", "Memset", "Memset"), EventKind::kMemset);
  for (const char* cat :
       {"cuda_runtime", "cuda_driver", "Runtime", "privateuse1_runtime", "privateuse1_driver", "mtia_runtime"}) {
    EXPECT_EQ(classify("X", cat, "x"), EventKind::kRuntime) << cat;
  }
  EXPECT_EQ(classify("i", "cpu_instant_event", "[memory]"), EventKind::kMemory);
  EXPECT_EQ(classify("C", "", "Clock"), EventKind::kCounter);
  EXPECT_EQ(classify("X", "python_function", "f"), EventKind::kPythonFunction);
  EXPECT_EQ(classify("s", "ac2g", "ac2g"), EventKind::kOther);
  EXPECT_EQ(classify("X", "gpu_user_annotation", "g"), EventKind::kOther);
}

TEST(KinetoVocabulary, Names) {
  EXPECT_EQ(profiler_step("ProfilerStep#551"), 551);
  EXPECT_FALSE(profiler_step("ProfilerStep#"));
  EXPECT_FALSE(profiler_step("ProfilerStep#x"));
  EXPECT_EQ(kernel_type("void at::native::vectorized_elementwise_kernel<4, at::native::Foo>(int, Bar)"),
            "vectorized_elementwise_kernel");
  EXPECT_EQ(kernel_type("Cijk_Alik_Bljk_B_BS_MT16x16x128"), "Cijk_Alik_Bljk_B_BS_MT16x16x128");
  EXPECT_EQ(kernel_type("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"),
            "ncclKernel_AllReduce_RING_LL_Sum_float");
  EXPECT_EQ(api_kind("cudaLaunchKernel"), ApiKind::kLaunch);
  EXPECT_EQ(api_kind("hipExtModuleLaunchKernel"), ApiKind::kLaunch);
  EXPECT_EQ(api_kind("cudaStreamSynchronize"), ApiKind::kSynchronize);
  EXPECT_EQ(api_kind("cudaMemcpyAsync"), ApiKind::kMemcpyAsync);
  EXPECT_EQ(api_kind("hipMemcpyWithStream"), ApiKind::kMemcpy);
  EXPECT_EQ(api_kind("enqueueCommand memcpyHtoDAsync"), ApiKind::kMemcpyAsync);
  EXPECT_EQ(api_kind("cudaEventRecord"), ApiKind::kEvent);
  EXPECT_EQ(api_kind("cudaStreamIsCapturing"), ApiKind::kOther);
  EXPECT_EQ(collective_kind("allreduce"), CollectiveKind::kAllReduce);
  EXPECT_EQ(collective_kind("_allgather_base"), CollectiveKind::kAllGather);
  EXPECT_EQ(collective_kind("reduce_scatter_tensor_coalesced"), CollectiveKind::kReduceScatter);
  EXPECT_EQ(collective_kind("AllToAll"), CollectiveKind::kAllToAll);
  EXPECT_FALSE(collective_kind("gather"));
  EXPECT_EQ(reduce_op("ncclKernel_AllReduce_RING_LL_Max_float", CollectiveKind::kAllReduce), ReduceOp::kMax);
  EXPECT_EQ(reduce_op("ncclKernel_Broadcast_RING_LL", CollectiveKind::kBroadcast), ReduceOp::kNone);
  EXPECT_EQ(task_type(EventKind::kKernel, "ncclDevKernel_AllGather_RING_LL(x)"), TaskType::kCommunication);
  EXPECT_EQ(task_type(EventKind::kKernel, "rccl_kernel"), TaskType::kCommunication);
  EXPECT_EQ(task_type(EventKind::kKernel, "dma_request"), TaskType::kMemcpy);
  EXPECT_EQ(copy_kind("Memcpy HtoD (Pageable -> Device)", ""), static_cast<std::int32_t>(CopyKind::kHostToDevice));
  EXPECT_EQ(copy_kind("dma_request", "DEVICE_TO_HOST"), static_cast<std::int32_t>(CopyKind::kDeviceToHost));
  EXPECT_EQ(torch_dtype("c10::BFloat16"), DType::kBF16);
  EXPECT_TRUE(is_vendor_op("aten::cudnn_convolution"));
  EXPECT_TRUE(is_vendor_op("aten::miopen_batch_norm"));
  EXPECT_TRUE(is_vendor_op("aten::_cudnn_rnn"));
  EXPECT_FALSE(is_vendor_op("aten::convolution"));
  std::vector<std::int64_t> v;
  EXPECT_TRUE(for_each_int("[8, 1, -1]", [&](std::int64_t x) { v.push_back(x); }));
  EXPECT_EQ(v, (std::vector<std::int64_t>{8, 1, -1}));
  EXPECT_FALSE(for_each_int("[1, x]", [](std::int64_t) {}));
  EXPECT_FALSE(for_each_int("7", [](std::int64_t) {}));
}

}  // namespace
}  // namespace npuscope::importer::kineto

// Ascend's names in npuscope's vocabulary (ascend_names.h).
#include "ascend_names.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace npuscope::importer {
namespace {

template <class T>
struct Named {
  std::string_view name;
  T value;
};

template <class T, std::size_t N>
std::optional<T> lookup(const Named<T> (&table)[N], std::string_view name) {
  for (const Named<T>& e : table) {
    if (e.name == name) return e.value;
  }
  return std::nullopt;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

constexpr Named<TaskType> kCoreTypes[] = {
    {"AI_CORE", TaskType::kAiCore},       {"AI_VECTOR_CORE", TaskType::kAiVectorCore},
    {"AIV", TaskType::kAiVectorCore},     {"AI_CPU", TaskType::kAiCpu},
    {"MIX_AIC", TaskType::kMixAiCore},    {"MIX_AIV", TaskType::kMixAiVector},
    {"HCCL", TaskType::kCommunication},   {"COMMUNICATION", TaskType::kCommunication},
};

constexpr Named<TaskType> kHardwareTypes[] = {
    {"KERNEL_AICORE", TaskType::kAiCore},
    {"AI_CORE", TaskType::kAiCore},
    {"KERNEL_AIVEC", TaskType::kAiVectorCore},
    {"AI_VECTOR_CORE", TaskType::kAiVectorCore},
    {"KERNEL_AICPU", TaskType::kAiCpu},
    {"AI_CPU", TaskType::kAiCpu},
    {"KERNEL_MIX_AIC", TaskType::kMixAiCore},
    {"MIX_AIC", TaskType::kMixAiCore},
    {"KERNEL_MIX_AIV", TaskType::kMixAiVector},
    {"MIX_AIV", TaskType::kMixAiVector},
    {"MEMCPY_ASYNC", TaskType::kMemcpy},
    {"MEMCPY", TaskType::kMemcpy},
    {"SDMA", TaskType::kMemcpy},
    {"SDMA_SQE", TaskType::kMemcpy},
    {"PCIE_DMA_SQE", TaskType::kMemcpy},
    {"MEMSET", TaskType::kMemset},
    {"EVENT_RECORD", TaskType::kEventRecord},
    {"EVENT_RECORD_SQE", TaskType::kEventRecord},
    {"EVENT_WAIT", TaskType::kEventWait},
    {"EVENT_WAIT_SQE", TaskType::kEventWait},
};

constexpr Named<CollectiveKind> kCollectives[] = {
    {"allreduce", CollectiveKind::kAllReduce},         {"allgather", CollectiveKind::kAllGather},
    {"allgatherv", CollectiveKind::kAllGather},        {"reducescatter", CollectiveKind::kReduceScatter},
    {"reducescatterv", CollectiveKind::kReduceScatter}, {"broadcast", CollectiveKind::kBroadcast},
    {"alltoall", CollectiveKind::kAllToAll},           {"alltoallv", CollectiveKind::kAllToAll},
    {"alltoallvc", CollectiveKind::kAllToAll},         {"send", CollectiveKind::kSend},
    {"receive", CollectiveKind::kRecv},                {"recv", CollectiveKind::kRecv},
    {"barrier", CollectiveKind::kBarrier},
};

constexpr Named<HcclDataType> kDataTypes[] = {
    {"FP32", {DType::kF32, 4}},  {"FP16", {DType::kF16, 2}},   {"BFP16", {DType::kBF16, 2}},
    {"BF16", {DType::kBF16, 2}}, {"INT8", {DType::kI8, 1}},    {"UINT8", {DType::kU8, 1}},
    {"INT32", {DType::kI32, 4}}, {"INT64", {DType::kI64, 8}},  {"FP64", {DType::kF64, 8}},
    {"INT16", {std::nullopt, 2}}, {"UINT16", {std::nullopt, 2}}, {"UINT32", {std::nullopt, 4}},
    {"UINT64", {std::nullopt, 8}}, {"INT128", {std::nullopt, 16}}, {"HIF8", {std::nullopt, 1}},
    {"FP8E4M3", {std::nullopt, 1}}, {"FP8E5M2", {std::nullopt, 1}}, {"FP8E8M0", {std::nullopt, 1}},
};

}  // namespace

TaskType ascend_task_type(std::string_view core, std::string_view hw) {
  if (const auto t = lookup(kCoreTypes, core)) return *t;
  if (const auto t = lookup(kHardwareTypes, hw)) return *t;
  return TaskType::kOtherDeviceTask;
}

ApiKind cann_api_kind(std::string_view name) {
  if (name.starts_with("aclnn") || name == "launch" || name.starts_with("aclopCompileAndExecute") ||
      name.starts_with("aclopExecute") || name.starts_with("rtKernelLaunch") || name.starts_with("aclrtLaunchKernel")) {
    return ApiKind::kLaunch;
  }
  if (name.starts_with("aclrtSynchronize") || name == "aclrtStreamSynchronize" || name.starts_with("rtStreamSynchronize") ||
      name.starts_with("rtDeviceSynchronize") || name.starts_with("rtEventSynchronize")) {
    return ApiKind::kSynchronize;
  }
  if (name == "aclrtMemcpy" || name == "aclrtMemcpy2d" || name == "rtMemcpy") return ApiKind::kMemcpy;
  if (name.starts_with("aclrtMemcpyAsync") || name == "aclrtMemcpy2dAsync" || name.starts_with("rtMemcpyAsync")) {
    return ApiKind::kMemcpyAsync;
  }
  if (name.starts_with("aclrtMalloc") || name.starts_with("rtMalloc")) return ApiKind::kMalloc;
  if (name.starts_with("aclrtFree") || name.starts_with("rtFree")) return ApiKind::kFree;
  if (name == "aclrtRecordEvent" || name == "aclrtStreamWaitEvent" || name == "rtEventRecord" ||
      name == "rtStreamWaitEvent") {
    return ApiKind::kEvent;
  }
  return ApiKind::kOther;
}

std::optional<CollectiveKind> hccl_collective_kind(std::string_view op) {
  // hcom_allReduce__210_0_1, hcom_allReduce_, HcclAllReduce, allreduce
  std::string_view word = op;
  if (word.starts_with("hcom_")) {
    word.remove_prefix(5);
    word = word.substr(0, word.find('_'));
  } else if (word.starts_with("Hccl")) {
    word.remove_prefix(4);
  }
  return lookup(kCollectives, lower(word));
}

CollectiveAlgorithm hccl_algorithm(std::string_view alg, CollectiveKind kind) {
  if (kind == CollectiveKind::kSend || kind == CollectiveKind::kRecv) return CollectiveAlgorithm::kPointToPoint;
  const std::string name = lower(alg);
  if (name.starts_with("h-d")) return CollectiveAlgorithm::kHalvingDoubling;
  const std::string first = name.substr(0, name.find('-'));
  if (first == "mesh" || first == "fullmesh") return CollectiveAlgorithm::kFullMesh;
  if (first == "hd" || first == "nhr" || first == "nb") return CollectiveAlgorithm::kHalvingDoubling;
  if (first == "pairwise") return CollectiveAlgorithm::kPairwise;
  return CollectiveAlgorithm::kRing;
}

HcclDataType hccl_data_type(std::string_view name) { return lookup(kDataTypes, name).value_or(HcclDataType{}); }

LinkTransport hccl_link_transport(bool to_itself, std::string_view transport, std::string_view link) {
  if (to_itself || transport == "LOCAL") return LinkTransport::kLocal;
  if (transport == "RDMA" || transport == "ROCE" || link == "ROCE" || link == "STANDARD_ROCE") return LinkTransport::kRdma;
  if (link == "PCIE") return LinkTransport::kPcie;
  return LinkTransport::kHccs;
}

}  // namespace npuscope::importer

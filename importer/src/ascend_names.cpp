#include "ascend_names.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <utility>

namespace npuscope::importer {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool contains(std::string_view hay, std::string_view needle) { return hay.find(needle) != std::string_view::npos; }

}  // namespace

TaskType ascend_task_type(std::string_view t) {
  static constexpr std::array<std::pair<std::string_view, TaskType>, 27> kTypes{{
      {"AI_CORE", TaskType::kAiCore},
      {"KERNEL_AICORE", TaskType::kAiCore},
      {"AI_VECTOR_CORE", TaskType::kAiVectorCore},
      {"KERNEL_AIVEC", TaskType::kAiVectorCore},
      {"AIV", TaskType::kAiVectorCore},
      {"AI_CPU", TaskType::kAiCpu},
      {"KERNEL_AICPU", TaskType::kAiCpu},
      {"AICPU", TaskType::kAiCpu},
      {"MIX_AIC", TaskType::kMixAiCore},
      {"MIX_AIV", TaskType::kMixAiVector},
      {"DSA_SQE", TaskType::kDsa},
      {"HCCL", TaskType::kCommunication},
      {"COMMUNICATION", TaskType::kCommunication},
      {"MEMCPY_ASYNC", TaskType::kMemcpy},
      {"PCIE_DMA_SQE", TaskType::kMemcpy},
      {"SDMA_SQE", TaskType::kMemcpy},
      {"MEMCPY", TaskType::kMemcpy},
      {"EVENT_RECORD_SQE", TaskType::kEventRecord},
      {"EVENT_RECORD", TaskType::kEventRecord},
      {"EVENT_WAIT_SQE", TaskType::kEventWait},
      {"EVENT_WAIT", TaskType::kEventWait},
      {"MEMSET", TaskType::kMemset},
      {"MEMSET_SQE", TaskType::kMemset},
      {"Notify Wait", TaskType::kCommunicationTask},
      {"Notify Record", TaskType::kCommunicationTask},
      {"Write Value", TaskType::kCommunicationTask},
      {"SDMA", TaskType::kCommunicationTask},
  }};
  for (const auto& [name, type] : kTypes) {
    if (name == t) return type;
  }
  if (is_hccl_link_task_type(t)) return TaskType::kCommunicationTask;
  return TaskType::kOtherDeviceTask;
}

bool is_hccl_link_task_type(std::string_view t) {
  static constexpr std::array<std::string_view, 14> kLink{
      "Notify Wait",   "Notify Record", "Notify_Wait", "Notify_Record", "Write Value",   "SDMA",        "RDMA",
      "Reduce_Inline", "Memcpy",        "RDMASend",    "Reduce Inline", "Inline Reduce", "Write_Value", "Local_Copy"};
  return std::find(kLink.begin(), kLink.end(), t) != kLink.end();
}

std::optional<DType> hccl_dtype(std::string_view name) {
  const std::string n = lower(name);
  if (n == "fp32" || n == "float" || n == "float32") return DType::kF32;
  if (n == "fp16" || n == "float16" || n == "half") return DType::kF16;
  if (n == "bf16" || n == "bfloat16") return DType::kBF16;
  if (n == "int8") return DType::kI8;
  if (n == "uint8") return DType::kU8;
  if (n == "int32") return DType::kI32;
  if (n == "int64") return DType::kI64;
  if (n == "fp64" || n == "float64" || n == "double") return DType::kF64;
  return std::nullopt;
}

std::optional<CollectiveKind> hccl_collective_kind(std::string_view op_name) {
  const std::string n = lower(op_name);
  if (contains(n, "allreduce")) return CollectiveKind::kAllReduce;
  if (contains(n, "allgather")) return CollectiveKind::kAllGather;
  if (contains(n, "reducescatter") || contains(n, "reduce_scatter")) return CollectiveKind::kReduceScatter;
  if (contains(n, "broadcast")) return CollectiveKind::kBroadcast;
  if (contains(n, "alltoall")) return CollectiveKind::kAllToAll;
  if (contains(n, "barrier")) return CollectiveKind::kBarrier;
  if (contains(n, "send")) return CollectiveKind::kSend;
  if (contains(n, "receive") || contains(n, "recv")) return CollectiveKind::kRecv;
  return std::nullopt;
}

std::optional<CollectiveAlgorithm> hccl_algorithm(std::string_view alg_type) {
  std::string first = lower(alg_type.substr(0, alg_type.find('-')));
  if (first == "mesh" || first == "fullmesh") return CollectiveAlgorithm::kFullMesh;
  if (first == "ring" || first == "nhr" || first == "nhr_v1" || first == "dbring") return CollectiveAlgorithm::kRing;
  if (first == "hd" || first == "rhd" || first == "h" || first == "nb") return CollectiveAlgorithm::kHalvingDoubling;
  if (first == "pairwise") return CollectiveAlgorithm::kPairwise;
  return std::nullopt;
}

LinkTransport hccl_transport(std::string_view link_type, std::string_view transport_type, bool to_self) {
  if (to_self) return LinkTransport::kLocal;
  const std::string l = lower(link_type);
  if (l == "on_chip") return LinkTransport::kLocal;
  if (l == "hccs" || l == "hccs_sw" || l == "sio") return LinkTransport::kHccs;
  if (l == "pcie") return LinkTransport::kPcie;
  if (l == "roce" || l == "standard_roce" || l == "rdma") return LinkTransport::kRdma;
  const std::string t = lower(transport_type);
  if (t == "rdma") return LinkTransport::kRdma;
  if (t == "local") return LinkTransport::kLocal;
  return LinkTransport::kHccs;  // SDMA between two devices: inside the server
}

std::string_view hccl_op_type(std::string_view name) {
  for (;;) {
    const std::size_t u = name.rfind('_');
    if (u == std::string_view::npos || u + 1 == name.size()) return name;
    const std::string_view tail = name.substr(u + 1);
    if (!std::all_of(tail.begin(), tail.end(), [](char c) { return c >= '0' && c <= '9'; })) return name;
    name = name.substr(0, u);
  }
}

std::optional<std::int32_t> hccl_sequence(std::string_view name) {
  const std::string_view type = hccl_op_type(name);
  if (type.size() >= name.size()) return std::nullopt;
  std::array<std::int32_t, 3> groups{};
  std::size_t n = 0;
  std::string_view rest = name.substr(type.size());
  while (!rest.empty()) {
    if (rest.front() != '_' || n == groups.size()) return std::nullopt;
    rest.remove_prefix(1);
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), groups[n++]);
    if (ec != std::errc()) return std::nullopt;
    rest.remove_prefix(static_cast<std::size_t>(end - rest.data()));
  }
  if (n != groups.size()) return std::nullopt;
  return groups[1];
}

CopyKind ascend_copy_kind(std::string_view operation) {
  const std::string o = lower(operation);
  if (o == "host to device" || o == "host to device ex") return CopyKind::kHostToDevice;
  if (o == "device to host" || o == "device to host ex") return CopyKind::kDeviceToHost;
  if (o == "device to device" || o == "addr device to device") return CopyKind::kDeviceToDevice;
  if (o == "host to host") return CopyKind::kHostToHost;
  return CopyKind::kUnknown;
}

ApiKind cann_api_kind(std::string_view name) {
  const std::string_view call = name.substr(name.find('@') == std::string_view::npos ? 0 : name.find('@') + 1);
  const std::string n = lower(call);
  if (contains(n, "synchronize")) return ApiKind::kSynchronize;
  if (contains(n, "memcpyasync")) return ApiKind::kMemcpyAsync;
  if (contains(n, "memcpy")) return ApiKind::kMemcpy;
  if (contains(n, "malloc")) return ApiKind::kMalloc;
  if (contains(n, "free")) return ApiKind::kFree;
  if (contains(n, "event")) return ApiKind::kEvent;
  if (n.starts_with("aclnn") || n == "launch" || contains(n, "launch") || n.starts_with("aclopcompileandexecute")) {
    return ApiKind::kLaunch;
  }
  return ApiKind::kOther;
}

std::string_view op_memory_name(std::string_view name) {
  constexpr std::string_view kCann = "cann::";
  return name.starts_with(kCann) ? name.substr(kCann.size()) : name;
}

std::string pmu_metric_name(std::string_view column) {
  std::string n(column);
  if (n.ends_with("(us)")) n.resize(n.size() - 4);
  if (n == "aicore_time") return "aic_total_time";
  if (n == "aiv_time") return "aiv_total_time";
  return n;
}

}  // namespace npuscope::importer

namespace npuscope::importer {

std::optional<DType> hccl_enum_dtype(std::string_view name) {
  if (name == "BFP16") return DType::kBF16;
  return hccl_dtype(name);
}

}  // namespace npuscope::importer

// The names Ascend's tools write (msprof, torch_npu's profiler, HCCL), mapped into npuscope's
// vocabulary (runtime_hooks vocabulary.h), once for every importer of their outputs: the db
// exports, the text export (trace_view.json, kernel_details.csv) and msprof's folders name task
// types, API calls, collectives and transports the same way.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "npuscope/collector/trace_rows.h"

namespace npuscope::importer {

// The task type of a device task. `core` is the accelerator the op ran on, when the source says it
// (COMPUTE_TASK_INFO.taskType, kernel_details' Accelerator Core, op_summary's Task Type: AI_CORE,
// AI_VECTOR_CORE, MIX_AIC, MIX_AIV, AI_CPU, HCCL); `hw` the hardware task type (TASK.taskType,
// trace_view's Task Type: KERNEL_AICORE, KERNEL_AIVEC, MEMCPY_ASYNC, EVENT_RECORD, STARS_COMMON,
// ...). `core` decides when it is one of those; a task nothing names is OTHER.
TaskType ascend_task_type(std::string_view core, std::string_view hw);

// What a CANN API call does, from its name (aclnnAdd, launch, aclrtSynchronizeStream, ...).
ApiKind cann_api_kind(std::string_view name);

// An HCCL collective from its op type or name (hcom_allReduce_, hcom_allReduce__210_0_1,
// HcclAllGather, ...); nullopt for one npuscope has no kind for (hcom_reduce_, hcom_scatter_).
std::optional<CollectiveKind> hccl_collective_kind(std::string_view op);
// HCCL's algorithm (algType "MESH-RING", "HD-MESH", "RING": the first phase, inside a server).
CollectiveAlgorithm hccl_algorithm(std::string_view alg, CollectiveKind kind);

// An HCCL data type (ENUM_HCCL_DATA_TYPE's names: FP32, FP16, BFP16, INT8, ...): npuscope's dtype
// where it has one, and its size in bytes (0 unknown).
struct HcclDataType {
  std::optional<DType> dtype;
  int bytes = 0;
};
HcclDataType hccl_data_type(std::string_view name);

// The link of a transfer between two ranks, as msprof-analyze's communication matrix names it:
// LOCAL (to itself), RDMA (transport RDMA or a RoCE link), PCIE, else HCCS.
LinkTransport hccl_link_transport(bool to_itself, std::string_view transport, std::string_view link);

}  // namespace npuscope::importer

// What the Ascend tools' names mean in npuscope's vocabulary: task types (trace_view's Task Type,
// kernel_details' Accelerator Core, op_summary's Task Type), HCCL's data types, collectives,
// algorithms and links, CANN API names. Shared by the text, msprof-folder and db importers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "npuscope/collector/trace_rows.h"

namespace npuscope::importer {

// AI_CORE, KERNEL_AIVEC, MIX_AIV, AI_CPU, DSA_SQE, HCCL, MEMCPY_ASYNC, PCIE_DMA_SQE, EVENT_RECORD_SQE,
// Notify Wait, SDMA, ...: the task type; OTHER for one that is no op (PLACE_HOLDER_SQE, STARS_COMMON).
TaskType ascend_task_type(std::string_view name);
// A link-level task of a collective as the device stream shows it (Notify Wait, Write Value, SDMA, ...).
bool is_hccl_link_task_type(std::string_view name);

// HCCL's data type names (FP32, FLOAT16, BF16, INT8, ...): dtype and element size; nullopt unknown.
std::optional<DType> hccl_dtype(std::string_view name);
// The collective an HCCL op name is (hcom_allReduce__586_0_1, HcclAllGather, ...); nullopt unknown.
std::optional<CollectiveKind> hccl_collective_kind(std::string_view op_name);
// The first level of HCCL's alg_type (MESH-RING: the server's mesh); nullopt unknown.
std::optional<CollectiveAlgorithm> hccl_algorithm(std::string_view alg_type);
// The link of a transfer: from its link type (ON_CHIP, HCCS, PCIE, ROCE, SIO, ...), else its
// transport type (SDMA, RDMA, LOCAL); a rank to itself is LOCAL.
LinkTransport hccl_transport(std::string_view link_type, std::string_view transport_type, bool to_self);
// The op type of an HCCL op instance: its name without the trailing `_<n>` groups
// (hcom_allReduce__586_0_1 -> hcom_allReduce_, as kernel_details' Type says).
std::string_view hccl_op_type(std::string_view op_name);

// The index on its communicator an HCCL op's name holds, the same on every member:
// hcom_allReduce__210_3_1 -> 3 (nullopt for a name without one).
std::optional<std::int32_t> hccl_sequence(std::string_view op_name);

// A copy's direction as msprof names it (MEMCPY_ASYNC's `operation`, ENUM_MEMCPY_OPERATION, the
// older timeline's `memcpy direction`): host to device (ex), device to host (ex), (addr) device to
// device, host to host; kUnknown for managed memory, other.
CopyKind ascend_copy_kind(std::string_view operation);

// What a CANN API call does, from its name (AscendCL@aclrtMemcpyAsync, Node@launch, ...).
ApiKind cann_api_kind(std::string_view name);

// The op an operator_memory row names, as the db export names it: newer torch_npu text exports write
// GE's ops as `cann::Conv2D1`, its db export and msprof as `Conv2D1` (the kernel's own name).
std::string_view op_memory_name(std::string_view name);

// A kernel_details / op_summary PMU column as TASK_PMU names it, the db export's TASK_PMU_INFO names:
// "(us)" dropped, aicore_time(us) -> aic_total_time, aiv_time(us) -> aiv_total_time; other units kept.
std::string pmu_metric_name(std::string_view column);

}  // namespace npuscope::importer

namespace npuscope::importer {

// hccl_dtype, and the names only ENUM_HCCL_DATA_TYPE of the db exports writes (BFP16, INT128: nullopt).
std::optional<DType> hccl_enum_dtype(std::string_view name);

}  // namespace npuscope::importer

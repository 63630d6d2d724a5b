// The layer of the software stack a host API call belongs to (API.level), as each tool names it:
// msprof's ENUM_API_TYPE and trace_view's `level` argument, Kineto's categories.
#pragma once

#include <string_view>

#include "npuscope/collector/trace_rows.h"

namespace npuscope::importer {

// CANN's layer from its name (ENUM_API_TYPE, trace_view's `level`: acl, model, node, hccl, runtime),
// else from the call's name (`AscendCL@aclrtMemcpyAsync`, `Node@launch`, `Hccl@HcclAllReduce`, as
// msprof's timelines without a level write it); kUnknown when neither says (PYTORCH_API's op,
// queue, trace and mstx types are no CANN layer).
ApiLevel cann_api_level(std::string_view level, std::string_view call_name = {});
// A Kineto runtime event's layer from its category: `cuda_runtime`, `privateuse1_runtime`,
// `mtia_runtime`, PyTorch <= 1.9's `Runtime` -> runtime; `cuda_driver`, `Driver` -> driver.
ApiLevel kineto_api_level(std::string_view category);

}  // namespace npuscope::importer

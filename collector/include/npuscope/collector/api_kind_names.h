// What a host runtime call does (API.kind), from its name, for calls a real profile recorded
// (CANN's aclrt* and the runtime's rt*, CUDA's cuda*, ROCm's hip*): an importer sets API.kind with
// it, and the analyzer reads a call an importer left at kOther through it (a synchronization blocks
// the host; the idle analysis charges the device's wait to it).
#pragma once

#include <string_view>

#include "npuscope/runtime_hooks/vocabulary.h"

namespace npuscope::collector {

// kOther for a name it does not know.
constexpr ApiKind api_kind_of_name(std::string_view name) {
  const auto ends = [&](std::string_view s) { return name.ends_with(s); };
  if (name.find("Synchronize") != std::string_view::npos) return ApiKind::kSynchronize;  // *SynchronizeStream ...
  if (ends("MemcpyAsync") || ends("MemcpyHtoDAsync") || ends("MemcpyDtoHAsync") || ends("MemcpyDtoDAsync"))
    return ApiKind::kMemcpyAsync;
  if (ends("aclrtMemcpy") || ends("cudaMemcpy") || ends("hipMemcpy") || ends("cuMemcpy")) return ApiKind::kMemcpy;
  if (name.starts_with("aclnn") || ends("LaunchKernel") || ends("LaunchKernelExC") || name == "cuLaunchKernel" ||
      name == "cuLaunchKernelEx" || name == "hipExtModuleLaunchKernel" || name == "hipModuleLaunchKernel")
    return ApiKind::kLaunch;
  if (ends("aclrtMalloc") || ends("cudaMalloc") || ends("hipMalloc")) return ApiKind::kMalloc;
  if (ends("aclrtFree") || ends("cudaFree") || ends("hipFree")) return ApiKind::kFree;
  if (ends("RecordEvent") || ends("StreamWaitEvent") || ends("EventRecord")) return ApiKind::kEvent;
  return ApiKind::kOther;
}

}  // namespace npuscope::collector

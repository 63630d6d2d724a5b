// The one symbol the MPI module exports, declared for the module and its loader (Note [Tools over
// MPI] in npuscope/tool_scaleout/processes.h).
#pragma once

#include "npuscope/tool_scaleout/processes.h"

// Joins MPI_COMM_WORLD (MPI_Init on the command's arguments) and returns this process's Processes.
// Throws ScaleoutError when MPI fails. The version in the name changes with Processes or this
// signature: a module of another version is refused at dlsym, never called.
extern "C" __attribute__((visibility("default"))) npuscope::tool_scaleout::Processes* npuscope_tool_scaleout_join_v1(
    int* argc, char*** argv);

namespace npuscope::tool_scaleout {

using ModuleEntry = decltype(&npuscope_tool_scaleout_join_v1);
inline constexpr const char* kModuleEntry = "npuscope_tool_scaleout_join_v1";  // for dlsym

}  // namespace npuscope::tool_scaleout

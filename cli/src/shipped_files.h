// The files npuscope ships beside itself and finds at run time: the injection library (`npuscope
// run`), the npuscope-viewer program (`npuscope view`), the tools' MPI module (a command started
// by mpirun with others: Note [Tools over MPI] in npuscope/tool_scaleout/processes.h) and the
// emulator commands' module (exec, compare, calibrate: Note [Commands that load the emulator] in
// cli/src/common/emulator_commands.h).
//
// Each is looked for in this order:
//   1. the environment variable that names it, as given;
//   2. where `cmake --install` puts it, relative to this binary (bin/npuscope ->
//      lib/npuscope/libnpuscope_inject.so, lib/npuscope/libnpuscope_tool_scaleout_mpi.so,
//      lib/npuscope/libnpuscope_emulator_commands.so, bin/npuscope-viewer);
//   3. where this build put it (build/runtime_hooks/src/inject, build/viewer, build/tool_scaleout,
//      build/cli).
// The installed copy comes before the build tree's: an installed npuscope must not load a build
// tree's file. Each throws std::runtime_error, saying what to install or build, when none is there.
#pragma once

#include <string>

namespace npuscope::cli {

// $NPUSCOPE_INJECTION_LIBRARY (a path, or a name dlopen searches), or the library's path.
std::string injection_library();

// $NPUSCOPE_VIEWER (which must be a program this process may run), or the program's path.
std::string viewer_program();

// $NPUSCOPE_MPI_MODULE (a path, or a name dlopen searches), or the module's path.
std::string mpi_module();

// $NPUSCOPE_EMULATOR_COMMANDS_MODULE (a path, or a name dlopen searches), or the module's path.
std::string emulator_commands_module();

}  // namespace npuscope::cli

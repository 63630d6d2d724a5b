// The tools' scale-out: a tool's work split over the processes an MPI launcher started, e.g.
// `mpirun -np 4 npuscope cluster DIR` has each process analyse its share of the rank traces and
// gathers the results on rank 0. Not the workload transport (comm/: MPI carrying a C++ workload's
// collectives between its ranks).
//
// Note [Tools over MPI]
// A tool joins MPI only when an MPI launcher started it with more than one process
// (launched_over_mpi(): the launcher's variables, Note [Launcher environment] in
// npuscope/runtime_hooks/launcher_env.h); run alone it never touches MPI and works on threads. The
// processes exchange bytes (each tool serializes its own partial results): gather() brings every
// process's string to rank 0, in rank order, which merges them and alone prints. No device and no
// emulator are involved.
//
// MPI itself lives in a module, libnpuscope_tool_scaleout_mpi.so (the one part of the tools that
// links libmpi; installed beside the injection library, in lib/npuscope/), which join_over_mpi()
// loads with dlopen. The npuscope program links no MPI library, so that every other command, and
// every command run alone, neither loads OpenMPI (libmpi and the six libraries it brings:
// libopen-rte, libopen-pal, hwloc, libevent's two, libudev) nor needs it installed. The interface
// below has no MPI type: the module implements Processes; the program sees rank, size and gather.
//
// Why a module and not a program of its own (an `npuscope-cluster-mpi` that mpirun would start):
// the module is MPI's glue only (~80 lines), and the command stays one code path, with one set of
// flags and one report writer; a program of its own would repeat the cluster command (flags,
// analysis, output) or split the CLI into libraries, for each command that ever runs over MPI.
//
// The module is built with the program, from the same tree, by the same compiler: it exports one
// C symbol (kModuleEntry in src/module_entry.h), whose name carries the interface's version; a
// module of another version has no such symbol and is refused with what to do. It stays loaded
// until the process exits (never dlclose'd: OpenMPI leaves handlers and threads behind that must
// not outlive its code).
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace npuscope::tool_scaleout {

// The module cannot be loaded, or MPI fails; the message says what to do.
class ScaleoutError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The processes of one job, joined over MPI. Destroying it finalizes MPI.
class Processes {
 public:
  virtual ~Processes() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Collective: on rank 0 every process's `mine`, in rank order; elsewhere an empty vector.
  // Throws ScaleoutError when MPI fails or the total passes 2 GiB.
  virtual std::vector<std::string> gather(const std::string& mine) = 0;
};

// Whether an MPI launcher (mpirun, Hydra, srun) started this process with others. torchrun's
// processes are not MPI's, and a launcher's single process works alone.
bool launched_over_mpi();

// Loads the MPI module at `module` (a path, or a name dlopen searches) and joins the launcher's
// processes over MPI (MPI_Init with the command's arguments). Throws ScaleoutError naming the
// module and what to do when it cannot be loaded or is of another version, or when MPI fails.
std::unique_ptr<Processes> join_over_mpi(const std::string& module, int* argc, char*** argv);

}  // namespace npuscope::tool_scaleout

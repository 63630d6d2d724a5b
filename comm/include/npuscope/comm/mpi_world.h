// The job's world over MPI, for C++ workloads launched with `mpirun -np N`.
//
// Note [MPI world]
// A program makes one MpiWorld at the top of main(). It initializes MPI with MPI_THREAD_MULTIPLE
// unless the program already did (then it checks the level: collectives run on a device's worker
// thread while the program's own thread may call MPI at the same time), reads rank and size from
// MPI_COMM_WORLD, places the rank on an emulated server (node = rank / ranks_per_node, from
// NPUSCOPE_RANKS_PER_NODE or the device spec), announces the rank to the profiler (which makes the
// trace this rank's), and builds the world communicator ("hccl_world_group", as HCCL names it) over
// a duplicate of MPI_COMM_WORLD, so that the program's own MPI traffic never meets ours.
// new_group() is collective over the listed ranks only (MPI_Comm_create_group), as
// torch.distributed.new_group's members are. The destructor waits for every device (a collective
// still queued needs MPI), frees the communicators and finalizes MPI if it initialized it.
//
// Collectives carry a header before the data (Note [Collectives in virtual time]), so a rank that
// calls another collective than its peers fails with a kernel fault naming both instead of hanging
// or mixing up the data. A rank that never calls a collective its peers wait in still hangs the job,
// as with HCCL and NCCL: MPI has no timeout to give.
#pragma once

#include <memory>
#include <vector>

#include "npuscope/emulator/collectives.h"

namespace npuscope::comm {

class MpiWorld {
 public:
  // Collective over MPI_COMM_WORLD. `ranks_per_node` 0: NPUSCOPE_RANKS_PER_NODE, else the spec
  // NPUSCOPE_SPEC names (a program that picks its spec by flag passes that spec's). It creates no
  // device: a program may configure its runtime afterwards, knowing its rank. Throws
  // emulator::CommError when MPI cannot give MPI_THREAD_MULTIPLE or a second MpiWorld is made in one
  // process, emulator::InvalidArgument for a bad NPUSCOPE_RANKS_PER_NODE or HCCL_ALGO.
  MpiWorld(int* argc, char*** argv, int ranks_per_node = 0,
           emulator::AlgorithmChoice algorithms = emulator::AlgorithmChoice::from_environment());
  ~MpiWorld();
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  int rank() const { return info_.rank; }
  int size() const { return info_.world_size; }
  int node() const { return info_.node; }
  int local_rank() const { return info_.local_rank; }
  int ranks_per_node() const { return ranks_per_node_; }
  emulator::Communicator& world() { return *world_; }

  // A communicator of the listed world ranks (in this order), named "group_<r0>_<r1>_...".
  // Collective over those ranks only; the caller must be one of them (InvalidArgument otherwise,
  // and for a rank outside the world or listed twice).
  std::shared_ptr<emulator::Communicator> new_group(const std::vector<int>& world_ranks);

 private:
  emulator::RankInfo info_;
  int ranks_per_node_ = 1;
  bool initialized_mpi_ = false;
  emulator::AlgorithmChoice algorithms_;
  std::shared_ptr<emulator::Communicator> world_;
};

}  // namespace npuscope::comm

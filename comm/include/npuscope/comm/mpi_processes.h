// Work split over MPI processes, for tools rather than workloads: `mpirun -np 4 npuscope cluster DIR`
// has each process analyse its share of the rank traces and gathers the results on rank 0.
//
// Note [Tools over MPI]
// A tool joins MPI only when an MPI launcher started it with more than one process (the launcher's
// variables: Note [Launcher environment] in npuscope/runtime_hooks/launcher_env.h); run alone it
// never initializes MPI and works on threads. The processes exchange bytes (each tool serializes its
// own partial results): gather() brings every process's string to rank 0, in rank order, which merges
// them and alone prints. No device and no emulator are involved.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace npuscope::comm {

class MpiProcesses {
 public:
  // MPI initialized over the launcher's processes, or nullptr when this process runs alone.
  // Throws emulator::CommError when MPI fails to start.
  static std::unique_ptr<MpiProcesses> join_if_launched(int* argc, char*** argv);
  ~MpiProcesses();  // finalizes MPI
  MpiProcesses(const MpiProcesses&) = delete;
  MpiProcesses& operator=(const MpiProcesses&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // Collective: on rank 0 every process's `mine`, in rank order; elsewhere an empty vector.
  // Throws emulator::CommError when MPI fails or the total passes 2 GiB.
  std::vector<std::string> gather(const std::string& mine);

 private:
  MpiProcesses() = default;
  int rank_ = 0, size_ = 1;
};

}  // namespace npuscope::comm

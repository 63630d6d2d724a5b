#include "npuscope/comm/mpi_processes.h"

#include <mpi.h>

#include <climits>
#include <cstdint>
#include <string_view>

#include "mpi_transport.h"
#include "npuscope/emulator/errors.h"
#include "npuscope/runtime_hooks/launcher_env.h"

namespace npuscope::comm {

std::unique_ptr<MpiProcesses> MpiProcesses::join_if_launched(int* argc, char*** argv) {
  const auto launched = launcher::rank_from_environment();
  if (!launched || launched->world_size < 2) return nullptr;
  const std::string_view name = launched->launcher;
  if (name != "mpirun" && name != "hydra" && name != "srun") return nullptr;  // torchrun's ranks have no MPI
  std::unique_ptr<MpiProcesses> p(new MpiProcesses());
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) check_mpi(MPI_Init(argc, argv), "MPI_Init");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &p->rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &p->size_);
  return p;
}

MpiProcesses::~MpiProcesses() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

std::vector<std::string> MpiProcesses::gather(const std::string& mine) {
  const auto n = static_cast<std::size_t>(size_);
  const std::uint64_t my_size = mine.size();
  std::vector<std::uint64_t> sizes(rank_ == 0 ? n : 0);
  check_mpi(MPI_Gather(&my_size, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, 0, MPI_COMM_WORLD), "MPI_Gather");
  std::vector<int> counts(sizes.size()), offsets(sizes.size());
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    offsets[i] = static_cast<int>(total);
    counts[i] = static_cast<int>(sizes[i]);
    total += sizes[i];
  }
  // Every process learns whether rank 0 can take it all, so that they fail together, not hang.
  int fits = total <= static_cast<std::uint64_t>(INT_MAX) ? 1 : 0;
  check_mpi(MPI_Bcast(&fits, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
  if (!fits) {
    throw emulator::CommError(
        "the processes' results total more than 2 GiB, more than one MPI gather carries; "
        "run on more processes or on fewer traces");
  }
  std::string all(total, '\0');
  check_mpi(MPI_Gatherv(mine.data(), static_cast<int>(mine.size()), MPI_BYTE, all.data(), counts.data(), offsets.data(),
                        MPI_BYTE, 0, MPI_COMM_WORLD),
            "MPI_Gatherv");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < sizes.size(); ++i)
    out.push_back(all.substr(static_cast<std::size_t>(offsets[i]), sizes[i]));
  return out;
}

}  // namespace npuscope::comm

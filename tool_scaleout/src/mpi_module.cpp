// The MPI module (libnpuscope_tool_scaleout_mpi.so): Processes over MPI_COMM_WORLD, loaded by
// join_over_mpi() only when a launcher started the tool over MPI (Note [Tools over MPI] in
// npuscope/tool_scaleout/processes.h). The one part of the tools that links libmpi.
#include <mpi.h>

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "module_entry.h"

namespace npuscope::tool_scaleout {
namespace {

// Throws ScaleoutError naming the MPI call and MPI's own message when rc is not MPI_SUCCESS.
void check_mpi(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw ScaleoutError(std::string(call) + " failed: " + std::string(text, static_cast<std::size_t>(len)));
}

class MpiProcesses final : public Processes {
 public:
  MpiProcesses(int* argc, char*** argv) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) check_mpi(MPI_Init(argc, argv), "MPI_Init");
    // Errors come back as codes (turned into ScaleoutError), instead of aborting the job.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiProcesses() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::vector<std::string> gather(const std::string& mine) override;

 private:
  int rank_ = 0, size_ = 1;
};

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
    throw ScaleoutError(
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

}  // namespace
}  // namespace npuscope::tool_scaleout

npuscope::tool_scaleout::Processes* npuscope_tool_scaleout_join_v1(int* argc, char*** argv) {
  return new npuscope::tool_scaleout::MpiProcesses(argc, argv);
}

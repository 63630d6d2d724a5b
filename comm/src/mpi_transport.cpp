#include "mpi_transport.h"

#include <climits>
#include <string>

#include "npuscope/emulator/errors.h"

namespace npuscope::comm {

void check_mpi(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw emulator::CommError(std::string(call) + " failed: " + std::string(text, static_cast<std::size_t>(len)));
}

namespace {

// MPI counts bytes in an int: more than 2 GiB per rank in one collective is refused, with what to do.
int count_of(std::size_t bytes, const char* call) {
  if (bytes > static_cast<std::size_t>(INT_MAX)) {
    throw emulator::CommError(std::string(call) + ": " + std::to_string(bytes) +
                              " bytes per rank is more than one MPI call carries (2^31 - 1); split the tensor");
  }
  return static_cast<int>(bytes);
}

class MpiTransport final : public emulator::Transport {
 public:
  explicit MpiTransport(MPI_Comm comm) : comm_(comm) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    // Errors come back as codes (turned into CommError), instead of aborting the job.
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  }
  ~MpiTransport() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&comm_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void all_gather(const void* in, void* out, std::size_t bytes) override {
    const int n = count_of(bytes, "MPI_Allgather");
    check_mpi(MPI_Allgather(in, n, MPI_BYTE, out, n, MPI_BYTE, comm_), "MPI_Allgather");
  }
  void all_to_all(const void* in, void* out, std::size_t chunk) override {
    const int n = count_of(chunk, "MPI_Alltoall");
    check_mpi(MPI_Alltoall(in, n, MPI_BYTE, out, n, MPI_BYTE, comm_), "MPI_Alltoall");
  }
  void broadcast(void* data, std::size_t bytes, int root) override {
    check_mpi(MPI_Bcast(data, count_of(bytes, "MPI_Bcast"), MPI_BYTE, root, comm_), "MPI_Bcast");
  }
  void send(const void* data, std::size_t bytes, int peer) override {
    check_mpi(MPI_Send(data, count_of(bytes, "MPI_Send"), MPI_BYTE, peer, kTag, comm_), "MPI_Send");
  }
  void recv(void* data, std::size_t bytes, int peer) override {
    check_mpi(MPI_Recv(data, count_of(bytes, "MPI_Recv"), MPI_BYTE, peer, kTag, comm_, MPI_STATUS_IGNORE), "MPI_Recv");
  }

 private:
  static constexpr int kTag = 0x4e50;  // "NP"
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
};

}  // namespace

std::shared_ptr<emulator::Transport> mpi_transport(MPI_Comm comm) { return std::make_shared<MpiTransport>(comm); }

}  // namespace npuscope::comm

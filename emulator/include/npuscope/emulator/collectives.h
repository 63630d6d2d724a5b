// Collectives on device tensors between ranks: allreduce, allgather, reduce_scatter, broadcast,
// all_to_all, send/recv and barrier, over a communicator (the world or a sub-group).
//
// Note [Collectives in virtual time]
// A collective is a device task on the stream it is called on (task type HCCL, op types Hcom*, as
// msprof shows HCCL's tasks). Its rank *arrives* when the stream reaches it (the start any task
// would have there). When the device's worker runs it, the ranks of the communicator exchange their
// arrival times through the transport; the collective starts when the last rank has arrived, and
// lasts the link model's transfer time (Note [Link model]). So every rank's task spans arrival ->
// end, and records its wait (arrival -> start) and its transfer time (start -> end), as msprof
// separates Wait and Transit. The end is the same virtual time on every rank, and a communicator's
// creation moves every member's host clock to the latest of them, so the ranks' clocks agree at
// each meeting and one timeline of all ranks is meaningful.
//
// The data moves through an existing engine behind `Transport`: MPI (comm/), torch.distributed's
// gloo (pytorch/), or threads of one process (LocalTransport, for tests). Reductions are computed
// by the emulator, not by the engine: each rank gets every rank's contribution to its chunk (an
// all-to-all, or an all-gather), reduces them in rank order in the tensor's dtype (f32 arithmetic
// for f16/bf16, rounded once, as HCCL reduces), and shares its chunk; the result is therefore
// bitwise the same on every rank, whatever the engine's own reduction order.
//
// Collectives of one communicator must be called in the same order on every rank (as with HCCL and
// NCCL); a rank that calls a different one is caught by the exchanged (kind, index, bytes) and
// reported as a kernel fault at the next synchronisation, naming both. A transport error is a fault
// too. Send and recv are numbered per pair of ranks (COMMUNICATION.sequence): send #k from A to B
// meets B's recv #k from A.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "npuscope/emulator/device.h"
#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/link_model.h"
#include "npuscope/emulator/tensor.h"

namespace npuscope::emulator {

// Moves bytes between the ranks of one communicator. Every call is collective over the
// communicator's ranks (send and recv over the pair) and blocks until its data has arrived. Throws
// CommError for a failure of the engine. Called from one device worker at a time.
class Transport {
 public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Every rank's `bytes` of `in`, in rank order, into `out` (size() * bytes).
  virtual void all_gather(const void* in, void* out, std::size_t bytes) = 0;
  // Chunk d of `in` goes to rank d; chunk s of `out` comes from rank s (each `chunk_bytes`).
  virtual void all_to_all(const void* in, void* out, std::size_t chunk_bytes) = 0;
  virtual void broadcast(void* data, std::size_t bytes, int root) = 0;
  virtual void send(const void* data, std::size_t bytes, int peer) = 0;
  virtual void recv(void* data, std::size_t bytes, int peer) = 0;
};

// Which rank of which job this process is. announce_rank() sends it to the profiler (a RankRecord:
// META rank, world_size, node, local_rank, hostname, launcher), which makes the trace this rank's;
// the transports' set-up (comm::MpiWorld, the PyTorch "hccl" process group) calls it once.
struct RankInfo {
  int rank = 0;
  int world_size = 1;
  int node = 0;          // the emulated server: rank / ranks_per_node
  int local_rank = 0;    // on that server
  std::string launcher;  // "mpirun", "torchrun", ...
};
void announce_rank(const RankInfo& info);

// The ranks per emulated server: NPUSCOPE_RANKS_PER_NODE when set (InvalidArgument when it is not a
// positive number), else `spec_default` (the device spec's ranks_per_node).
int ranks_per_node_from_environment(int spec_default);

// Threads of one process as ranks: n connected transports, rank i for the i-th thread.
std::vector<std::shared_ptr<Transport>> local_transport_group(int ranks);

// Who a communicator's members are.
struct CommunicatorInfo {
  std::string name;               // the same on every member: "hccl_world_group", "group_0_2_4_6"
  std::vector<int> global_ranks;  // members' world ranks, in communicator rank order
  CommTopology topology;          // their nodes
};

class Communicator {
 public:
  // Collective over the members (exchanges host times: Note [Collectives in virtual time]).
  // `info.global_ranks` and `info.topology` must have transport->size() entries.
  Communicator(std::shared_ptr<Transport> transport, CommunicatorInfo info, AlgorithmChoice algorithms = {});

  int rank() const;
  int size() const;
  const CommunicatorInfo& info() const;
  std::uint64_t id() const;  // process-unique; the trace's COMMUNICATOR.id

  // Queued on `stream` like any launch; they return at once. Tensors live on the stream's device.
  // The result tensors are new (tensors are never written in place).
  Tensor all_reduce(const Tensor& t, ReduceOp op, Stream stream);
  Tensor all_gather(const Tensor& t, Stream stream);                   // [size * d0, ...]
  Tensor reduce_scatter(const Tensor& t, ReduceOp op, Stream stream);  // d0 divisible by size
  Tensor broadcast(const Tensor& t, int root, Stream stream);
  Tensor all_to_all(const Tensor& t, Stream stream);  // d0 divisible by size
  void send(const Tensor& t, int peer, Stream stream);
  Tensor recv(const Shape& shape, DType dtype, int peer, Stream stream);
  void barrier(Stream stream);

  struct Call;
  struct Shared;

 private:
  Tensor run(Call call, Stream stream);

  std::shared_ptr<Shared> shared_;
  // Host side (one thread calls a communicator at a time, as with HCCL and NCCL): the next
  // collective's index, and per peer the next send's and recv's (send #k to a peer meets its recv #k
  // from us; point-to-point traffic between some ranks leaves the others' collective count alone).
  std::uint32_t sequence_ = 0;
  std::vector<std::uint32_t> sent_, received_;
};

}  // namespace npuscope::emulator

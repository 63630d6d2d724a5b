// How long a collective takes on the emulated links, and what each rank sends over which link.
//
// Note [Link model]
// Hockney's model, with HCCL's algorithms as its documentation gives them (shared/REFERENCE.md
// "Cluster"): a step costs α + nβ + nγ, where α is the spec's collective_latency_ns, β the seconds
// per byte of the link (intra_node_link_bandwidth per pair of devices of a server, on the HCCS full
// mesh; inter_node_bandwidth per device across servers, on RoCE) and γ the seconds per byte of a
// reduction in device memory (3 bytes of HBM traffic at the effective bandwidth per reduced byte).
//
// Inside a server HCCL runs the full-mesh algorithms: each rank talks to every peer at once, over
// its own link, so one phase costs α + n/p·β (level 0). Across servers the level-1 algorithm is
// ring or H-D_R, as HCCL_ALGO says, else ring when the number of servers is not a power of two and
// H-D_R when it is (the Atlas training default). A communicator that spans servers runs
// hierarchically, as A2's AllReduce does: an intra-server ReduceScatter, an inter-server AllReduce
// of each device's 1/q share over all q RoCE ports of a server at once, an intra-server AllGather;
// AllGather and ReduceScatter keep their halves, Broadcast goes across first, then inside. AllToAll
// is pairwise: its cross-server share (p - q)/p of the buffer leaves by the device's one RoCE port
// while the in-server share crosses the mesh. Servers are taken as holding q = the most members any
// one holds (sub-groups spread unevenly are approximated by their fullest server).
//
// The link constants of the presets are fitted to shared/CALIBRATION.md C1-C3 (docs/cluster.md has
// the table of model against published figures); like every spec value they are approximate.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "npuscope/emulator/device_spec.h"
#include "npuscope/runtime_hooks/vocabulary.h"

namespace npuscope::emulator {

// Where the members of a communicator sit: the node (server) of each, in communicator rank order.
struct CommTopology {
  std::vector<int> node_of;

  int size() const { return static_cast<int>(node_of.size()); }
  int num_nodes() const;     // distinct nodes
  int max_per_node() const;  // q: the most members on one node
  // `ranks` consecutive global ranks, ranks_per_node of them per node (node = rank / ranks_per_node).
  static CommTopology uniform(int ranks, int ranks_per_node);
};

// HCCL_ALGO, parsed: the level-0 (in a server) and level-1 (across servers) algorithm per
// collective, where one was named. Forms: "level0:NA;level1:ring" for every collective, or per
// collective "allreduce=level0:NA;level1:H-D_R/allgather=level0:NA;level1:ring" (HCCL's names:
// allreduce, allgather, reducescatter, broadcast, alltoall). Level-1 algorithms: ring, H-D_R, and
// pairwise for alltoall. Level 0 accepts NA and fullmesh (the server's mesh), and ring and H-D_R,
// npuscope's addition to model a server without a full mesh.
struct AlgorithmChoice {
  static constexpr int kKinds = static_cast<int>(std::size(EnumTraits<CollectiveKind>::kValues));
  std::array<std::optional<CollectiveAlgorithm>, kKinds> level0{}, level1{};

  // Throws InvalidArgument naming HCCL_ALGO, the part it could not read and the accepted forms.
  static AlgorithmChoice parse(std::string_view hccl_algo);
  // From the HCCL_ALGO environment variable (empty: HCCL's defaults).
  static AlgorithmChoice from_environment();
};

// What one rank sends to one peer during a collective (a row of the communication matrix).
struct LinkSend {
  int peer = 0;  // communicator rank
  std::uint64_t bytes = 0;
  LinkTransport transport = LinkTransport::kHccs;
  std::uint64_t time_ns = 0;  // the link's busy time: its steps' α and bytes·β
};

// A collective as one rank calls it. `bytes` is n of the formulas: the buffer of AllReduce,
// Broadcast, Send and Recv; the whole output of AllGather (p inputs); the whole input of
// ReduceScatter (p outputs); the whole send buffer of AllToAll (p chunks); 0 for Barrier.
struct CollectiveCall {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  std::uint64_t bytes = 0;
  int rank = 0;          // the caller's rank in the communicator
  int root_or_peer = 0;  // Broadcast's root; Send's destination; Recv's source
};

struct CollectiveCost {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kPointToPoint;  // level 1 if it spans servers
  std::uint64_t transfer_ns = 0;                                       // from the start to the end
  std::uint32_t steps = 0;                                             // α's counted
  std::vector<LinkSend> sends;                                         // the caller's, by peer
};

// Throws InvalidArgument for a rank or peer outside the communicator, or a send/recv to oneself.
CollectiveCost collective_cost(const DeviceSpec& spec, const CommTopology& topology, const CollectiveCall& call,
                               const AlgorithmChoice& choice = {});

}  // namespace npuscope::emulator

#include "npuscope/comm/mpi_world.h"

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <string>

#include "mpi_transport.h"
#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/runtime.h"
#include "npuscope/runtime_hooks/launcher_env.h"

namespace npuscope::comm {
namespace {

std::atomic<bool> g_world_exists{false};

// The tag MPI_Comm_create_group matches the members' calls by: one per group creation would be
// safer when groups are created concurrently, but a communicator is created by one thread at a time.
constexpr int kCreateGroupTag = 0x4e51;

std::string group_name(const std::vector<int>& ranks) {
  std::string name = "group";
  for (int r : ranks) {
    name += '_';  // not "_" + to_string(r): g++ 12 warns a false -Wrestrict on it
    name += std::to_string(r);
  }
  return name;
}

}  // namespace

MpiWorld::MpiWorld(int* argc, char*** argv, int ranks_per_node, emulator::AlgorithmChoice algorithms)
    : algorithms_(algorithms) {
  // What may be refused is read before MPI starts, so that an error leaves no MPI job half set up.
  ranks_per_node_ = ranks_per_node > 0
                        ? ranks_per_node
                        : emulator::ranks_per_node_from_environment(
                              emulator::load_spec(emulator::RuntimeOptions::from_environment().spec).ranks_per_node);
  if (g_world_exists.exchange(true)) throw emulator::CommError("an MpiWorld exists already: make one per process");
  int initialized = 0;
  MPI_Initialized(&initialized);
  int provided = 0;
  if (initialized) {
    MPI_Query_thread(&provided);
  } else {
    check_mpi(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
    initialized_mpi_ = true;
  }
  if (provided < MPI_THREAD_MULTIPLE) {
    g_world_exists = false;
    throw emulator::CommError(
        "MPI gives thread level " + std::to_string(provided) +
        ", not MPI_THREAD_MULTIPLE: the emulated device runs collectives on its own thread; initialize MPI with "
        "MPI_Init_thread(..., MPI_THREAD_MULTIPLE, ...) or let MpiWorld do it");
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &info_.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &info_.world_size);
  info_.node = info_.rank / ranks_per_node_;
  info_.local_rank = info_.rank % ranks_per_node_;
  const auto launched = launcher::rank_from_environment();
  info_.launcher = launched ? launched->launcher : "mpi";
  emulator::announce_rank(info_);

  MPI_Comm dup = MPI_COMM_NULL;
  check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &dup), "MPI_Comm_dup");
  std::vector<int> all(static_cast<std::size_t>(info_.world_size));
  for (int r = 0; r < info_.world_size; ++r) all[static_cast<std::size_t>(r)] = r;
  world_ = std::make_shared<emulator::Communicator>(
      mpi_transport(dup),
      emulator::CommunicatorInfo{"hccl_world_group", all,
                                 emulator::CommTopology::uniform(info_.world_size, ranks_per_node_)},
      algorithms_);
}

MpiWorld::~MpiWorld() {
  try {
    emulator::Runtime::get().synchronize_all();  // queued collectives still need MPI
  } catch (...) {
    // A device fault was the program's to see at its last synchronisation; MPI is finalized anyway.
  }
  world_.reset();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (initialized_mpi_ && !finalized) MPI_Finalize();
  g_world_exists = false;
}

std::shared_ptr<emulator::Communicator> MpiWorld::new_group(const std::vector<int>& world_ranks) {
  const std::string name = group_name(world_ranks);
  std::vector<int> sorted = world_ranks;
  std::sort(sorted.begin(), sorted.end());
  if (sorted.empty() || sorted.front() < 0 || sorted.back() >= info_.world_size ||
      std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    throw emulator::InvalidArgument("new_group " + name + ": give distinct world ranks from 0 to " +
                                    std::to_string(info_.world_size - 1));
  }
  if (!std::binary_search(sorted.begin(), sorted.end(), info_.rank)) {
    throw emulator::InvalidArgument("new_group " + name + ": rank " + std::to_string(info_.rank) +
                                    " is not a member; only the members call new_group");
  }
  MPI_Group world_group = MPI_GROUP_NULL, group = MPI_GROUP_NULL;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  MPI_Group_incl(world_group, static_cast<int>(world_ranks.size()), world_ranks.data(), &group);
  MPI_Comm comm = MPI_COMM_NULL;
  const int rc = MPI_Comm_create_group(MPI_COMM_WORLD, group, kCreateGroupTag, &comm);
  MPI_Group_free(&group);
  MPI_Group_free(&world_group);
  check_mpi(rc, "MPI_Comm_create_group");
  emulator::CommTopology topology;
  for (int r : world_ranks) topology.node_of.push_back(r / ranks_per_node_);
  return std::make_shared<emulator::Communicator>(mpi_transport(comm),
                                                  emulator::CommunicatorInfo{name, world_ranks, topology}, algorithms_);
}

}  // namespace npuscope::comm

// The cluster analysis of rank traces the emulator produced: four threads as ranks
// (local_transport_group), each on its own emulated device, run matmuls and an allreduce per step;
// rank 2 runs twice the matmuls. Their task and collective records (as the injection library gets
// them through the hook API) are written one trace per rank through the collector's writer, and
// `analyze_cluster` must name rank 2, and only rank 2.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <barrier>
#include <fstream>
#include <map>
#include <mutex>
#include <numeric>
#include <thread>

#include "npuscope/analyzer/cluster.h"
#include "npuscope/collector/trace_writer.h"
#include "npuscope/emulator/collectives.h"
#include "npuscope/emulator/ops.h"
#include "npuscope/emulator/runtime.h"
#include "npuscope/runtime_hooks/hook_api.h"

using namespace npuscope;
using namespace npuscope::emulator;
namespace fs = std::filesystem;

namespace {

// What the injection library would write for each rank, collected from the hooks.
struct Recorder {
  std::mutex mutex;
  std::map<int, std::vector<collector::TaskRow>> tasks;  // by device = rank
  struct Comm {
    std::uint64_t id;
    std::string name, members, nodes;
    int rank, size;
  };
  std::vector<Comm> communicators;
  std::vector<std::pair<hooks::CollectiveRecord, std::vector<hooks::LinkRecord>>> collectives;
  hooks::SubscriberTable table;
  std::atomic<bool> recording{false};  // after the warm-up: a profiling session's start

  Recorder() {
    table.user = this;
    table.wants_task_queued = false;
    table.wants_task_begin = false;
    table.on_task = [](void* u, const hooks::TaskRecord& t) {
      auto* self = static_cast<Recorder*>(u);
      if (t.phase != hooks::TaskPhase::kEnd || !self->recording) return;
      std::lock_guard lock(self->mutex);
      collector::TaskRow row{.task_id = static_cast<std::int64_t>(t.task_id),
                             .start_ns = static_cast<std::int64_t>(t.start_ns),
                             .end_ns = static_cast<std::int64_t>(t.end_ns),
                             .queued_ns = static_cast<std::int64_t>(t.queued_ns)};
      row.device_id = t.device_id;
      row.stream_id = static_cast<std::int32_t>(t.stream_id);
      row.task_type = static_cast<std::int32_t>(t.task_type);
      self->tasks[t.device_id].push_back(row);
    };
    table.on_collective = [](void* u, const hooks::CollectiveRecord& r) {
      auto* self = static_cast<Recorder*>(u);
      std::lock_guard lock(self->mutex);
      self->collectives.push_back({r, {r.links, r.links + r.num_links}});
    };
    table.on_communicator = [](void* u, const hooks::CommunicatorRecord& r) {
      auto* self = static_cast<Recorder*>(u);
      std::lock_guard lock(self->mutex);
      self->communicators.push_back({r.communicator_id, r.name, r.members, r.nodes, r.rank, r.size});
    };
    hooks::subscribe(&table);
  }
  ~Recorder() { hooks::subscribe(nullptr); }
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  void write(const fs::path& dir, int world) {
    fs::create_directories(dir);
    for (int r = 0; r < world; ++r) {
      auto w = collector::TraceWriter::create((dir / ("rank_" + std::to_string(r) + ".db")).string());
      w->set_meta(collector::kMetaRank, std::to_string(r));
      w->set_meta(collector::kMetaWorldSize, std::to_string(world));
      for (collector::TaskRow& t : tasks[r]) t.name_id = w->intern("op");
      w->add(tasks[r]);
      for (const Comm& c : communicators) {
        if (c.rank != r) continue;  // each thread's communicator is its rank's
        w->add(std::vector<collector::CommunicatorRow>{{.communicator_id = static_cast<std::int64_t>(c.id),
                                                        .name_id = w->intern(c.name),
                                                        .rank = c.rank,
                                                        .size = c.size,
                                                        .members_id = w->intern(c.members),
                                                        .nodes_id = w->intern(c.nodes)}});
        for (const auto& [col, links] : collectives) {
          if (col.communicator_id != c.id) continue;
          w->add(std::vector<collector::CommunicationRow>{
              {.task_id = static_cast<std::int64_t>(col.task_id),
               .communicator_id = static_cast<std::int64_t>(col.communicator_id),
               .sequence = static_cast<std::int32_t>(col.sequence),
               .kind = static_cast<std::int32_t>(col.kind),
               .bytes = static_cast<std::int64_t>(col.bytes),
               .root_or_peer = col.root_or_peer,
               .last_rank = col.last_rank,
               .arrival_ns = static_cast<std::int64_t>(col.arrival_ns),
               .start_ns = static_cast<std::int64_t>(col.start_ns),
               .end_ns = static_cast<std::int64_t>(col.end_ns)}});
          for (const hooks::LinkRecord& l : links) {
            w->add(std::vector<collector::CommunicationLinkRow>{{.task_id = static_cast<std::int64_t>(col.task_id),
                                                                 .peer_rank = l.peer_rank,
                                                                 .transport = static_cast<std::int32_t>(l.transport),
                                                                 .bytes = static_cast<std::int64_t>(l.bytes),
                                                                 .time_ns = static_cast<std::int64_t>(l.time_ns)}});
          }
        }
      }
      w->finalize();
    }
  }
};

class ClusterEmulatedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("npuscope_cluster_emulated_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // A device whose every kernel costs 50 ms: the compute (modelled) dwarfs the host threads' real
    // time (Note [Virtual time] in virtual_clock.h), which varies from run to run.
    std::ofstream(dir_ / "slow_kernels.json") << R"({"base": "ascend910b", "kernel_overhead_ns": 50000000})";
    Runtime::configure({.spec = (dir_ / "slow_kernels.json").string(), .num_devices = 4});
  }
  void TearDown() override {
    Runtime::configure({});
    fs::remove_all(dir_);
  }
  fs::path dir_;
};

}  // namespace

TEST_F(ClusterEmulatedTest, NamesTheRankThatComputesTwiceAsMuch) {
  constexpr int kRanks = 4, kSteps = 3, kSlow = 2;
  Recorder recorder;
  auto transports = local_transport_group(kRanks);
  std::vector<int> world(kRanks);
  std::iota(world.begin(), world.end(), 0);
  std::vector<std::string> errors(kRanks);
  std::vector<std::thread> threads;
  std::barrier warmed_up(kRanks, [&]() noexcept { recorder.recording = true; });
  for (int r = 0; r < kRanks; ++r) {
    threads.emplace_back([&, r] {
      try {
        // First use of a device and its kernels (one-time host work) before the profile starts.
        ops::matmul(Tensor::from_floats(std::vector<float>(4, 1.0f), {2, 2}, DType::kF32, DeviceRef::npu(r)),
                    Tensor::from_floats(std::vector<float>(4, 1.0f), {2, 2}, DType::kF32, DeviceRef::npu(r)))
            .to_floats();
        warmed_up.arrive_and_wait();
        Communicator comm(transports[r], {"hccl_world_group", world, CommTopology::uniform(kRanks, 2)});
        const Stream stream = Runtime::get().device(r).default_stream();
        const Tensor a =
            Tensor::from_floats(std::vector<float>(128 * 128, 0.01f), {128, 128}, DType::kF32, DeviceRef::npu(r));
        const Tensor grad =
            Tensor::from_floats(std::vector<float>(1 << 16, 1.0f), {1 << 16}, DType::kF32, DeviceRef::npu(r));
        for (int step = 0; step < kSteps; ++step) {
          for (int k = 0; k < (r == kSlow ? 8 : 4); ++k) ops::matmul(a, a);
          comm.all_reduce(grad, ReduceOp::kSum, stream).to_floats();  // waits for the device
        }
      } catch (const std::exception& e) {
        errors[r] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < kRanks; ++r) ASSERT_EQ(errors[r], "") << "rank " << r;
  recorder.write(dir_ / "traces", kRanks);

  const analyzer::ClusterReport report = analyzer::analyze_cluster(dir_ / "traces");
  EXPECT_EQ(report.ranks, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_TRUE(report.problems.empty()) << report.problems[0].detail;
  ASSERT_EQ(report.slow_ranks.size(), 1u);
  EXPECT_EQ(report.slow_ranks[0].rank, kSlow);
  ASSERT_EQ(report.communication.size(), 4u);
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_EQ(report.communication[static_cast<std::size_t>(r)].collectives, kSteps);
    if (r != kSlow) {
      EXPECT_GT(report.communication[static_cast<std::size_t>(r)].wait_ratio(),
                report.communication[kSlow].wait_ratio());
    }
  }
  // The allreduce's ring: every rank sends to the next one.
  for (const analyzer::MatrixEntry& e : report.matrix) {
    if (e.src != e.dst) {
      EXPECT_GT(e.bytes, 0);
    }
  }
}

// Rank traces of a small data-parallel job written through the collector's writer, as the injection
// library writes them under mpirun (META rank keys, COMMUNICATOR, COMMUNICATION, COMMUNICATION_LINK,
// HCCL tasks spanning arrival to end): the cluster analysis tests (analyzer, CLI).
//
// Each step, every rank computes (four AI_CORE tasks), arrives at an allreduce over the world, which
// starts when the last rank has arrived (virtual time, Note [Collectives in virtual time] in
// emulator/collectives.h) and lasts `allreduce_ns`; a vector task runs beside it from the arrival
// (overlapped). Then, with `ring`, rank r sends `ring_bytes` to r + 1 and receives from r - 1.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "npuscope/collector/trace_writer.h"

namespace npuscope::testing {

// A directory of each test's own for its rank traces, not created (write_cluster_traces creates
// it), removed before and after the test.
class RankTracesTest : public ::testing::Test {
 protected:
  void SetUp() override { std::filesystem::remove_all(dir_); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static std::filesystem::path test_dir() {
    const ::testing::TestInfo& test = *::testing::UnitTest::GetInstance()->current_test_info();
    return std::filesystem::temp_directory_path() /
           ("npuscope_" + std::string(test.test_suite_name()) + "_" + test.name() + "_" + std::to_string(getpid()));
  }
  const std::filesystem::path dir_ = test_dir();  // set when the test's fixture is made
};

struct ClusterScenario {
  int world = 4;
  int steps = 3;
  std::int64_t compute_ns = 2'000'000;  // per rank and step, times its compute_factor
  std::vector<double> compute_factor;   // per rank; missing: 1
  bool allreduce = true;
  std::int64_t allreduce_bytes = 4 << 20, allreduce_ns = 500'000;
  std::int64_t overlap_ns = 100'000;  // the vector task beside the allreduce
  bool ring = false;
  std::int64_t ring_bytes = 1 << 20, ring_ns = 100'000;
  std::vector<int> skip;    // ranks whose trace is not written
  int drop_rank = -1;       // this rank has no record of the allreduce of step 1
  int ranks_per_node = 2;   // node = rank / ranks_per_node: HCCS inside, RDMA between
  int slow_link_from = -1;  // this rank's ring sends take twice as long
};

inline std::string cluster_rank_file(int rank) { return "rank_" + std::to_string(rank) + ".db"; }

inline void write_cluster_traces(const std::filesystem::path& dir, const ClusterScenario& s) {
  namespace c = npuscope::collector;
  std::filesystem::create_directories(dir);
  struct Rank {
    std::unique_ptr<c::TraceWriter> w;
    std::int64_t next_task = 1;
  };
  std::vector<Rank> ranks(static_cast<std::size_t>(s.world));
  std::string members, nodes;
  for (int r = 0; r < s.world; ++r) {
    members += (r ? "," : "") + std::to_string(r);
    nodes += (r ? "," : "") + std::to_string(r / s.ranks_per_node);
  }
  for (int r = 0; r < s.world; ++r) {
    auto& w = ranks[static_cast<std::size_t>(r)].w;
    w = c::TraceWriter::create((dir / cluster_rank_file(r)).string(), {.overwrite = true});
    w->set_meta(c::kMetaRank, std::to_string(r));
    w->set_meta(c::kMetaWorldSize, std::to_string(s.world));
    w->set_meta(c::kMetaNode, std::to_string(r / s.ranks_per_node));
    w->set_meta(c::kMetaLocalRank, std::to_string(r % s.ranks_per_node));
    w->set_meta(c::kMetaHostname, "host");
    w->set_meta(c::kMetaLauncher, "test");
    w->add(std::vector<c::CommunicatorRow>{{.communicator_id = 1,
                                            .name_id = w->intern("hccl_world_group"),
                                            .rank = r,
                                            .size = s.world,
                                            .members_id = w->intern(members),
                                            .nodes_id = w->intern(nodes)}});
  }
  const auto transport = [&](int src, int dst) {
    return static_cast<std::int32_t>(src / s.ranks_per_node == dst / s.ranks_per_node ? LinkTransport::kHccs
                                                                                      : LinkTransport::kRdma);
  };
  const auto task = [&](int r, std::int64_t queued, std::int64_t start, std::int64_t end, TaskType type,
                        std::int32_t stream) {
    Rank& rank = ranks[static_cast<std::size_t>(r)];
    c::TaskRow t{.task_id = rank.next_task++, .start_ns = start, .end_ns = end, .queued_ns = queued};
    t.stream_id = stream;
    t.task_type = static_cast<std::int32_t>(type);
    t.name_id = rank.w->intern(type == TaskType::kCommunication ? "hcom" : "op");
    rank.w->add(std::vector<c::TaskRow>{t});
    return t.task_id;
  };
  const auto comm = [&](int r, std::int64_t task_id, int seq, CollectiveKind kind, std::int64_t bytes, int peer,
                        std::int64_t arrival, std::int64_t start, std::int64_t end) {
    ranks[static_cast<std::size_t>(r)].w->add(std::vector<c::CommunicationRow>{{.task_id = task_id,
                                                                                .communicator_id = 1,
                                                                                .sequence = seq,
                                                                                .kind = static_cast<std::int32_t>(kind),
                                                                                .bytes = bytes,
                                                                                .root_or_peer = peer,
                                                                                .last_rank = 0,
                                                                                .arrival_ns = arrival,
                                                                                .start_ns = start,
                                                                                .end_ns = end}});
  };
  const auto send_link = [&](int r, std::int64_t task_id, int peer, std::int64_t bytes, std::int64_t ns) {
    ranks[static_cast<std::size_t>(r)].w->add(std::vector<c::CommunicationLinkRow>{
        {.task_id = task_id, .peer_rank = peer, .transport = transport(r, peer), .bytes = bytes, .time_ns = ns}});
  };

  std::int64_t t = 1'000'000;
  for (int step = 0; step < s.steps; ++step) {
    const std::int64_t step_start = t;
    std::vector<std::int64_t> arrival(static_cast<std::size_t>(s.world));
    for (int r = 0; r < s.world; ++r) {
      const double factor = static_cast<std::size_t>(r) < s.compute_factor.size() ? s.compute_factor[r] : 1.0;
      const auto compute = static_cast<std::int64_t>(static_cast<double>(s.compute_ns) * factor);
      for (int k = 0; k < 4; ++k)
        task(r, step_start, step_start + compute * k / 4, step_start + compute * (k + 1) / 4, TaskType::kAiCore, 0);
      arrival[static_cast<std::size_t>(r)] = step_start + compute;
    }
    std::int64_t end = *std::max_element(arrival.begin(), arrival.end());
    if (s.allreduce) {
      const std::int64_t start = end;
      end = start + s.allreduce_ns;
      for (int r = 0; r < s.world; ++r) {
        const std::int64_t a = arrival[static_cast<std::size_t>(r)];
        task(r, step_start, a, a + s.overlap_ns, TaskType::kAiVectorCore, 1);
        if (r == s.drop_rank && step == 1) continue;
        const std::int64_t id = task(r, step_start, a, end, TaskType::kCommunication, 2);
        comm(r, id, step, CollectiveKind::kAllReduce, s.allreduce_bytes, -1, a, start, end);
        send_link(r, id, (r + 1) % s.world, s.allreduce_bytes * 2 * (s.world - 1) / s.world, s.allreduce_ns);
      }
    }
    if (s.ring) {
      const std::int64_t start = end;
      end = start + s.ring_ns;
      for (int r = 0; r < s.world; ++r) {
        const int next = (r + 1) % s.world, prev = (r + s.world - 1) % s.world;
        const std::int64_t send = task(r, step_start, start, end, TaskType::kCommunication, 2);
        comm(r, send, step, CollectiveKind::kSend, s.ring_bytes, next, start, start, end);
        send_link(r, send, next, s.ring_bytes, r == s.slow_link_from ? 2 * s.ring_ns : s.ring_ns);
        const std::int64_t recv = task(r, step_start, start, end, TaskType::kCommunication, 3);
        comm(r, recv, step, CollectiveKind::kRecv, s.ring_bytes, prev, start, start, end);
      }
    }
    for (int r = 0; r < s.world; ++r) {
      auto& w = ranks[static_cast<std::size_t>(r)].w;
      w->add(std::vector<c::MarkerRow>{{.start_ns = step_start,
                                        .end_ns = end,
                                        .name_id = w->intern("ProfilerStep#" + std::to_string(step)),
                                        .kind = static_cast<std::int32_t>(MarkerKind::kStep),
                                        .step = step}});
    }
    t = end + 50'000;  // the host between steps
  }
  for (int r = 0; r < s.world; ++r) {
    ranks[static_cast<std::size_t>(r)].w->finalize();
    if (std::find(s.skip.begin(), s.skip.end(), r) != s.skip.end()) std::filesystem::remove(dir / cluster_rank_file(r));
  }
}

}  // namespace npuscope::testing

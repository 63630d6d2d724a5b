// The cluster analysis of rank traces the emulator produced (emulated_rank_traces.h): four threads
// as ranks, each on its own emulated device, run matmuls and an allreduce per step; rank 2 runs
// twice the matmuls. `analyze_cluster` must name rank 2, and only rank 2.
#include <gtest/gtest.h>

#include <fstream>

#include "analyzer/cluster_trace_util.h"
#include "analyzer/emulated_rank_traces.h"
#include "npuscope/analyzer/cluster.h"

using namespace npuscope::analyzer;
namespace fs = std::filesystem;

namespace {
class ClusterEmulatedTest : public npuscope::testing::RankTracesTest {};
}  // namespace

TEST_F(ClusterEmulatedTest, NamesTheRankThatComputesTwiceAsMuch) {
  fs::create_directories(dir_ / "traces");
  // A device whose every kernel costs 50 ms: the compute (modelled) dwarfs the host threads' real
  // time (Note [Virtual time] in virtual_clock.h), which varies from run to run.
  std::ofstream(dir_ / "slow_kernels.json") << R"({"base": "ascend910b", "kernel_overhead_ns": 50000000})";
  const npuscope::testing::EmulatedJob job{.steps = 3,
                                           .all_gather = false,
                                           .matmuls = 4,
                                           .slow_matmuls = 8,
                                           .slow_host_ns = 0,
                                           .spec = (dir_ / "slow_kernels.json").string()};
  npuscope::testing::write_emulated_rank_traces((dir_ / "traces").string(), job);

  const ClusterReport report = analyze_cluster(dir_ / "traces");
  EXPECT_EQ(report.ranks, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_TRUE(report.problems.empty()) << report.problems[0].detail;
  ASSERT_EQ(report.slow_ranks.size(), 1u);
  EXPECT_EQ(report.slow_ranks[0].rank, job.slow_rank);
  ASSERT_EQ(report.communication.size(), 4u);
  for (int r = 0; r < job.ranks; ++r) {
    const RankCommunication& c = report.communication[static_cast<std::size_t>(r)];
    EXPECT_EQ(c.collectives, job.steps);
    if (r != job.slow_rank) {
      EXPECT_GT(c.wait_ratio(), report.communication[static_cast<std::size_t>(job.slow_rank)].wait_ratio());
    }
  }
  // The allreduce's links: every rank sends to the others.
  ASSERT_FALSE(report.matrix.empty());
  for (const MatrixEntry& e : report.matrix) {
    if (e.src != e.dst) {
      EXPECT_GT(e.bytes, 0);
    }
  }
}

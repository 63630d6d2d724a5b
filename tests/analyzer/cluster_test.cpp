// The cluster analysis (analyzer/cluster.h) on rank traces written through the collector's writer:
// step trace time, the slow rank (and not the ranks waiting for it), wait time ratio, the
// communication matrix of a send/recv ring, missing and mismatched ranks, files that are not traces,
// and the summary's serialized form.
#include "npuscope/analyzer/cluster.h"

#include <gtest/gtest.h>

#include <fstream>

#include "analyzer/cluster_trace_util.h"
#include "npuscope/analyzer/format.h"

using namespace npuscope::analyzer;
using namespace npuscope::testing;
namespace fs = std::filesystem;

namespace {

class ClusterTest : public RankTracesTest {
 protected:
  std::vector<const RankSetProblem*> problems(const ClusterReport& r, const std::string& kind) {
    std::vector<const RankSetProblem*> out;
    for (const RankSetProblem& p : r.problems) {
      if (p.kind == kind) out.push_back(&p);
    }
    return out;
  }
};

const RankCommunication& comm_of(const ClusterReport& r, int rank) {
  for (const RankCommunication& c : r.communication) {
    if (c.rank == rank) return c;
  }
  throw std::runtime_error("no rank " + std::to_string(rank));
}

}  // namespace

TEST_F(ClusterTest, StepTraceTimeSplitsComputeCommunicationOverlapAndFree) {
  write_cluster_traces(dir_, {.compute_factor = {1, 1, 2, 1}});
  const ClusterReport r = analyze_cluster(dir_);
  EXPECT_EQ(r.ranks, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(r.world_size, 4);
  EXPECT_TRUE(r.problems.empty());
  ASSERT_EQ(r.step_trace.size(), 12u);  // 4 ranks x 3 steps
  // Rank 0, step 0: computes 2 ms, arrives, waits 2 ms for rank 2, the allreduce takes 0.5 ms; a
  // 0.1 ms vector task beside the wait.
  const RankStep& fast = r.step_trace[0];
  EXPECT_EQ(fast.rank, 0);
  EXPECT_EQ(fast.times.step, 0);
  EXPECT_EQ(fast.times.computing_ns, 2'100'000);
  EXPECT_EQ(fast.times.communication_ns, 2'500'000);
  EXPECT_EQ(fast.times.overlapped_ns, 100'000);
  EXPECT_EQ(fast.times.not_overlapped_ns(), 2'400'000);
  EXPECT_EQ(fast.times.free_ns, 0);
  EXPECT_EQ(fast.times.end_ns - fast.times.start_ns, 4'500'000);
  EXPECT_DOUBLE_EQ(fast.times.overlap_pct(), 4.0);
  // Rank 2 computes 4 ms and does not wait.
  const RankStep& slow = r.step_trace[6];
  EXPECT_EQ(slow.rank, 2);
  EXPECT_EQ(slow.times.computing_ns, 4'100'000);
  EXPECT_EQ(slow.times.communication_ns, 500'000);
  EXPECT_EQ(slow.times.free_ns, 0);
}

TEST_F(ClusterTest, NamesTheRankSlowedInComputeAndNotTheRanksWaitingForIt) {
  write_cluster_traces(dir_, {.compute_factor = {1, 1, 2, 1}, .ring = true});
  const ClusterReport r = analyze_cluster(dir_);
  ASSERT_EQ(r.slow_ranks.size(), 1u);
  EXPECT_EQ(r.slow_ranks[0].rank, 2);
  EXPECT_EQ(r.slow_ranks[0].parts, (std::vector<std::string>{"Computing", "Communication Wait"}));
  ASSERT_EQ(r.parts.size(), 4u);
  EXPECT_EQ(r.parts[0].part, "Computing");
  EXPECT_EQ(r.parts[0].max_rank, 2);
  EXPECT_EQ(r.parts[1].part, "Communication Wait");
  EXPECT_EQ(r.parts[1].min_rank, 2);
  EXPECT_NE(r.parts[1].max_rank, 2);    // the most waiting rank is a healthy one...
  EXPECT_EQ(r.parts[1].slow_rank, 2);   // ...and is not blamed
  EXPECT_EQ(r.parts[2].slow_rank, -1);  // transit: the same on every rank
  EXPECT_EQ(r.parts[3].slow_rank, -1);  // free

  // The fast ranks wait for rank 2: their wait time ratio is higher, above 0.2; rank 2 never waits.
  EXPECT_EQ(comm_of(r, 2).wait_ns, 0);
  for (const int rank : {0, 1, 3}) {
    EXPECT_GT(comm_of(r, rank).wait_ratio(), comm_of(r, 2).wait_ratio());
    EXPECT_GT(comm_of(r, rank).wait_ratio(), 0.2);
    EXPECT_EQ(comm_of(r, rank).wait_ns, 3 * 2'000'000);
  }
  // The top collective is an allreduce, the rank waiting least (2) its min rank.
  ASSERT_FALSE(r.top_collectives.empty());
  EXPECT_EQ(r.top_collectives[0].communicator, "hccl_world_group");
  EXPECT_EQ(r.top_collectives[0].ranks, 4);
  EXPECT_EQ(r.top_collectives[0].min_rank, 2);
  EXPECT_EQ(r.top_collectives[0].min_elapse_ns, 500'000);
  EXPECT_EQ(r.top_collectives[0].max_elapse_ns, 2'500'000);
}

TEST_F(ClusterTest, EqualRanksNameNobody) {
  write_cluster_traces(dir_, {.ring = true});
  const ClusterReport r = analyze_cluster(dir_);
  EXPECT_TRUE(r.slow_ranks.empty());
  for (const RankCommunication& c : r.communication) EXPECT_EQ(c.wait_ns, 0);
}

TEST_F(ClusterTest, CommunicationMatrixOfASendRecvRing) {
  const ClusterScenario s{.allreduce = false, .ring = true};
  write_cluster_traces(dir_, s);
  const ClusterReport r = analyze_cluster(dir_);
  ASSERT_EQ(r.matrix.size(), 4u);
  for (int src = 0; src < 4; ++src) {
    const MatrixEntry& e = r.matrix[static_cast<std::size_t>(src)];
    EXPECT_EQ(e.src, src);
    EXPECT_EQ(e.dst, (src + 1) % 4);
    EXPECT_EQ(e.bytes, 3 * s.ring_bytes);
    EXPECT_EQ(e.time_ns, 3 * s.ring_ns);
    // Ranks 0, 1 on node 0 and 2, 3 on node 1.
    EXPECT_EQ(e.transport,
              static_cast<int>(src % 2 == 0 ? npuscope::LinkTransport::kHccs : npuscope::LinkTransport::kRdma));
    EXPECT_NEAR(e.bandwidth_gbps(), static_cast<double>(s.ring_bytes) / static_cast<double>(s.ring_ns), 1e-9);
  }
  for (const LinkSpread& l : r.link_spreads) EXPECT_FALSE(l.slow);
  EXPECT_EQ(r.mismatched_collectives, 0);  // every send met its recv
}

TEST_F(ClusterTest, ASlowLinkIsNamedPerTransportAndSmallPacketsAreNotJudged) {
  write_cluster_traces(dir_, {.allreduce = false, .ring = true, .ring_bytes = 32 << 20, .slow_link_from = 2});
  ClusterReport r = analyze_cluster(dir_);
  ASSERT_EQ(r.link_spreads.size(), 2u);
  const LinkSpread& hccs = r.link_spreads[0];  // 0-1 and 2-3
  EXPECT_EQ(hccs.transport, static_cast<int>(npuscope::LinkTransport::kHccs));
  EXPECT_EQ(hccs.links, 2);
  EXPECT_TRUE(hccs.slow);
  EXPECT_EQ(hccs.min_src, 2);
  EXPECT_EQ(hccs.min_dst, 3);
  EXPECT_FALSE(r.link_spreads[1].slow);  // RDMA: 1-2 and 3-0, as fast as each other

  // The same with 1 MiB sends: small packets over HCCS (< 16 MB), latency-bound, not judged.
  fs::remove_all(dir_);
  write_cluster_traces(dir_, {.allreduce = false, .ring = true, .slow_link_from = 2});
  r = analyze_cluster(dir_);
  EXPECT_EQ(r.link_spreads[0].links, 0);
  EXPECT_EQ(r.link_spreads[0].small_links, 2);
  EXPECT_FALSE(r.link_spreads[0].slow);
}

TEST_F(ClusterTest, AMissingRankIsReportedAndTheOthersAnalysed) {
  write_cluster_traces(dir_, {.ring = true, .skip = {3}});
  const ClusterReport r = analyze_cluster(dir_);
  EXPECT_EQ(r.ranks, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(r.world_size, 4);
  const auto missing = problems(r, "missing rank");
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0]->rank, 3);
  EXPECT_EQ(r.mismatched_collectives, 0);  // not reported again at every collective
  EXPECT_EQ(r.step_trace.size(), 9u);
  const Report report = cluster_tables(r);
  EXPECT_EQ(std::get<std::vector<std::string>>(report.find("cluster_summary")->rows[0][2]),
            (std::vector<std::string>{"3"}));
}

TEST_F(ClusterTest, ACollectiveMissingOnOneMemberIsAMismatch) {
  write_cluster_traces(dir_, {.drop_rank = 1});
  const ClusterReport r = analyze_cluster(dir_);
  EXPECT_EQ(r.mismatched_collectives, 1);
  const auto mismatched = problems(r, "mismatched collective");
  ASSERT_EQ(mismatched.size(), 1u);
  EXPECT_EQ(mismatched[0]->rank, 1);
  EXPECT_NE(mismatched[0]->detail.find("hccl_world_group #1"), std::string::npos) << mismatched[0]->detail;
  EXPECT_NE(mismatched[0]->detail.find("no record on rank 1"), std::string::npos) << mismatched[0]->detail;
}

TEST_F(ClusterTest, FilesThatAreNotRankTracesAreReported) {
  write_cluster_traces(dir_, {});
  std::ofstream(dir_ / "notes.db") << "not a database";
  std::ofstream(dir_ / "README.txt") << "ignored: not a .db";
  {
    auto w = npuscope::collector::TraceWriter::create((dir_ / "single.db").string());
    w->finalize();
  }
  fs::copy_file(dir_ / cluster_rank_file(1), dir_ / "rank_1_copy.db");
  const ClusterReport r = analyze_cluster(dir_);
  EXPECT_EQ(r.ranks, (std::vector<int>{0, 1, 2, 3}));
  const auto junk = problems(r, "not a trace");
  ASSERT_EQ(junk.size(), 1u);
  EXPECT_EQ(fs::path(junk[0]->file).filename(), "notes.db");
  const auto unranked = problems(r, "no rank");
  ASSERT_EQ(unranked.size(), 1u);
  EXPECT_EQ(fs::path(unranked[0]->file).filename(), "single.db");
  const auto duplicate = problems(r, "duplicate rank");
  ASSERT_EQ(duplicate.size(), 1u);
  EXPECT_EQ(duplicate[0]->rank, 1);
  EXPECT_EQ(fs::path(duplicate[0]->file).filename(), "rank_1_copy.db");
}

TEST_F(ClusterTest, NoRankTraceAtAllIsAnError) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "notes.db") << "not a database";
  EXPECT_THROW(analyze_cluster(dir_), RankSetError);
  EXPECT_THROW(analyze_cluster(dir_ / "absent"), RankSetError);
}

TEST_F(ClusterTest, SummaryRoundTripsThroughItsSerializedForm) {
  write_cluster_traces(dir_, {.compute_factor = {1, 3}, .ring = true});
  const RankSummary s = summarize_rank(dir_ / cluster_rank_file(1));
  EXPECT_EQ(s.rank, 1);
  EXPECT_EQ(s.world_size, 4);
  EXPECT_EQ(s.node, 0);
  EXPECT_EQ(s.steps.size(), 3u);
  EXPECT_EQ(s.collectives.size(), 9u);  // an allreduce, a send and a recv per step
  ASSERT_EQ(s.communicators.size(), 1u);
  EXPECT_EQ(s.communicators[0].members, (std::vector<int>{0, 1, 2, 3}));
  const std::string bytes = serialize(s);
  EXPECT_EQ(deserialize(bytes), s);

  const RankSummary unreadable{RankFile{.path = "x.db", .error = "not an npuscope trace"}};
  EXPECT_EQ(deserialize(serialize(unreadable)), unreadable);
  RankSummary odd = s;
  odd.meta_problem = "META node is 'n', not a node number";
  EXPECT_EQ(deserialize(serialize(odd)), odd);

  EXPECT_THROW(deserialize("garbage"), SummaryFormatError);
  EXPECT_THROW(deserialize(bytes.substr(0, bytes.size() - 3)), SummaryFormatError);
  std::string newer = bytes;
  newer[7] = 99;  // the version byte
  EXPECT_THROW(deserialize(newer), SummaryFormatError);
  EXPECT_THROW(deserialize(bytes + "x"), SummaryFormatError);
}

TEST_F(ClusterTest, MergeOfDeserializedSummariesEqualsTheDirectAnalysis) {
  // What an MPI scale-out does: each process summarizes its share, the bytes are gathered, merged.
  write_cluster_traces(dir_, {.compute_factor = {1, 1, 2, 1}, .ring = true});
  std::vector<RankSummary> gathered;
  for (int r = 3; r >= 0; --r) gathered.push_back(deserialize(serialize(summarize_rank(dir_ / cluster_rank_file(r)))));
  const ClusterReport merged = merge(std::move(gathered));
  const ClusterReport direct = analyze_cluster(dir_, {.threads = 3});
  EXPECT_EQ(to_json(cluster_tables(merged)), to_json(cluster_tables(direct)));
}

TEST_F(ClusterTest, TablesUseMsprofAnalyzeNames) {
  write_cluster_traces(dir_, {.compute_factor = {1, 1, 2, 1}, .ring = true});
  const Report report = cluster_tables(analyze_cluster(dir_));
  const Table* steps = report.find("cluster_step_trace_time");
  ASSERT_NE(steps, nullptr);
  std::vector<std::string> names;
  for (const Column& c : steps->spec->columns) names.emplace_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"Step", "Type", "Index", "Computing", "Communication(Not Overlapped)",
                                             "Overlapped", "Communication", "Free", "Overlap(%)"}));
  const Table* comm = report.find("cluster_communication");
  ASSERT_NE(comm, nullptr);
  EXPECT_GE(comm->spec->column_index("Wait Time Ratio"), 0);
  EXPECT_GE(comm->spec->column_index("Transit Time(ms)"), 0);
  EXPECT_GE(report.find("cluster_communication_matrix")->spec->column_index("Bandwidth(GB/s)"), 0);
  const Table* summary = report.find("cluster_summary");
  EXPECT_EQ(std::get<std::vector<std::string>>(summary->rows[0][3]),
            (std::vector<std::string>{"2 (Computing, Communication Wait)"}));
  std::ostringstream text;
  write_text(report, text);
  EXPECT_NE(text.str().find("Step trace time"), std::string::npos);
}

TEST_F(ClusterTest, ACollectiveOfAnotherKindOrSizeIsAMismatch) {
  // merge() on summaries built by hand: what an MPI scale-out would hand it.
  const auto rank = [](int r, std::int32_t kind, std::int64_t bytes) {
    RankSummary s{RankFile{.path = "r" + std::to_string(r), .rank = r, .world_size = 2}};
    s.communicators.push_back({"g", {0, 1}});
    s.collectives.push_back({.communicator = 0, .sequence = 0, .kind = kind, .bytes = bytes, .end_ns = 10});
    s.collectives.push_back({.communicator = 0, .sequence = 1, .kind = 0, .bytes = 8, .end_ns = 20});
    return s;
  };
  const int allreduce = static_cast<int>(npuscope::CollectiveKind::kAllReduce);
  const int allgather = static_cast<int>(npuscope::CollectiveKind::kAllGather);
  ClusterReport r = merge({rank(0, allreduce, 100), rank(1, allgather, 100)});
  ASSERT_EQ(r.mismatched_collectives, 1);
  EXPECT_NE(r.problems.back().detail.find("g #0: rank 0: allreduce of 100 B, rank 1: allgather of 100 B"),
            std::string::npos)
      << r.problems.back().detail;
  r = merge({rank(0, allreduce, 100), rank(1, allreduce, 64)});
  ASSERT_EQ(r.mismatched_collectives, 1);
  EXPECT_NE(r.problems.back().detail.find("rank 1: allreduce of 64 B"), std::string::npos) << r.problems.back().detail;
  EXPECT_EQ(merge({rank(0, allreduce, 100), rank(1, allreduce, 100)}).mismatched_collectives, 0);
}

TEST_F(ClusterTest, ARankThatWaitsIsNotNamedForItsFreeTime) {
  // Rank 1's host launched late (more Free), but rank 0 computed longer still: rank 1 waited for it
  // at the collective anyway, and only rank 0 holds the job back.
  const auto rank = [](int r, std::int64_t computing, std::int64_t free, std::int64_t wait) {
    RankSummary s{RankFile{.path = "r" + std::to_string(r), .rank = r, .world_size = 3}};
    s.steps.push_back({.step = 0, .start_ns = 0, .end_ns = 1'000'000, .computing_ns = computing, .free_ns = free});
    s.communicators.push_back({"g", {0, 1, 2}});
    s.collectives.push_back({.communicator = 0,
                             .sequence = 0,
                             .kind = 0,
                             .bytes = 8,
                             .arrival_ns = 0,
                             .start_ns = wait,
                             .end_ns = wait + 10});
    return s;
  };
  const ClusterReport r =
      merge({rank(0, 600'000, 0, 0), rank(1, 300'000, 200'000, 100'000), rank(2, 300'000, 0, 300'000)});
  ASSERT_EQ(r.slow_ranks.size(), 1u);
  EXPECT_EQ(r.slow_ranks[0].rank, 0);
  EXPECT_EQ(r.parts[3].part, "Free");
  EXPECT_EQ(r.parts[3].max_rank, 1);
  EXPECT_EQ(r.parts[3].slow_rank, -1);
}

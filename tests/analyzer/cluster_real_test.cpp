// The cluster analysis on rank traces shaped like imports of a real job's rank exports
// (real_trace_util.h: META source, a real device name, absolute timestamps, HCCL ops with their
// link-level HCCL_TASK tasks): two ranks of eight present, the six others reported missing; the
// communication matrix per communicator from the link rows (COMMUNICATION_LINK, each under its
// collective's task).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "analyzer/cluster_trace_util.h"
#include "npuscope/analyzer/cluster.h"
#include "real_trace_util.h"

using namespace npuscope;
using namespace npuscope::analyzer;
using namespace npuscope::testing;

namespace {

class ClusterRealTest : public RankTracesTest {
 protected:
  // Rank `rank` of 8 (an Atlas 800T A2 server): an allreduce on hccl_world_group (ranks 0-7) of
  // 8 MiB, sending 1 MiB to each of its peers over HCCS, and a send to rank (rank + 1) % 8 on a
  // pipeline group "pp" of the two, over RDMA.
  void write_rank(int rank) {
    std::filesystem::create_directories(dir_);
    RealTrace t((dir_ / ("rank" + std::to_string(rank) + ".db")).string(), "ascend_pytorch_profiler_db", "Ascend910B");
    collector::TraceWriter& w = t.writer();
    w.set_meta(collector::kMetaRank, std::to_string(rank));
    w.set_meta(collector::kMetaWorldSize, "8");
    const int peer = (rank + 1) % 8;
    w.add(collector::CommunicatorRow{.communicator_id = 11,
                                     .name_id = t.id("hccl_world_group"),
                                     .rank = rank,
                                     .size = 8,
                                     .members_id = t.id("0,1,2,3,4,5,6,7")});
    w.add(collector::CommunicatorRow{.communicator_id = 12,
                                     .name_id = t.id("pp"),
                                     .rank = 0,
                                     .size = 2,
                                     .members_id = t.id(std::to_string(rank) + "," + std::to_string(peer))});
    const std::int64_t ar = t.task({.type = TaskType::kCommunication,
                                    .name = "hcom_allReduce__1",
                                    .op_type = "hcom_allReduce_",
                                    .start_us = 100,
                                    .end_us = 300,
                                    .stream = 4});
    w.add(collector::CommunicationRow{.task_id = ar,
                                      .communicator_id = 11,
                                      .sequence = 0,
                                      .kind = static_cast<std::int32_t>(CollectiveKind::kAllReduce),
                                      .bytes = 8 << 20,
                                      .arrival_ns = RealTrace::at_us(100),
                                      .start_ns = RealTrace::at_us(100),
                                      .end_ns = RealTrace::at_us(300)});
    for (int p = 0; p < 8; ++p) {
      if (p == rank) continue;
      t.task({.type = TaskType::kCommunicationTask, .name = "Memcpy", .start_us = 100, .end_us = 120, .stream = 4});
      w.add(collector::CommunicationLinkRow{.task_id = ar,
                                            .peer_rank = p,
                                            .transport = static_cast<std::int32_t>(LinkTransport::kHccs),
                                            .bytes = 1 << 20,
                                            .time_ns = 20'000});
    }
    const std::int64_t send = t.task({.type = TaskType::kCommunication,
                                      .name = "hcom_send__2",
                                      .op_type = "hcom_send_",
                                      .start_us = 400,
                                      .end_us = 500,
                                      .stream = 5});
    w.add(collector::CommunicationRow{.task_id = send,
                                      .communicator_id = 12,
                                      .sequence = 0,
                                      .kind = static_cast<std::int32_t>(CollectiveKind::kSend),
                                      .bytes = 4 << 20,
                                      .root_or_peer = peer,
                                      .arrival_ns = RealTrace::at_us(400),
                                      .start_ns = RealTrace::at_us(400),
                                      .end_ns = RealTrace::at_us(500)});
    t.task({.type = TaskType::kCommunicationTask, .name = "RDMASend", .start_us = 400, .end_us = 500, .stream = 5});
    w.add(collector::CommunicationLinkRow{.task_id = send,
                                          .peer_rank = peer,
                                          .transport = static_cast<std::int32_t>(LinkTransport::kRdma),
                                          .bytes = 4 << 20,
                                          .time_ns = 100'000});
    t.finalize();
  }
};

}  // namespace

TEST_F(ClusterRealTest, TwoRanksOfEightPresentTheSixOthersReportedMissing) {
  write_rank(0);
  write_rank(5);
  const ClusterReport r = analyze_cluster(dir_);
  EXPECT_EQ(r.ranks, (std::vector<int>{0, 5}));
  EXPECT_EQ(r.world_size, 8);
  std::vector<int> missing;
  for (const RankSetProblem& p : r.problems) {
    if (p.kind == "missing rank") missing.push_back(p.rank);
  }
  EXPECT_EQ(missing, (std::vector<int>{1, 2, 3, 4, 6, 7}));
  const Report tables = cluster_tables(r);
  const Table* summary = tables.find("cluster_summary");
  ASSERT_NE(summary, nullptr);
}

TEST_F(ClusterRealTest, TheMatrixPerCommunicatorFromTheLinkRows) {
  write_rank(0);
  write_rank(5);
  const ClusterReport r = analyze_cluster(dir_);
  // Rank 0: 7 HCCS links in hccl_world_group, 1 RDMA link in pp; rank 5 likewise.
  ASSERT_EQ(r.matrix.size(), 16u);
  const auto entry = [&](const std::string& communicator, int src, int dst) -> const MatrixEntry* {
    const auto it = std::find_if(r.matrix.begin(), r.matrix.end(), [&](const MatrixEntry& e) {
      return e.communicator == communicator && e.src == src && e.dst == dst;
    });
    return it == r.matrix.end() ? nullptr : &*it;
  };
  const MatrixEntry* world = entry("hccl_world_group", 0, 3);
  ASSERT_NE(world, nullptr);
  EXPECT_EQ(world->transport, static_cast<std::int32_t>(LinkTransport::kHccs));
  EXPECT_EQ(world->bytes, 1 << 20);
  EXPECT_EQ(world->time_ns, 20'000);
  EXPECT_EQ(world->transfers, 1);
  const MatrixEntry* pp = entry("pp", 5, 6);
  ASSERT_NE(pp, nullptr);
  EXPECT_EQ(pp->transport, static_cast<std::int32_t>(LinkTransport::kRdma));
  EXPECT_EQ(pp->bytes, 4 << 20);
  EXPECT_EQ(entry("hccl_world_group", 5, 6)->bytes, 1 << 20);  // the same pair in the other communicator
  // The table names the communicator of each row.
  const Report tables = cluster_tables(r);
  const Table* m = tables.find("cluster_communication_matrix");
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->rows.size(), 16u);
  EXPECT_EQ(std::get<std::string>(*m->cell(0, "Communicator")), "hccl_world_group");
  EXPECT_EQ(std::get<std::string>(*m->cell(0, "Src-Dst")), "0-1");
}

TEST_F(ClusterRealTest, TheSummarysSerializedFormKeepsTheCommunicator) {
  write_rank(0);
  const RankSummary s = summarize_rank(dir_ / "rank0.db");
  ASSERT_FALSE(s.links.empty());
  EXPECT_GE(s.links.front().communicator, 0);
  EXPECT_EQ(deserialize(serialize(s)), s);
}

// Note [Communication matrix per op] on summaries whose link speeds are known: rank 0 sends to rank 1
// in four all-reduces of step 5 (1, 4, 2 and 3 GB/s, in that order) and one send; rank 1 to rank 0
// in one all-reduce only.
TEST(ClusterOpMatrixTest, PerOpEntriesTheirTypesTopMiddleBottomTotalAndTheGroupsTotal) {
  const auto hccs = static_cast<std::int32_t>(LinkTransport::kHccs);
  std::vector<RankSummary> ranks;
  for (int r = 0; r < 2; ++r) {
    RankSummary s{RankFile{.path = "r" + std::to_string(r), .rank = r, .world_size = 2}};
    s.steps = {{.step = 5, .start_ns = 0, .end_ns = 1'000'000}};
    s.communicators = {{"hccl_world_group", {0, 1}}};
    const int ops = r == 0 ? 4 : 1;
    for (int i = 0; i < ops; ++i) {
      s.link_ops.push_back({"hcom_allReduce__1_" + std::to_string(i) + "_1", 0, 1000 * i});
      const std::int64_t gbps[] = {1, 4, 2, 3};
      s.op_links.push_back({.op = i, .dst = 1 - r, .transport = hccs, .bytes = gbps[i] * 1000, .time_ns = 1000});
    }
    if (r == 0) {
      s.link_ops.push_back({"hcom_send__7_0_1", 0, 9000});
      s.op_links.push_back({.op = 4, .dst = 1, .transport = hccs, .bytes = 500, .time_ns = 1000});
    }
    ranks.push_back(std::move(s));
  }
  const ClusterReport report = merge(ranks);
  std::map<std::pair<std::string, std::string>, const OpMatrixEntry*> by;  // (entry, src-dst)
  for (const OpMatrixEntry& e : report.op_matrix) {
    EXPECT_EQ(e.step, 5);
    EXPECT_EQ(e.group, "hccl_world_group");
    by[{e.hccl_op, std::to_string(e.src) + "-" + std::to_string(e.dst)}] = &e;
  }
  const auto op = [&](const std::string& entry, const std::string& link) -> std::string {
    const auto it = by.find({entry, link});
    return it == by.end() ? "(none)" : it->second->op;
  };
  EXPECT_EQ(op("hcom_allReduce__1_2_1", "0-1"), "hcom_allReduce__1_2_1");
  // Rank 0's four by bandwidth: _1 (4), _3 (3), _2 (2), _0 (1).
  EXPECT_EQ(op("allreduce-top1", "0-1"), "hcom_allReduce__1_1_1");
  EXPECT_EQ(op("allreduce-middle", "0-1"), "hcom_allReduce__1_2_1");
  EXPECT_EQ(op("allreduce-bottom1", "0-1"), "hcom_allReduce__1_0_1");
  EXPECT_EQ(op("allreduce-bottom2", "0-1"), "hcom_allReduce__1_2_1");
  EXPECT_EQ(op("allreduce-bottom3", "0-1"), "hcom_allReduce__1_3_1");
  EXPECT_EQ(by.at({"allreduce-total", "0-1"})->bytes, 10'000);
  EXPECT_EQ(by.at({"allreduce-total", "0-1"})->time_ns, 4'000);
  // Rank 1's one op is each of them.
  for (const char* stat : {"top1", "middle", "bottom1", "bottom2", "bottom3"}) {
    EXPECT_EQ(op(std::string("allreduce-") + stat, "1-0"), "hcom_allReduce__1_0_1") << stat;
  }
  // The send: p2p, its own type and total; the group's total, collective and p2p apart.
  const OpMatrixEntry* send = by.at({"send-top1", "0-1"});
  EXPECT_TRUE(send->p2p);
  EXPECT_EQ(send->bytes, 500);
  int totals = 0;
  for (const OpMatrixEntry& e : report.op_matrix) {
    if (e.hccl_op != "Total Op Info" || e.src != 0) continue;
    EXPECT_EQ(e.bytes, e.p2p ? 500 : 10'000);
    ++totals;
  }
  EXPECT_EQ(totals, 2);
  // Rows: per step and group, the collectives' entries before the p2p ones; each op's rows first.
  EXPECT_EQ(report.op_matrix.front().hccl_op, "hcom_allReduce__1_0_1");
  EXPECT_EQ(report.op_matrix.back().hccl_op, "Total Op Info");
  EXPECT_TRUE(report.op_matrix.back().p2p);
  // And the summary's byte form keeps them; a link of an op it does not have is refused.
  EXPECT_EQ(deserialize(serialize(ranks[0])), ranks[0]);
  RankSummary damaged = ranks[0];
  damaged.op_links[0].op = 9;
  EXPECT_THROW(deserialize(serialize(damaged)), SummaryFormatError);
}

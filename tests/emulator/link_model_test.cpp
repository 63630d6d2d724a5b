// The link model (Note [Link model] in emulator/link_model.h): ring, H-D_R and full-mesh times
// computed by hand on round constants, hierarchical collectives across servers, the links each rank
// sends over, HCCL_ALGO, and the fit to the published collective figures (CALIBRATION.md C1, C2).
#include <gtest/gtest.h>

#include <cstdlib>

#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/link_model.h"

using namespace npuscope;
using namespace npuscope::emulator;

namespace {

// α = 10 µs, HCCS 2 GB/s per pair, RoCE 1 GB/s, P2P 4 GB/s, γ = 3 / (3 GB/s · 1) = 1 ns per byte.
DeviceSpec round_spec(int ranks_per_node) {
  DeviceSpec s = preset_spec("ascend910b");
  s.collective_latency_ns = 10'000;
  s.intra_node_link_bandwidth = 2e9;
  s.inter_node_bandwidth = 1e9;
  s.p2p_bandwidth = 4e9;
  s.memory_bandwidth = 3e9;
  s.memory_efficiency = 1.0;
  s.ranks_per_node = ranks_per_node;
  return s;
}

CollectiveCost cost(const DeviceSpec& spec, int ranks, CollectiveKind kind, std::uint64_t bytes,
                    const char* hccl_algo = "", int rank = 0, int root_or_peer = 0) {
  return collective_cost(spec, CommTopology::uniform(ranks, spec.ranks_per_node), {kind, bytes, rank, root_or_peer},
                         AlgorithmChoice::parse(hccl_algo));
}

constexpr std::uint64_t kMB = 1'000'000;

}  // namespace

// One rank per server: every link is RoCE, and level 1's algorithm is the whole story.
TEST(LinkModel, RingTimesAreHockneysFormulas) {
  const DeviceSpec s = round_spec(1);
  const char* ring = "level0:NA;level1:ring";
  // AllReduce 2(p-1)α + 2(p-1)/p·nβ + (p-1)/p·nγ: 60 µs + 1500 µs + 750 µs.
  EXPECT_EQ(cost(s, 4, CollectiveKind::kAllReduce, kMB, ring).transfer_ns, 2'310'000u);
  EXPECT_EQ(cost(s, 4, CollectiveKind::kAllReduce, kMB, ring).steps, 6u);
  // AllGather (p-1)α + (p-1)/p·nβ: 30 + 750 µs; ReduceScatter adds (p-1)/p·nγ = 750 µs.
  EXPECT_EQ(cost(s, 4, CollectiveKind::kAllGather, kMB, ring).transfer_ns, 780'000u);
  EXPECT_EQ(cost(s, 4, CollectiveKind::kReduceScatter, kMB, ring).transfer_ns, 1'530'000u);
  // Broadcast (p-1)(α + nβ).
  EXPECT_EQ(cost(s, 4, CollectiveKind::kBroadcast, kMB, ring).transfer_ns, 3'030'000u);
  EXPECT_EQ(cost(s, 4, CollectiveKind::kAllReduce, kMB, ring).algorithm, CollectiveAlgorithm::kRing);
}

TEST(LinkModel, HalvingDoublingTimesFoldExtraRanks) {
  const DeviceSpec s = round_spec(1);
  const char* hdr = "level0:NA;level1:H-D_R";
  // p = 4: 2·log2(p)α + 2(p-1)/p·nβ + (p-1)/p·nγ = 40 + 1500 + 750 µs.
  EXPECT_EQ(cost(s, 4, CollectiveKind::kAllReduce, kMB, hdr).transfer_ns, 2'290'000u);
  // p = 3 (p' = 2): (2·1 + 2)α + (2·1/2 + 2)nβ + (1/2 + 1)nγ = 40 + 3000 + 1500 µs.
  EXPECT_EQ(cost(s, 3, CollectiveKind::kAllReduce, kMB, hdr).transfer_ns, 4'540'000u);
  // Broadcast ceil(log2 p)(α + nβ), p = 5: 3 · 1010 µs.
  EXPECT_EQ(cost(s, 5, CollectiveKind::kBroadcast, kMB, hdr).transfer_ns, 3'030'000u);
  EXPECT_EQ(cost(s, 4, CollectiveKind::kAllGather, kMB, hdr).transfer_ns, 770'000u);  // 2α + 3/4·nβ
}

TEST(LinkModel, DefaultLevelOneIsRingUnlessTheServerCountIsAPowerOfTwo) {
  const DeviceSpec s = round_spec(1);
  EXPECT_EQ(cost(s, 4, CollectiveKind::kAllReduce, kMB).algorithm, CollectiveAlgorithm::kHalvingDoubling);
  EXPECT_EQ(cost(s, 3, CollectiveKind::kAllReduce, kMB).algorithm, CollectiveAlgorithm::kRing);
  EXPECT_EQ(cost(s, 6, CollectiveKind::kAllGather, kMB).algorithm, CollectiveAlgorithm::kRing);
}

// Inside one server: the full mesh, every peer at once.
TEST(LinkModel, FullMeshInsideAServer) {
  const DeviceSpec s = round_spec(8);
  // AllGather α + n/p·β: 10 + (8 MB / 8) / 2 GB/s = 510 µs.
  EXPECT_EQ(cost(s, 8, CollectiveKind::kAllGather, 8 * kMB).transfer_ns, 510'000u);
  // AllReduce 2α + 2n/p·β + (p-1)/p·nγ: 20 + 1000 + 7000 µs.
  EXPECT_EQ(cost(s, 8, CollectiveKind::kAllReduce, 8 * kMB).transfer_ns, 8'020'000u);
  EXPECT_EQ(cost(s, 8, CollectiveKind::kAllReduce, 8 * kMB).algorithm, CollectiveAlgorithm::kFullMesh);
  const CollectiveCost ag = cost(s, 8, CollectiveKind::kAllGather, 8 * kMB, "", 3);
  ASSERT_EQ(ag.sends.size(), 7u);
  for (const LinkSend& l : ag.sends) {
    EXPECT_NE(l.peer, 3);
    EXPECT_EQ(l.bytes, kMB);
    EXPECT_EQ(l.transport, LinkTransport::kHccs);
    EXPECT_EQ(l.time_ns, 510'000u);
  }
}

// Two servers of 8: intra ReduceScatter, inter AllReduce of 1/8 on every port, intra AllGather.
TEST(LinkModel, AcrossServersAllReduceIsHierarchical) {
  const DeviceSpec s = round_spec(8);
  // RS: 10 + 1000 + 14000; AR of 2 MB over 2 servers (H-D_R): 20 + 2000 + 1000; AG: 10 + 1000.
  const CollectiveCost c = cost(s, 16, CollectiveKind::kAllReduce, 16 * kMB, "", 5);
  EXPECT_EQ(c.transfer_ns, 19'040'000u);
  EXPECT_EQ(c.algorithm, CollectiveAlgorithm::kHalvingDoubling);
  int rdma = 0, hccs = 0;
  for (const LinkSend& l : c.sends) {
    if (l.transport == LinkTransport::kRdma) {
      ++rdma;
      EXPECT_EQ(l.peer, 13);        // the same local index on the other server
      EXPECT_EQ(l.bytes, 2 * kMB);  // 2 · n/q · d/p' with d = 1, p' = 2
    } else {
      ++hccs;
      EXPECT_EQ(l.bytes, 4 * kMB);  // RS and AG: 2 · n/q
    }
  }
  EXPECT_EQ(rdma, 1);
  EXPECT_EQ(hccs, 7);
}

TEST(LinkModel, RingSendsGoToTheNextRankOnly) {
  const DeviceSpec s = round_spec(1);
  const CollectiveCost c = cost(s, 4, CollectiveKind::kAllReduce, kMB, "level0:NA;level1:ring", 3);
  ASSERT_EQ(c.sends.size(), 1u);
  EXPECT_EQ(c.sends[0].peer, 0);
  EXPECT_EQ(c.sends[0].bytes, 1'500'000u);
  EXPECT_EQ(c.sends[0].transport, LinkTransport::kRdma);
  EXPECT_EQ(c.sends[0].time_ns, 6 * 10'000u + 1'500'000u);
}

TEST(LinkModel, SendAndRecvTakeTheP2pLinkInAServerAndRoceAcross) {
  const DeviceSpec s = round_spec(8);
  const CollectiveCost in_server = cost(s, 16, CollectiveKind::kSend, 4 * kMB, "", 0, 1);
  EXPECT_EQ(in_server.transfer_ns, 1'010'000u);  // α + n / 4 GB/s
  ASSERT_EQ(in_server.sends.size(), 1u);
  EXPECT_EQ(in_server.sends[0].transport, LinkTransport::kHccs);
  const CollectiveCost across = cost(s, 16, CollectiveKind::kRecv, 4 * kMB, "", 9, 1);
  EXPECT_EQ(across.transfer_ns, 4'010'000u);  // α + n / 1 GB/s
  EXPECT_TRUE(across.sends.empty());          // the sender's record carries the link
  EXPECT_THROW(cost(s, 16, CollectiveKind::kSend, kMB, "", 2, 2), InvalidArgument);
  EXPECT_THROW(cost(s, 16, CollectiveKind::kBroadcast, kMB, "", 2, 16), InvalidArgument);
}

TEST(LinkModel, OneRankCostsNothing) {
  const CollectiveCost c = cost(round_spec(8), 1, CollectiveKind::kAllReduce, kMB);
  EXPECT_EQ(c.transfer_ns, 0u);
  EXPECT_TRUE(c.sends.empty());
}

TEST(LinkModel, HcclAlgoPerCollectiveAndErrors) {
  const AlgorithmChoice c = AlgorithmChoice::parse("allreduce=level0:NA;level1:ring/allgather=level0:NA;level1:H-D_R");
  EXPECT_EQ(c.level1[static_cast<int>(CollectiveKind::kAllReduce)], CollectiveAlgorithm::kRing);
  EXPECT_EQ(c.level1[static_cast<int>(CollectiveKind::kAllGather)], CollectiveAlgorithm::kHalvingDoubling);
  EXPECT_FALSE(c.level1[static_cast<int>(CollectiveKind::kBroadcast)].has_value());
  EXPECT_FALSE(c.level0[static_cast<int>(CollectiveKind::kAllReduce)].has_value());  // NA: HCCL's choice
  for (const char* bad : {"level1:NHR", "level2:ring", "gather=level1:ring", "ring", "level0:pairwise"}) {
    try {
      AlgorithmChoice::parse(bad);
      ADD_FAILURE() << bad;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("HCCL_ALGO"), std::string::npos) << e.what();
    }
  }
}

// The preset against CALIBRATION.md: C1 all_gather 38 / 64 / 149 GB/s and all_reduce 18 / 30 / 72 GB/s
// on 2 / 4 / 8 cards of one node; C2 all_gather 36 / 73 / 147 GiB/s, all_to_all 37 / 69 (2, 4 cards)
// and 40.1 / 30.2 / 27.0 GiB/s on 16 / 32 / 64 cards across servers. Algorithm bandwidth = n / time
// for 1 GB. The two sources disagree by 20 % at 4 cards; the model sits within 25 % of each figure.
TEST(LinkModel, PresetReproducesThePublishedCollectiveBandwidths) {
  const DeviceSpec s = preset_spec("ascend910b");
  const double n = 1e9, gib = 1024.0 * 1024 * 1024;
  auto algbw = [&](CollectiveKind kind, int ranks) {
    return n / (static_cast<double>(cost(s, ranks, kind, static_cast<std::uint64_t>(n)).transfer_ns) * 1e-9);
  };
  struct Point {
    CollectiveKind kind;
    int ranks;
    double published;  // bytes/s
  };
  const Point points[] = {
      {CollectiveKind::kAllGather, 2, 38e9},       {CollectiveKind::kAllGather, 4, 64e9},
      {CollectiveKind::kAllGather, 8, 149e9},      {CollectiveKind::kAllReduce, 2, 18e9},
      {CollectiveKind::kAllReduce, 4, 30e9},       {CollectiveKind::kAllReduce, 8, 72e9},
      {CollectiveKind::kAllGather, 2, 36 * gib},   {CollectiveKind::kAllGather, 4, 73 * gib},
      {CollectiveKind::kAllGather, 8, 147 * gib},  {CollectiveKind::kAllToAll, 2, 37 * gib},
      {CollectiveKind::kAllToAll, 4, 69 * gib},    {CollectiveKind::kAllToAll, 16, 40.1 * gib},
      {CollectiveKind::kAllToAll, 32, 30.2 * gib}, {CollectiveKind::kAllToAll, 64, 27.0 * gib},
  };
  for (const Point& p : points) {
    const double model = algbw(p.kind, p.ranks);
    EXPECT_NEAR(model / p.published, 1.0, 0.25) << enum_name(p.kind) << " on " << p.ranks << " ranks: model "
                                                << model / 1e9 << " GB/s, published " << p.published / 1e9;
  }
}

// Collectives between ranks (Note [Collectives in virtual time] in emulator/collectives.h), with
// threads of this process as the ranks (local_transport_group), each on its own emulated device:
// the data every rank gets, the same bits on every rank, wait and transfer time when a rank arrives
// late, the links a ring of send/recv uses, sub-groups, and a rank that calls the wrong collective.
#include <gtest/gtest.h>

#include <functional>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "emulator/collective_recorder.h"
#include "npuscope/emulator/collectives.h"
#include "npuscope/emulator/float16.h"
#include "npuscope/emulator/runtime.h"
#include "npuscope/emulator/virtual_clock.h"
#include "npuscope/runtime_hooks/hook_api.h"

using namespace npuscope;
using namespace npuscope::emulator;
using npuscope::testing::CollectiveRecorder;

namespace {

// Runs `body(rank, communicator)` on `ranks` threads, each with device `rank` of a fresh runtime.
void run_ranks(int ranks, const std::function<void(int, Communicator&)>& body, std::vector<int> global = {}) {
  auto transports = local_transport_group(ranks);
  if (global.empty()) {
    global.resize(ranks);
    std::iota(global.begin(), global.end(), 0);
  }
  std::vector<std::thread> threads;
  std::vector<std::string> errors(ranks);
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      try {
        CommunicatorInfo info{"hccl_world_group", global, CommTopology::uniform(ranks, 8)};
        Communicator comm(transports[r], info);
        body(r, comm);
      } catch (const std::exception& e) {
        errors[r] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < ranks; ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
}

Stream stream_of(int rank) { return Runtime::get().device(rank).default_stream(); }

std::vector<float> values_of(int rank, int n) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = 0.1f * static_cast<float>(rank + 1) + 0.37f * static_cast<float>(i);
  return v;
}

class CollectivesTest : public ::testing::Test {
 protected:
  void SetUp() override { Runtime::configure({.num_devices = 4}); }
  void TearDown() override { Runtime::configure({}); }
};

}  // namespace

TEST_F(CollectivesTest, AllReduceGivesTheSameBitsOnEveryRank) {
  constexpr int kRanks = 4, kN = 1001;  // not a multiple of the ranks: the last chunk is short
  std::vector<std::vector<float>> got(kRanks), got_f16(kRanks), got_max(kRanks);
  run_ranks(kRanks, [&](int r, Communicator& comm) {
    const Tensor x = Tensor::from_floats(values_of(r, kN), {kN}, DType::kF32, DeviceRef::npu(r));
    got[r] = comm.all_reduce(x, ReduceOp::kSum, stream_of(r)).to_floats();
    const Tensor h = Tensor::from_floats(values_of(r, kN), {kN}, DType::kF16, DeviceRef::npu(r));
    got_f16[r] = comm.all_reduce(h, ReduceOp::kSum, stream_of(r)).to_floats();
    got_max[r] = comm.all_reduce(x, ReduceOp::kMax, stream_of(r)).to_floats();
  });
  for (int i = 0; i < kN; ++i) {
    float sum = 0, half_sum = 0;  // rank order, f32 accumulation; f16 inputs rounded first, result once
    for (int r = 0; r < kRanks; ++r) {
      sum += values_of(r, kN)[i];
      half_sum += round_to_half(values_of(r, kN)[i]);
    }
    ASSERT_EQ(got[0][i], sum) << i;
    ASSERT_EQ(got_f16[0][i], round_to_half(half_sum)) << i;
    ASSERT_EQ(got_max[0][i], values_of(kRanks - 1, kN)[i]) << i;
  }
  for (int r = 1; r < kRanks; ++r) {
    EXPECT_EQ(got[r], got[0]);
    EXPECT_EQ(got_f16[r], got_f16[0]);
  }
}

TEST_F(CollectivesTest, GatherScatterBroadcastAndAllToAllMoveTheRightChunks) {
  constexpr int kRanks = 3;
  std::vector<std::vector<float>> gathered(kRanks), scattered(kRanks), broadcast(kRanks), exchanged(kRanks);
  run_ranks(kRanks, [&](int r, Communicator& comm) {
    const Stream s = stream_of(r);
    // Rank r's row: 10r, 10r + 1, ... (3 elements: one per rank for the scatter and the exchange).
    const std::vector<float> mine = {10.0f * r, 10.0f * r + 1, 10.0f * r + 2};
    const Tensor x = Tensor::from_floats(mine, {3}, DType::kF32, DeviceRef::npu(r));
    gathered[r] = comm.all_gather(x, s).to_floats();
    scattered[r] = comm.reduce_scatter(x, ReduceOp::kSum, s).to_floats();
    broadcast[r] = comm.broadcast(x, 2, s).to_floats();
    exchanged[r] = comm.all_to_all(x, s).to_floats();
  });
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_EQ(gathered[r], (std::vector<float>{0, 1, 2, 10, 11, 12, 20, 21, 22})) << r;
    EXPECT_EQ(scattered[r], (std::vector<float>{30.0f + 3 * r})) << r;  // 0+10+20 + 3r
    EXPECT_EQ(broadcast[r], (std::vector<float>{20, 21, 22})) << r;
    EXPECT_EQ(exchanged[r], (std::vector<float>{0.0f + r, 10.0f + r, 20.0f + r})) << r;
  }
}

// Rank 1 reaches the collective a virtual second after rank 0: rank 0 waits for it, rank 1 does
// not wait, both end together, and both spend the link model's transfer time.
TEST_F(CollectivesTest, ALateRankMakesTheOthersWait) {
  CollectiveRecorder rec;
  run_ranks(2, [&](int r, Communicator& comm) {
    const Tensor x = Tensor::from_floats(values_of(r, 4096), {4096}, DType::kF32, DeviceRef::npu(r));
    if (r == 1) vclock::advance_by(1'000'000'000);
    comm.all_reduce(x, ReduceOp::kSum, stream_of(r)).to_floats();
  });
  ASSERT_EQ(rec.collectives.size(), 2u);
  const auto& early = rec.of(0, 0);
  const auto& late = rec.of(1, 0);
  EXPECT_EQ(late.arrival_ns, late.start_ns);                   // the last to arrive waits for nobody
  EXPECT_GT(early.start_ns - early.arrival_ns, 500'000'000u);  // rank 0 waited about the second
  EXPECT_EQ(early.start_ns, late.start_ns);
  EXPECT_EQ(early.end_ns, late.end_ns);
  EXPECT_EQ(early.last_rank, 1);
  EXPECT_EQ(late.last_rank, 1);
  const DeviceSpec spec = preset_spec("ascend910b");
  const auto expected = collective_cost(spec, CommTopology::uniform(2, 8), {CollectiveKind::kAllReduce, 4096 * 4, 0});
  EXPECT_EQ(early.end_ns - early.start_ns, expected.transfer_ns);
  EXPECT_EQ(early.algorithm, CollectiveAlgorithm::kFullMesh);
}

// A ring of send/recv (even ranks send first, odd ranks receive first: blocking sends in a ring
// would wait for each other): each rank's data reaches the next, and each sender names one link.
TEST_F(CollectivesTest, SendRecvRingNamesOneLinkPerSender) {
  constexpr int kRanks = 4;
  CollectiveRecorder rec;
  std::vector<std::vector<float>> got(kRanks);
  run_ranks(kRanks, [&](int r, Communicator& comm) {
    const Stream s = stream_of(r);
    const Tensor x = Tensor::from_floats(values_of(r, 256), {256}, DType::kF32, DeviceRef::npu(r));
    const int next = (r + 1) % kRanks, prev = (r + kRanks - 1) % kRanks;
    Tensor in;
    if (r % 2 == 0) {
      comm.send(x, next, s);
      in = comm.recv({256}, DType::kF32, prev, s);
    } else {
      in = comm.recv({256}, DType::kF32, prev, s);
      comm.send(x, next, s);
    }
    got[r] = in.to_floats();
  });
  int sends = 0;
  for (int r = 0; r < kRanks; ++r) EXPECT_EQ(got[r], values_of((r + kRanks - 1) % kRanks, 256)) << r;
  for (const auto& c : rec.collectives) {
    if (c.record.kind == CollectiveKind::kRecv) {
      EXPECT_TRUE(c.links.empty());
      continue;
    }
    ++sends;
    ASSERT_EQ(c.links.size(), 1u);
    EXPECT_EQ(c.links[0].peer_rank, c.record.root_or_peer);
    EXPECT_EQ(c.links[0].bytes, 1024u);
    EXPECT_EQ(c.links[0].transport, LinkTransport::kHccs);
  }
  EXPECT_EQ(sends, kRanks);
}

// Ranks 1 and 3 of a job as a group of two: the sum of their tensors, links named by world rank.
TEST_F(CollectivesTest, ASubGroupReducesItsMembersOnly) {
  CollectiveRecorder rec;
  std::vector<std::vector<float>> got(2);
  run_ranks(2,
            [&](int r, Communicator& comm) {
              const int world = r == 0 ? 1 : 3;
              const Tensor x = Tensor::from_floats(std::vector<float>{static_cast<float>(world)}, {1}, DType::kF32,
                                                   DeviceRef::npu(r));
              got[r] = comm.all_reduce(x, ReduceOp::kSum, stream_of(r)).to_floats();
            },
            {1, 3});
  EXPECT_EQ(got[0], std::vector<float>{4});
  EXPECT_EQ(got[1], std::vector<float>{4});
  ASSERT_EQ(rec.communicators.size(), 2u);
  EXPECT_EQ(rec.communicators[0].members, "1,3");
  EXPECT_EQ(rec.communicators[0].name, "hccl_world_group");
  for (const auto& c : rec.collectives) {
    ASSERT_EQ(c.links.size(), 1u);
    EXPECT_TRUE(c.links[0].peer_rank == 1 || c.links[0].peer_rank == 3);
  }
}

// Rank 1 calls all_gather where rank 0 calls all_reduce: both devices report it at the next sync.
TEST_F(CollectivesTest, DifferentCollectivesOnTwoRanksAreAFaultNotAHang) {
  std::vector<std::string> faults(2);
  auto transports = local_transport_group(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      Communicator comm(transports[r], {"hccl_world_group", {0, 1}, CommTopology::uniform(2, 8)});
      const Tensor x = Tensor::from_floats(std::vector<float>{1, 2}, {2}, DType::kF32, DeviceRef::npu(r));
      try {
        if (r == 0)
          comm.all_reduce(x, ReduceOp::kSum, stream_of(r)).to_floats();
        else
          comm.all_gather(x, stream_of(r)).to_floats();
      } catch (const InvalidArgument& e) {
        faults[r] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < 2; ++r) {
    EXPECT_NE(faults[r].find("every rank must call the same collectives"), std::string::npos) << faults[r];
    EXPECT_NE(faults[r].find(r == 0 ? "allgather" : "allreduce"), std::string::npos) << faults[r];
  }
}

TEST_F(CollectivesTest, BadArgumentsAreErrorsAtTheCall) {
  run_ranks(2, [&](int r, Communicator& comm) {
    const Tensor odd = Tensor::from_floats(std::vector<float>{1, 2, 3}, {3}, DType::kF32, DeviceRef::npu(r));
    EXPECT_THROW(comm.reduce_scatter(odd, ReduceOp::kSum, stream_of(r)), InvalidArgument);
    EXPECT_THROW(comm.send(odd, r, stream_of(r)), InvalidArgument);       // to itself
    EXPECT_THROW(comm.broadcast(odd, 5, stream_of(r)), InvalidArgument);  // no such root
    const Tensor on_cpu = Tensor::from_floats(std::vector<float>{1, 2}, {2}, DType::kF32);
    EXPECT_THROW(comm.all_reduce(on_cpu, ReduceOp::kSum, stream_of(r)), InvalidArgument);
  });
}

// EmbeddingBag: sum, mean and max against PyTorch 1.13's F.embedding_bag (empty bags, padding_idx,
// per-sample weights, include_last_offset, max's ties and NaNs), offset2bag, bag_size and
// max_indices, an AI CPU task on the device, and bad inputs and data.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "emulator/ext_op_test_util.h"
#include "emulator/task_end_records.h"
#include "npuscope/emulator/dispatch.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

class EmbeddingBagTest : public OpTest {};

const Tensor kWeight = floats({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2});
const Tensor kIndices = ints({0, 2, 1, 3, 3, 1}, {6});
const Tensor kOffsets = ints({0, 2, 2, 5}, {4});

Attrs mode(std::int64_t m, std::int64_t padding = -1, std::int64_t last = 0) {
  return {{"mode", m}, {"padding_idx", padding}, {"include_last_offset", last}};
}

}  // namespace

TEST_F(EmbeddingBagTest, SumAndMeanMatchPyTorch) {
  for (const Tensor& w : {kWeight, on_npu({kWeight})[0]}) {
    const auto in = [&](const Tensor& off) {
      return w.device().is_npu() ? on_npu({w, kIndices, off}) : std::vector<Tensor>{w, kIndices, off};
    };
    const std::vector<Tensor> sum = call_op("EmbeddingBag", in(kOffsets), mode(0));
    ASSERT_EQ(sum.size(), 3u);
    EXPECT_EQ(sum[0].shape(), (Shape{4, 2}));
    EXPECT_EQ(to_vec(sum[0]), (Doubles{6, 8, 0, 0, 17, 20, 3, 4}));
    EXPECT_EQ(sum[1].to_ints(), (I64s{0, 0, 2, 2, 2, 3}));  // offset2bag
    EXPECT_EQ(sum[2].to_ints(), (I64s{2, 0, 3, 1}));        // bag_size
    EXPECT_TRUE(all_close(to_vec(call_op("EmbeddingBag", in(kOffsets), mode(1))[0]),
                          {3, 4, 0, 0, 17.0 / 3, 20.0 / 3, 3, 4}, 1e-7, 0));
    // padding_idx 3 leaves bag 2 with one index (bag_size 1) and empties nothing else's mean.
    const std::vector<Tensor> padded = call_op("EmbeddingBag", in(kOffsets), mode(1, 3));
    EXPECT_EQ(to_vec(padded[0]), (Doubles{3, 4, 0, 0, 3, 4, 3, 4}));
    EXPECT_EQ(padded[2].to_ints(), (I64s{2, 0, 1, 1}));
    // include_last_offset: the last offset closes the last bag.
    EXPECT_EQ(to_vec(call_op("EmbeddingBag", in(ints({0, 2, 2, 5, 6}, {5})), mode(0, -1, 1))[0]),
              (Doubles{6, 8, 0, 0, 17, 20, 3, 4}));
  }
  const Tensor psw = floats({0.5f, 2, 1, -1, 1, 3}, {6});
  EXPECT_EQ(to_vec(call_op("EmbeddingBag", {kWeight, kIndices, kOffsets, psw}, mode(0))[0]),
            (Doubles{10.5, 13, 0, 0, 3, 4, 9, 12}));
}

// Hand-checked against torch.ops.aten._embedding_bag(..., mode=2) on the CPU.
TEST_F(EmbeddingBagTest, MaxMatchesPyTorch) {
  const Tensor w = floats({1, -2, 3, -2, 3, -5, -1, 0}, {4, 2});
  for (bool npu : {false, true}) {
    const auto in = [&](const Tensor& idx, const Tensor& off) {
      return npu ? on_npu({w, idx, off}) : std::vector<Tensor>{w, idx, off};
    };
    // Bags [2, 1], [], [0, 3, 3], [1]: the tie in bag 0's column 0 keeps the earlier row 2, bag 2's
    // column 1 takes row 3 (0 > -2) and not its repeat; the empty bag is zeros with max_indices 0.
    const std::vector<Tensor> max = call_op("EmbeddingBag", in(ints({2, 1, 0, 3, 3, 1}, {6}), kOffsets), mode(2));
    ASSERT_EQ(max.size(), 4u);
    EXPECT_EQ(to_vec(max[0]), (Doubles{3, -2, 0, 0, 1, 0, 3, -2}));
    EXPECT_EQ(max[1].to_ints(), (I64s{0, 0, 2, 2, 2, 3}));
    EXPECT_EQ(max[2].to_ints(), (I64s{2, 0, 3, 1}));
    EXPECT_EQ(max[3].shape(), (Shape{4, 2}));
    EXPECT_EQ(max[3].to_ints(), (I64s{2, 1, 0, 0, 0, 3, 1, 1}));
    // padding_idx 1 leaves bag 2 as [3, 3] and empties bag 3 (bag_size 0, zeros, max_indices 0).
    const std::vector<Tensor> padded = call_op("EmbeddingBag", in(kIndices, kOffsets), mode(2, 1));
    EXPECT_EQ(to_vec(padded[0]), (Doubles{3, -2, 0, 0, -1, 0, 0, 0}));
    EXPECT_EQ(padded[2].to_ints(), (I64s{2, 0, 2, 0}));
    EXPECT_EQ(padded[3].to_ints(), (I64s{2, 0, 0, 0, 3, 3, 0, 0}));
    const std::vector<Tensor> last = call_op("EmbeddingBag", in(kIndices, ints({0, 2, 2, 5, 6}, {5})), mode(2, -1, 1));
    EXPECT_EQ(last[3].to_ints(), (I64s{2, 0, 0, 0, 1, 3, 1, 1}));
  }
  // A NaN that comes first stays (nothing is greater than it); one that comes later never replaces.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor with_nan = floats({1, 5, static_cast<float>(nan), 2, 3, 5}, {3, 2});
  const std::vector<Tensor> r =
      call_op("EmbeddingBag", {with_nan, ints({0, 1, 2, 1, 0}, {5}), ints({0, 3}, {2})}, mode(2));
  const Doubles out = to_vec(r[0]);
  EXPECT_EQ((Doubles{out[0], out[1], out[3]}), (Doubles{3, 5, 5}));
  EXPECT_TRUE(std::isnan(out[2]));
  EXPECT_EQ(r[3].to_ints(), (I64s{2, 0, 1, 0}));
}

TEST_F(EmbeddingBagTest, MaxOnTheDeviceIsTheCpuKernel) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> value(-1, 1);
  std::vector<float> data(37 * 5);
  for (float& v : data) v = value(rng);
  const Tensor w = floats(data, {37, 5});
  const Tensor idx = ints({3, 36, 0, 0, 12, 7, 7, 30, 21, 5, 36, 1, 2}, {13});
  EXPECT_TRUE(npu_bytes_match_cpu("EmbeddingBag", {w, idx, ints({0, 4, 4, 9}, {4})}, mode(2, 7)));
}

TEST_F(EmbeddingBagTest, RunsAsAnAiCpuTask) {
  EndRecords log;
  (void)call_op("EmbeddingBag", on_npu({kWeight, kIndices, kOffsets}), mode(0))[0].cpu();
  ASSERT_EQ(log.ends.size(), 1u);
  EXPECT_EQ(std::string(log.ends[0].op_type), "EmbeddingBag");
  EXPECT_EQ(log.ends[0].task_type, npuscope::TaskType::kAiCpu);
}

TEST_F(EmbeddingBagTest, BadInputsAndDataNameTheProblem) {
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op("EmbeddingBag", {kWeight, kIndices, kOffsets}, mode(3));
                       }),
                       {"EmbeddingBag", "mode"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op("EmbeddingBag", {kWeight, kIndices, kOffsets, floats({1}, {1})}, mode(0));
                       }),
                       {"EmbeddingBag", "per_sample_weights"}));
  EXPECT_TRUE(
      mentions(error_of([&] {
                 call_op("EmbeddingBag", {kWeight, kIndices, kOffsets, floats({1, 1, 1, 1, 1, 1}, {6})}, mode(2));
               }),
               {"EmbeddingBag", "per_sample_weights", "mode 0"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op("EmbeddingBag", {kWeight, floats({0}, {1}), kOffsets}, mode(0));
                       }),
                       {"EmbeddingBag", "indices", "int32 or int64"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op("EmbeddingBag", {kIndices, kIndices, kOffsets}, mode(0));
                       }),
                       {"EmbeddingBag"}));
  // Bad data: a fault raised when the result is read, as every kernel fault.
  const std::vector<Tensor> npu = on_npu({kWeight, ints({0, 9}, {2}), ints({0}, {1})});
  EXPECT_TRUE(mentions(error_of([&] { call_op("EmbeddingBag", npu, mode(0))[0].cpu(); }), {"EmbeddingBag", "9"}));
  EXPECT_TRUE(mentions(error_of([&] { call_op("EmbeddingBag", npu, mode(2))[3].cpu(); }), {"EmbeddingBag", "9"}));
  const std::vector<Tensor> bad_offsets = on_npu({kWeight, kIndices, ints({1, 3}, {2})});
  EXPECT_TRUE(mentions(error_of([&] { call_op("EmbeddingBag", bad_offsets, mode(0))[0].cpu(); }),
                       {"EmbeddingBag", "offsets[0]"}));
}

// EmbeddingBag: sum and mean against PyTorch 1.13's F.embedding_bag (empty bags, padding_idx,
// per-sample weights, include_last_offset), offset2bag and bag_size, an AI CPU task on the device,
// and bad inputs and data.
#include <gtest/gtest.h>

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

TEST_F(EmbeddingBagTest, RunsAsAnAiCpuTask) {
  EndRecords log;
  (void)call_op("EmbeddingBag", on_npu({kWeight, kIndices, kOffsets}), mode(0))[0].cpu();
  ASSERT_EQ(log.ends.size(), 1u);
  EXPECT_EQ(std::string(log.ends[0].op_type), "EmbeddingBag");
  EXPECT_EQ(log.ends[0].task_type, npuscope::TaskType::kAiCpu);
}

TEST_F(EmbeddingBagTest, BadInputsAndDataNameTheProblem) {
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op("EmbeddingBag", {kWeight, kIndices, kOffsets}, mode(2));
                       }),
                       {"EmbeddingBag", "mode"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op("EmbeddingBag", {kWeight, kIndices, kOffsets, floats({1}, {1})}, mode(0));
                       }),
                       {"EmbeddingBag", "per_sample_weights"}));
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
  const std::vector<Tensor> bad_offsets = on_npu({kWeight, kIndices, ints({1, 3}, {2})});
  EXPECT_TRUE(mentions(error_of([&] { call_op("EmbeddingBag", bad_offsets, mode(0))[0].cpu(); }),
                       {"EmbeddingBag", "offsets[0]"}));
}

// The op pairing's stages (Note [Op pairing]) on ops whose keys are given: what each stage pairs,
// in which order, what it leaves, and the radix sort under them against std::stable_sort.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "npuscope/analyzer/op_pairing.h"

using namespace npuscope;
using namespace npuscope::analyzer;

namespace {

struct Op {
  PairingKeys keys;
};

// name, type, shapes (0: not recorded), call, renamed.
Op op(std::int32_t name, std::int32_t type, std::int32_t shapes, std::int32_t call = 0, std::int8_t renamed = 0) {
  return {{name, type, shapes, call, renamed}};
}

constexpr PairingStage kAll[] = {PairingStage::kName, PairingStage::kTypeShape, PairingStage::kTypeOrder};
constexpr PairingStage kNameAndShape[] = {PairingStage::kName, PairingStage::kTypeShape};

TEST(OpPairingTest, EachStagePairsWhatTheOnesBeforeLeft) {
  // names 1..9, types 20.., shapes 30..
  const std::vector<Op> reference = {op(1, 20, 30, 0), op(1, 20, 30, 1), op(2, 21, 31), op(3, 22, 0), op(4, 23, 32)};
  const std::vector<Op> subject = {op(1, 20, 30, 1), op(5, 21, 31), op(6, 22, 0), op(1, 20, 30, 0), op(7, 24, 33)};
  const OpPairing p = pair_ops(reference, subject, kAll);
  // In the subject's execution order: 1/call 1 by name, 5 by type+shape, 6 (no shapes) by type, 1/call 0.
  ASSERT_EQ(p.pairs.size(), 4u);
  EXPECT_EQ(p.pairs[0].reference, 1u);
  EXPECT_EQ(p.pairs[0].how, PairingStage::kName);
  EXPECT_EQ(p.pairs[1].reference, 2u);
  EXPECT_EQ(p.pairs[1].how, PairingStage::kTypeShape);
  EXPECT_EQ(p.pairs[2].reference, 3u);
  EXPECT_EQ(p.pairs[2].how, PairingStage::kTypeOrder);
  EXPECT_EQ(p.pairs[3].subject, 3u);
  EXPECT_EQ(p.pairs[3].reference, 0u);
  EXPECT_EQ(p.subject_only, std::vector<std::uint32_t>{4});
  EXPECT_EQ(p.reference_only, std::vector<std::uint32_t>{4});
}

// diff's stages: no type-only stage, and ops without recorded shapes never pair by type+shape.
TEST(OpPairingTest, WithoutTheTypeStageUnshapedOpsStayUnpaired) {
  const std::vector<Op> reference = {op(1, 20, 0), op(2, 21, 31)};
  const std::vector<Op> subject = {op(3, 20, 0), op(4, 21, 31)};
  const OpPairing p = pair_ops(reference, subject, kNameAndShape);
  ASSERT_EQ(p.pairs.size(), 1u);
  EXPECT_EQ(p.pairs[0].subject, 1u);
  EXPECT_EQ(p.pairs[0].how, PairingStage::kTypeShape);
  EXPECT_EQ(p.subject_only, std::vector<std::uint32_t>{0});
  EXPECT_EQ(p.reference_only, std::vector<std::uint32_t>{0});
}

// Within a key the k-th op of one side pairs with the k-th of the other, in execution order; a pair
// by name through the name map (either side renamed) says so.
TEST(OpPairingTest, EqualKeysPairInExecutionOrderAndTheNameMapIsNamed) {
  const std::vector<Op> reference = {op(9, 20, 30), op(8, 20, 30), op(7, 20, 30), op(5, 25, 35, 0, 1)};
  const std::vector<Op> subject = {op(1, 20, 30), op(2, 20, 30), op(5, 25, 35)};
  const OpPairing p = pair_ops(reference, subject, kAll);
  ASSERT_EQ(p.pairs.size(), 3u);
  EXPECT_EQ(p.pairs[0].reference, 0u);
  EXPECT_EQ(p.pairs[1].reference, 1u);
  EXPECT_EQ(p.pairs[2].reference, 3u);
  EXPECT_EQ(p.pairs[2].how, PairingStage::kNameMap);
  EXPECT_EQ(p.reference_only, std::vector<std::uint32_t>{2});
}

// A step of a run: call indexes count from the step's first call of each name, so that the same
// step of two runs (or two different steps) pair call by call.
TEST(OpPairingTest, CallIndexesAreRebasedToTheRange) {
  std::vector<Op> step7 = {op(1, 20, 30, 14), op(2, 21, 31, 7), op(1, 20, 30, 15), op(3, 22, 32, -5)};
  rebase_call_indexes(step7);
  EXPECT_EQ(step7[0].keys.call, 0);
  EXPECT_EQ(step7[1].keys.call, 0);
  EXPECT_EQ(step7[2].keys.call, 1);
  EXPECT_EQ(step7[3].keys.call, 0);
  std::vector<Op> step3 = {op(1, 20, 30, 6), op(1, 20, 30, 7), op(2, 21, 31, 3)};
  rebase_call_indexes(step3);
  const OpPairing p = pair_ops(step3, step7, kNameAndShape);
  ASSERT_EQ(p.pairs.size(), 3u);
  for (const OpPair& pair : p.pairs) EXPECT_EQ(pair.how, PairingStage::kName);
  EXPECT_EQ(p.pairs[2].reference, 1u);  // step 7's second call of name 1: step 3's second
}

// The radix sort is the stable sort by key, over keys that use every 16-bit digit, or few of them.
TEST(OpPairingTest, RadixSortIsAStableSortByKey) {
  std::mt19937_64 random(7);
  for (const std::uint64_t mask : {~std::uint64_t{0}, std::uint64_t{0xff}, std::uint64_t{0xffff0000'0000ffff}}) {
    std::vector<pairing_detail::SortKey> keys(5000);
    for (std::uint32_t i = 0; i < keys.size(); ++i) keys[i] = {random() & mask, i, 0};
    std::vector<pairing_detail::SortKey> expected = keys;
    std::stable_sort(expected.begin(), expected.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
    pairing_detail::radix_sort(keys);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      ASSERT_EQ(keys[i].key, expected[i].key) << i;
      ASSERT_EQ(keys[i].op, expected[i].op) << i;
    }
  }
}

}  // namespace

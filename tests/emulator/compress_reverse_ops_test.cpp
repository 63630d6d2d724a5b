// Compress (with and without an axis, a short condition, the count attribute) and ReverseSequence
// (both axis layouts, a bad length as a kernel fault), NPU bytes equal to the CPU's, and the errors.
#include <gtest/gtest.h>

#include <string>

#include "emulator/ext_op_test_util.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

using CompressReverseTest = OpTest;

const Tensor& x32() {  // [[1, 2], [3, 4], [5, 6]]
  static const Tensor t = floats({1, 2, 3, 4, 5, 6}, {3, 2});
  return t;
}

}  // namespace

TEST_F(CompressReverseTest, CompressAlongAnAxisOrFlat) {
  const Tensor cond = ints({0, 1, 1}, {3}, DType::kBool);
  const Attrs axis0{{"axis", std::int64_t{0}}, {"count", std::int64_t{2}}};
  const Tensor y = call_op1("Compress", {x32(), cond}, axis0);
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(to_vec(y), (Doubles{3, 4, 5, 6}));
  // A condition shorter than the axis: [1] along axis -1 keeps column 0.
  const Attrs last{{"axis", std::int64_t{-1}}, {"count", std::int64_t{1}}};
  EXPECT_EQ(to_vec(call_op1("Compress", {x32(), ints({1}, {1}, DType::kBool)}, last)), (Doubles{1, 3, 5}));
  // No axis: over the flattened input.
  const Tensor flat =
      call_op1("Compress", {x32(), ints({0, 1, 0, 0, 1}, {5}, DType::kBool)}, {{"count", std::int64_t{2}}});
  EXPECT_EQ(to_vec(flat), (Doubles{2, 5}));
  EXPECT_TRUE(npu_bytes_match_cpu("Compress", {x32(), cond}, axis0));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("Compress", {x32(), cond}, {{"axis", std::int64_t{0}}});
                       }),
                       {"Compress", "count"}));
  EXPECT_TRUE(mentions(error_of([&] { call_op1("Compress", {x32(), ints({1}, {1, 1})}, axis0); }), {"1-D"}));
}

TEST_F(CompressReverseTest, ReverseSequenceBothLayouts) {
  // time_axis 0, batch_axis 1: column b reversed over its first lens[b] rows.
  const Tensor x = floats({0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}, {4, 3});
  const Tensor y = call_op1("ReverseSequence", {x, ints({4, 1, 2}, {3})}, {});
  EXPECT_EQ(to_vec(y), (Doubles{3, 4, 9, 2, 5, 8, 1, 6, 10, 0, 7, 11}));
  // batch_axis 0, time_axis 1: row b reversed over its first lens[b] columns.
  const Attrs rows{{"batch_axis", std::int64_t{0}}, {"time_axis", std::int64_t{1}}};
  const Tensor r = call_op1("ReverseSequence", {floats({1, 2, 3, 4, 5, 6}, {2, 3}), ints({3, 2}, {2})}, rows);
  EXPECT_EQ(to_vec(r), (Doubles{3, 2, 1, 5, 4, 6}));
  EXPECT_TRUE(npu_bytes_match_cpu("ReverseSequence", {x, ints({4, 1, 2}, {3})}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("ReverseSequence", {x, ints({5, 1, 2}, {3})});
                       }),
                       {"ReverseSequence", "sequence_lens[0] = 5", "[0, 4]"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("ReverseSequence", {x, ints({1, 2}, {2})});
                       }),
                       {"sequence_lens", "[3]"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("ReverseSequence", {x, ints({1, 2, 3}, {3})}, {{"time_axis", std::int64_t{2}}});
                       }),
                       {"time_axis"}));
}

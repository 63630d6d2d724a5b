// Unique (unique_ops.cpp): sorted and first-occurrence order, the four outputs, unique slices along
// an axis, dtypes kept byte for byte, the NPU's AI CPU fallback, and a missing or wrong 'count'.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "emulator/op_test_util.h"
#include "npuscope/emulator/dispatch.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

using UniqueTest = OpTest;
using I64s = std::vector<std::int64_t>;

Tensor x6() { return floats({2, 1, 1, 3, 4, 3}, {6}); }

}  // namespace

TEST_F(UniqueTest, SortedGivesAscendingValuesAndTheirIndices) {
  const auto out = call_op("Unique", {x6()}, {{"count", std::int64_t{4}}});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(to_vec(out[0]), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(out[1].to_ints(), (I64s{1, 0, 3, 4}));        // first occurrences
  EXPECT_EQ(out[2].to_ints(), (I64s{1, 0, 0, 2, 3, 2}));  // inverse
  EXPECT_EQ(out[3].to_ints(), (I64s{2, 1, 2, 1}));        // counts
}

TEST_F(UniqueTest, UnsortedKeepsTheOrderOfFirstOccurrence) {
  const auto out = call_op("Unique", {x6()}, {{"count", std::int64_t{4}}, {"sorted", std::int64_t{0}}});
  EXPECT_EQ(to_vec(out[0]), (std::vector<double>{2, 1, 3, 4}));
  EXPECT_EQ(out[1].to_ints(), (I64s{0, 1, 3, 4}));
  EXPECT_EQ(out[2].to_ints(), (I64s{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ(out[3].to_ints(), (I64s{1, 2, 2, 1}));
}

// Columns (1, 2), (0, 5), (1, 2): two unique columns, (0, 5) first when sorted.
TEST_F(UniqueTest, AxisGivesUniqueSlicesOnCpuAndNpu) {
  const Tensor x = floats({1, 0, 1, 2, 5, 2}, {2, 3});
  const Attrs a{{"count", std::int64_t{2}}, {"axis", std::int64_t{-1}}};
  for (const DeviceRef dev : {DeviceRef::cpu(), DeviceRef::npu()}) {
    const auto out = call_op("Unique", {x.to(dev)}, a);
    EXPECT_EQ(out[0].shape(), (Shape{2, 2}));
    EXPECT_EQ(to_vec(out[0].cpu()), (std::vector<double>{0, 1, 5, 2}));
    EXPECT_EQ(out[1].cpu().to_ints(), (I64s{1, 0}));
    EXPECT_EQ(out[2].cpu().to_ints(), (I64s{1, 0, 1}));
    EXPECT_EQ(out[3].cpu().to_ints(), (I64s{1, 2}));
  }
}

TEST_F(UniqueTest, IntegersKeepTheirDtypeAndValues) {
  const Tensor x = Tensor::from_ints(I64s{7, -3, 7}, {3}, DType::kI32);
  const auto out = call_op("Unique", {x}, {{"count", std::int64_t{2}}});
  EXPECT_EQ(out[0].dtype(), DType::kI32);
  EXPECT_EQ(out[0].to_ints(), (I64s{-3, 7}));
}

TEST_F(UniqueTest, NaNsAreOneValueAfterTheNumbers) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto out = call_op("Unique", {floats({nan, 1, nan, -1}, {4})}, {{"count", std::int64_t{3}}});
  const auto y = to_vec(out[0]);
  ASSERT_EQ(y.size(), 3u);
  EXPECT_EQ(y[0], -1);
  EXPECT_EQ(y[1], 1);
  EXPECT_TRUE(std::isnan(y[2]));
  EXPECT_EQ(out[3].to_ints(), (I64s{1, 1, 2}));
}

TEST_F(UniqueTest, CountIsRequiredAndChecked) {
  EXPECT_TRUE(mentions(error_of([] { call_op("Unique", {x6()}); }), {"Unique", "'count'"}));
  EXPECT_TRUE(mentions(error_of([] {
                         call_op("Unique", {x6()}, {{"count", std::int64_t{7}}});
                       }),
                       {"Unique", "count 7", "6 values"}));
  EXPECT_TRUE(mentions(error_of([] {
                         call_op("Unique", {x6()}, {{"count", std::int64_t{3}}});
                       }),
                       {"Unique", "holds 4 unique", "'count' is 3"}));
}

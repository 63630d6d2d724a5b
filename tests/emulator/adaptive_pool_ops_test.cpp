// AdaptiveAvgPool2d and its gradient: overlapping, uneven windows against PyTorch 1.13 CPU values,
// NPU vs CPU, bad shapes.
#include <gtest/gtest.h>

#include <vector>

#include "emulator/ext_op_test_util.h"
#include "npuscope/emulator/dispatch.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

class AdaptivePoolTest : public OpTest {};

// x = arange(70).reshape(1, 2, 5, 7) % 11 - 3, pooled to 3 x 2 (windows of 2 or 3 rows, 4 columns).
Tensor input() {
  std::vector<float> v(70);
  for (int i = 0; i < 70; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i % 11 - 3);
  return floats(v, {1, 2, 5, 7});
}
const Doubles kPooled{
    2.0, 0.875, 2.4166666666666665, 1.75, 2.375, 1.25, 1.25, 1.5, 1.6666666666666667, 1.9166666666666667, 1.625, 0.5};

}  // namespace

TEST_F(AdaptivePoolTest, PoolMatchesPyTorch) {
  const BothBackends r = run_both("AdaptiveAvgPool2d", {input()}, {{"output_size", std::vector<std::int64_t>{3, 2}}});
  EXPECT_EQ(r.npu[0].shape(), (Shape{1, 2, 3, 2}));
  EXPECT_TRUE(all_close(to_vec(r.cpu[0]), kPooled, 1e-7, 1e-7));  // stored as f32
  EXPECT_TRUE(all_close(to_vec(r.npu[0]), kPooled, 1e-6, 1e-7));
}

TEST_F(AdaptivePoolTest, GradientSharesEachCellOverItsWindow) {
  std::vector<float> g(12);
  for (int i = 0; i < 12; ++i) g[static_cast<std::size_t>(i)] = 0.5f * static_cast<float>(i) - 1.0f;
  const Doubles first_row{-0.125, -0.125, -0.125, -0.1875, -0.0625, -0.0625, -0.0625};  // torch, row 0 of plane 0
  const Doubles overlap_row{-0.125,
                            -0.125,
                            -0.125,
                            -0.14583333333333334,
                            -0.020833333333333336,
                            -0.020833333333333336,
                            -0.020833333333333336};  // row 1: two windows meet
  const BothBackends r = run_both("AdaptiveAvgPool2dGrad", {floats(g, {1, 2, 3, 2})},
                                  {{"input_size", std::vector<std::int64_t>{1, 2, 5, 7}}});
  for (const Tensor& dx : {r.cpu[0], r.npu[0]}) {
    const auto v = to_vec(dx);
    ASSERT_EQ(v.size(), 70u);
    EXPECT_TRUE(all_close(Doubles(v.begin(), v.begin() + 7), first_row, 1e-6, 1e-7));
    EXPECT_TRUE(all_close(Doubles(v.begin() + 7, v.begin() + 14), overlap_row, 1e-6, 1e-7));
  }
}

TEST_F(AdaptivePoolTest, BadShapesNameTheOp) {
  EXPECT_THROW(call_op("AdaptiveAvgPool2d", {floats({1, 2}, {2})}, {{"output_size", std::vector<std::int64_t>{1, 1}}}),
               InvalidArgument);
  EXPECT_THROW(call_op("AdaptiveAvgPool2d", {input()}, {{"output_size", std::vector<std::int64_t>{0, 1}}}),
               InvalidArgument);
  EXPECT_THROW(call_op("AdaptiveAvgPool2dGrad", {floats({1, 2, 3, 4}, {1, 1, 2, 2})},
                       {{"input_size", std::vector<std::int64_t>{1, 2, 5, 7}}}),
               InvalidArgument);
}

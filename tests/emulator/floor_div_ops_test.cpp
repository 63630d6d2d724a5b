// FloorMod / FloorDiv / TruncateDiv: Python's and PyTorch's values (signs, halves, broadcasting, a zero divisor),
// NPU vs CPU golden in f32 and f16, and integer inputs refused.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "emulator/op_test_util.h"
#include "npuscope/emulator/errors.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

using FloorDivTest = OpTest;

}  // namespace

TEST_F(FloorDivTest, MatchPythonsOperators) {
  const Tensor a = floats({-7, 7, 5.5f, -5.5f, 6, -0.0f}, {6});
  const Tensor b = floats({3, -3, 2, 2, 3, 5}, {6});
  // Python: -7 % 3, 7 % -3, 5.5 % 2, -5.5 % 2, 6 % 3, -0.0 % 5 and the same with //.
  EXPECT_EQ(to_vec(call_op1("FloorMod", {a, b})), (std::vector<double>{2, -2, 1.5, 0.5, 0, 0}));
  EXPECT_EQ(to_vec(call_op1("FloorDiv", {a, b})), (std::vector<double>{-3, -3, 2, -3, 2, -0.0}));
  EXPECT_EQ(to_vec(call_op1("TruncateDiv", {a, b})), (std::vector<double>{-2, -2, 2, -2, 2, 0}));
  EXPECT_TRUE(std::signbit(to_vec(call_op1("FloorDiv", {a, b}))[5])) << "-0.0 // 5 is -0.0";
}

TEST_F(FloorDivTest, BroadcastsAndDividesByZeroAsIeee) {
  const Tensor a = floats({1, -1, 0, 4}, {2, 2});
  const Tensor zero = floats({0}, {1});
  const auto q = to_vec(call_op1("FloorDiv", {a, zero}));
  EXPECT_EQ(q[0], std::numeric_limits<double>::infinity());
  EXPECT_EQ(q[1], -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(q[2]));
  EXPECT_TRUE(std::isnan(to_vec(call_op1("FloorMod", {a, zero}))[0]));
  EXPECT_EQ(call_op1("FloorMod", {a, floats({3, -3}, {2})}).shape(), (Shape{2, 2}));
}

TEST_F(FloorDivTest, NpuMatchesGolden) {
  for (DType t : {DType::kF32, DType::kF16}) {
    const Tensor a = Tensor::uniform({64}, t, DeviceRef::cpu(), 1, -20, 20);
    const Tensor b = Tensor::uniform({64}, t, DeviceRef::cpu(), 2, 0.5f, 4);
    for (const char* op : {"FloorMod", "FloorDiv", "TruncateDiv"}) {
      EXPECT_TRUE(all_close(to_vec(call_op1(op, on_npu({a, b}))), to_vec(call_op1(op, {a, b})), 1e-3, 1e-3))
          << op << " " << dtype_name(t);
    }
  }
}

TEST_F(FloorDivTest, IntegerInputsAreRefused) {
  const Tensor i = Tensor::zeros({3}, DType::kI32);
  EXPECT_TRUE(mentions(error_of([&] { call_op1("FloorMod", {i, i}); }), {"FloorMod", "floating"}));
}

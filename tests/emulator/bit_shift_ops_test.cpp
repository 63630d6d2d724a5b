// BitShift: LEFT and RIGHT on u8 (bits shifted out are lost, a shift by 8 or more gives 0),
// broadcasting, i32 / i64 shifted as bit patterns, both backends, and the errors.
#include <gtest/gtest.h>

#include <string>

#include "emulator/ext_op_test_util.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

using BitShiftTest = OpTest;

Attrs dir(const char* d) { return {{"direction", std::string(d)}}; }

}  // namespace

TEST_F(BitShiftTest, LeftAndRightOnU8) {
  const Tensor x = ints({16, 4, 1, 255, 200}, {5}, DType::kU8), y = ints({1, 2, 3, 1, 8}, {5}, DType::kU8);
  EXPECT_EQ(call_op1("BitShift", {x, y}, dir("LEFT")).to_ints(), (I64s{32, 16, 8, 254, 0}));
  EXPECT_EQ(call_op1("BitShift", {x, y}, dir("RIGHT")).to_ints(), (I64s{8, 1, 0, 127, 0}));
  EXPECT_TRUE(npu_bytes_match_cpu("BitShift", {x, y}, dir("LEFT")));
}

TEST_F(BitShiftTest, BroadcastsAndShiftsSignedAsBits) {
  const Tensor x = ints({1, 2, 3, 4, 5, 6}, {2, 3}, DType::kU8), s = ints({2}, {}, DType::kU8);
  const Tensor y = call_op1("BitShift", {x, s}, dir("LEFT"));
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(y.to_ints(), (I64s{4, 8, 12, 16, 20, 24}));
  // -1 >> 28 on 32 bits is 15 (logical), not -1.
  EXPECT_EQ(call_op1("BitShift", {ints({-1}, {1}, DType::kI32), ints({28}, {1}, DType::kI32)}, dir("RIGHT")).to_ints(),
            (I64s{15}));
  EXPECT_EQ(call_op1("BitShift", {ints({1}, {1}), ints({62}, {1})}, dir("LEFT")).to_ints(),
            (I64s{std::int64_t{1} << 62}));
}

TEST_F(BitShiftTest, BadInputsNameTheProblem) {
  const Tensor x = ints({1}, {1}, DType::kU8);
  EXPECT_TRUE(mentions(error_of([&] { call_op1("BitShift", {x, x}); }), {"BitShift", "direction"}));
  EXPECT_TRUE(mentions(error_of([&] { call_op1("BitShift", {x, x}, dir("UP")); }), {"LEFT or RIGHT", "'UP'"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("BitShift", {floats({1}, {1}), floats({1}, {1})}, dir("LEFT"));
                       }),
                       {"BitShift", "f32"}));
}

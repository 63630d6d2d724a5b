// BitShift: LEFT and RIGHT on u8 (bits shifted out are lost, a shift by 8 or more gives 0),
// broadcasting, i32 / i64 shifted as bit patterns, both backends, and the errors. BitwiseAnd / Or /
// Xor on each integer dtype and bool, with PyTorch's results, broadcast, and the errors.
#include <gtest/gtest.h>

#include <string>

#include "emulator/ext_op_test_util.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

using BitShiftTest = OpTest;
using BitwiseTest = OpTest;

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

// Values as torch.bitwise_and / or / xor give them (torch 1.13, CPU).
TEST_F(BitwiseTest, AndOrXorOfEachIntegerDtypeMatchPyTorch) {
  for (DType t : {DType::kU8, DType::kI8, DType::kI32, DType::kI64}) {
    const bool is_signed = t != DType::kU8;
    const Tensor x = ints({12, 5, 0, is_signed ? -1 : 255}, {4}, t), y = ints({10, 3, 7, 6}, {4}, t);
    EXPECT_EQ(call_op1("BitwiseAnd", {x, y}).to_ints(), (I64s{8, 1, 0, 6})) << dtype_name(t);
    EXPECT_EQ(call_op1("BitwiseOr", {x, y}).to_ints(), (I64s{14, 7, 7, is_signed ? -1 : 255})) << dtype_name(t);
    EXPECT_EQ(call_op1("BitwiseXor", {x, y}).to_ints(), (I64s{6, 6, 7, is_signed ? -7 : 249})) << dtype_name(t);
    EXPECT_TRUE(npu_bytes_match_cpu("BitwiseXor", {x, y})) << dtype_name(t);
  }
}

TEST_F(BitwiseTest, BoolIsLogicalAndOperandsBroadcast) {
  const Tensor a = ints({1, 1, 0, 0}, {2, 2}, DType::kBool), b = ints({1, 0}, {2}, DType::kBool);
  const Tensor o = call_op1("BitwiseOr", {a, b});
  EXPECT_EQ(o.dtype(), DType::kBool);
  EXPECT_EQ(o.to_ints(), (I64s{1, 1, 1, 0}));
  EXPECT_EQ(call_op1("BitwiseAnd", {a, b}).to_ints(), (I64s{1, 0, 0, 0}));
  EXPECT_EQ(call_op1("BitwiseXor", {a, b}).to_ints(), (I64s{0, 1, 1, 0}));
  const Tensor m = call_op1("BitwiseAnd", {ints({7, 12, 5, 4, 2, 1}, {2, 3}, DType::kI32), ints({4}, {}, DType::kI32)});
  EXPECT_EQ(m.shape(), (Shape{2, 3}));
  EXPECT_EQ(m.to_ints(), (I64s{4, 4, 4, 4, 0, 0}));
}

TEST_F(BitwiseTest, BadInputsNameTheProblem) {
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("BitwiseOr", {floats({1}, {1}), floats({1}, {1})});
                       }),
                       {"BitwiseOr", "integer or bool", "f32"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("BitwiseAnd", {ints({1}, {1}, DType::kI32), ints({1}, {1}, DType::kI64)});
                       }),
                       {"BitwiseAnd"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("BitwiseXor", {ints({1, 2}, {2}, DType::kI32), ints({1, 2, 3}, {3}, DType::kI32)});
                       }),
                       {"BitwiseXor"}));
}

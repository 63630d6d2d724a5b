// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear: hand-computed values (ties to even,
// saturation, per-channel parameters, i8 and u8), both backends, and the errors.
#include <gtest/gtest.h>

#include <string>

#include "emulator/ext_op_test_util.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

using QuantizeTest = OpTest;

TEST_F(QuantizeTest, QuantizeRoundsHalfToEvenAndSaturates) {
  const Tensor x = floats({0, 2, 3, 1000, -254, 5}, {6}), s = floats({2}, {}), zp = ints({128}, {}, DType::kU8);
  const Tensor y = call_op1("QuantizeLinear", {x, s, zp});
  EXPECT_EQ(y.dtype(), DType::kU8);
  // 2 / 2 = 1, 3 / 2 = 1.5 -> 2, 5 / 2 = 2.5 -> 2; 1000 saturates at 255, -254 / 2 + 128 = 1.
  EXPECT_EQ(y.to_ints(), (I64s{128, 129, 130, 255, 1, 130}));
  // No zero point: u8 with 0, negative values saturate at 0.
  EXPECT_EQ(call_op1("QuantizeLinear", {floats({-3, 3}, {2}), s}).to_ints(), (I64s{0, 2}));
  // i8, per channel along axis 1.
  const Tensor xc = floats({10, 10, 10, 10}, {1, 2, 2}), sc = floats({1, 5}, {2}), zc = ints({-1, 1}, {2}, DType::kI8);
  const Tensor yc = call_op1("QuantizeLinear", {xc, sc, zc});
  EXPECT_EQ(yc.dtype(), DType::kI8);
  EXPECT_EQ(yc.to_ints(), (I64s{9, 9, 3, 3}));
  EXPECT_TRUE(npu_bytes_match_cpu("QuantizeLinear", {x, s, zp}));
}

TEST_F(QuantizeTest, DequantizeAndDynamic) {
  const Tensor x = ints({0, 3, 128, 255}, {4}, DType::kU8), s = floats({2}, {}), zp = ints({128}, {}, DType::kU8);
  const Tensor y = call_op1("DequantizeLinear", {x, s, zp});
  EXPECT_EQ(y.dtype(), DType::kF32);
  EXPECT_EQ(to_vec(y), (Doubles{-256, -250, 0, 254}));
  EXPECT_TRUE(npu_close_to_cpu("DequantizeLinear", {x, s, zp}, {}, 0, 0));
  // [-1, 2]: scale 3 / 255, zero point round(1 / (3 / 255)) = 85.
  const auto out = call_op("DynamicQuantizeLinear", {floats({-1, 0, 2, 1}, {4})});
  EXPECT_NEAR(to_vec(out[1])[0], 3.0 / 255, 1e-7);
  EXPECT_EQ(out[2].to_ints(), (I64s{85}));
  EXPECT_EQ(out[0].to_ints(), (I64s{0, 85, 255, 170}));
}

TEST_F(QuantizeTest, BadInputsNameTheProblem) {
  const Tensor x = floats({1, 2, 3, 4}, {2, 2});
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("QuantizeLinear", {x, floats({1, 2, 3}, {3})});
                       }),
                       {"QuantizeLinear", "scale", "[3]"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("QuantizeLinear", {x, floats({1}, {}), ints({0}, {}, DType::kI32)});
                       }),
                       {"u8 or i8", "i32"}));
  EXPECT_TRUE(mentions(error_of([&] { call_op1("DequantizeLinear", {x, floats({1}, {})}); }), {"x must be", "f32"}));
}

// MatMulInteger, QLinearMatMul, ConvInteger and QLinearConv through the ONNX importer
// (adapters_quant.cpp): zero points per tensor, per row of A and per column of B or per output
// channel, pads, sums past f32's exact integers, the requantised results (half to even, bias,
// saturation), on cpu and npu:0; the errors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "emulator/adapter_test_util.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

class AdaptersQuantTest : public OpTest {};

Tensor u8(const I64s& v, Shape s) { return ints(v, std::move(s), DType::kU8); }
Tensor i8(const I64s& v, Shape s) { return ints(v, std::move(s), DType::kI8); }

}  // namespace

TEST_F(AdaptersQuantTest, MatMulIntegerZeroPoints) {
  for (DeviceRef d : {DeviceRef::cpu(), DeviceRef::npu()}) {
    // (A - 1) @ (B - [1, 0]) = [[2, 3], [4, 5]] @ [[0, 2], [2, 4]].
    OneNodeModel cols("MatMulInteger", 10);
    cols.input("a", u8({3, 4, 5, 6}, {2, 2})).input("b", u8({1, 2, 3, 4}, {2, 2}));
    cols.input("azp", u8({1}, {})).input("bzp", u8({1, 0}, {2}));
    const Tensor y = cols.run(1, d)[0];
    EXPECT_EQ(y.dtype(), DType::kI32);
    EXPECT_EQ(y.to_ints(), (I64s{6, 16, 10, 28}));
    // A's zero point per row: [[2, 3], [3, 4]] @ B.
    OneNodeModel rows("MatMulInteger", 10);
    rows.input("a", u8({3, 4, 5, 6}, {2, 2})).input("b", u8({1, 2, 3, 4}, {2, 2})).input("azp", u8({1, 2}, {2}));
    EXPECT_EQ(rows.run(1, d)[0].to_ints(), (I64s{11, 16, 15, 22}));
  }
}

TEST_F(AdaptersQuantTest, QLinearMatMulRequantises) {
  // [2, 4] . [1, 1] = 6, times 0.5 / 1 = 3, plus y_zero_point 10.
  OneNodeModel m("QLinearMatMul", 10);
  m.input("a", u8({2, 4}, {1, 2})).floats("as", {0.5f}, {}).input("azp", u8({0}, {}));
  m.input("b", u8({1, 1}, {2, 1})).floats("bs", {1}, {}).input("bzp", u8({0}, {}));
  m.floats("ys", {1}, {}).input("yzp", u8({10}, {}));
  for (DeviceRef d : {DeviceRef::cpu(), DeviceRef::npu()}) {
    const Tensor y = m.run(1, d)[0];
    EXPECT_EQ(y.dtype(), DType::kU8);
    EXPECT_EQ(y.to_ints(), (I64s{13}));
  }
  OneNodeModel bad("MatMulInteger", 10);
  bad.input("a", Tensor::from_floats(std::vector<float>{1}, {1, 1}, DType::kF32)).input("b", u8({1}, {1, 1}));
  EXPECT_TRUE(mentions(error_of([&] { bad.run(); }), {"MatMulInteger", "u8 or i8", "f32"}));
}

TEST_F(AdaptersQuantTest, ConvIntegerZeroPointsPadsAndExactSums) {
  for (DeviceRef d : {DeviceRef::cpu(), DeviceRef::npu()}) {
    // x - 1 = [[0, 1, 2], [3, 4, 5], [6, 7, 8]]; w - [1, 0] per output channel: a 2x2 box and a
    // diagonal pair.
    OneNodeModel box("ConvInteger", 10);
    box.input("x", u8({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 1, 3, 3}))
        .input("w", u8({2, 2, 2, 2, 1, 0, 0, 1}, {2, 1, 2, 2}));
    box.input("xzp", u8({1}, {})).input("wzp", u8({1, 0}, {2}));
    const Tensor y = box.run(1, d)[0];
    EXPECT_EQ(y.dtype(), DType::kI32);
    EXPECT_EQ(y.shape(), (Shape{1, 2, 2, 2}));
    EXPECT_EQ(y.to_ints(), (I64s{8, 12, 20, 24, 4, 6, 10, 12}));
    // 1-D, i8, pads 1 on each side: [0, -1, 2, -3, 4, 0] with the window [1, -1].
    OneNodeModel line("ConvInteger", 10);
    line.input("x", i8({-1, 2, -3, 4}, {1, 1, 4})).input("w", i8({1, -1}, {1, 1, 2})).attr("pads", I64s{1, 1});
    EXPECT_EQ(line.run(1, d)[0].to_ints(), (I64s{1, -3, 5, -7, 4}));
    // 255 * -127 over 1023 channels: -33,129,855, odd and past 2^24, which f32 cannot hold.
    OneNodeModel wide("ConvInteger", 10);
    wide.input("x", u8(I64s(1023, 255), {1, 1023, 1, 1})).input("w", i8(I64s(1023, -127), {1, 1023, 1, 1}));
    EXPECT_EQ(wide.run(1, d)[0].to_ints(), (I64s{-33129855}));
  }
}

TEST_F(AdaptersQuantTest, QLinearConvRequantisesPerChannelWithBias) {
  // x (0.5, zero point 10) - 10 = [0, 10, 20, 30]; w - [1, 0] = [2, 1] with scales [0.25, 1];
  // bias [4, -8]; y_scale 1. Channel 0: (2x + 4) * 0.125 = [0.5, 3, 5.5, 8], half to even [0, 3, 6, 8];
  // channel 1: (x - 8) * 0.5 = [-4, 1, 6, 11].
  const auto model = [](const Tensor& y_zero_point) {
    OneNodeModel m("QLinearConv", 10);
    m.input("x", u8({10, 20, 30, 40}, {1, 1, 2, 2})).floats("xs", {0.5f}, {}).input("xzp", u8({10}, {}));
    m.input("w", u8({3, 1}, {2, 1, 1, 1})).floats("ws", {0.25f, 1.0f}, {2}).input("wzp", u8({1, 0}, {2}));
    m.floats("ys", {1}, {}).input("yzp", y_zero_point).input("b", ints({4, -8}, {2}, DType::kI32));
    return m;
  };
  for (DeviceRef d : {DeviceRef::cpu(), DeviceRef::npu()}) {
    const Tensor y = model(u8({100}, {})).run(1, d)[0];
    EXPECT_EQ(y.dtype(), DType::kU8);
    EXPECT_EQ(y.to_ints(), (I64s{100, 103, 106, 108, 96, 101, 106, 111}));
    // An i8 output saturates at 127.
    const Tensor s = model(i8({120}, {})).run(1, d)[0];
    EXPECT_EQ(s.dtype(), DType::kI8);
    EXPECT_EQ(s.to_ints(), (I64s{120, 123, 126, 127, 116, 121, 126, 127}));
  }
  OneNodeModel bad("QLinearConv", 10);
  bad.input("x", u8({1, 2, 3, 4}, {1, 1, 2, 2})).floats("xs", {1}, {}).input("xzp", u8({0}, {}));
  bad.input("w", u8({1, 1}, {2, 1, 1, 1})).floats("ws", {1, 1, 1}, {3}).input("wzp", u8({0}, {}));
  bad.floats("ys", {1}, {}).input("yzp", u8({0}, {}));
  EXPECT_TRUE(mentions(error_of([&] { bad.run(); }), {"QLinearConv", "w_scale", "one per output channel (2)"}));
}

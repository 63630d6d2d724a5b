// MatMulInteger and QLinearMatMul through the ONNX importer (adapters_quant.cpp): zero points per
// tensor, per row of A and per column of B, the requantised product, on cpu and npu:0; the errors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "emulator/adapter_test_util.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

class AdaptersQuantTest : public OpTest {};

Tensor u8(const I64s& v, Shape s) { return ints(v, std::move(s), DType::kU8); }

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

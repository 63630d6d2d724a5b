// The ONNX adapters of adapters_index.cpp and adapters_reduce.cpp on the paths the ONNX node test
// data (opsets <= 17) does not reach: TopK's k attribute (< 10), Hardmax's 2-D coercion (< 13),
// Scatter (9-10), EyeLike's ONNX dtype, NonZero's host-side count, exact int64 Range, and the
// reductions' axes input (18).
#include <gtest/gtest.h>

#include <limits>
#include <tuple>
#include <vector>

#include "emulator/adapter_test_util.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

class AdaptersIndexTest : public OpTest {};

}  // namespace

TEST_F(AdaptersIndexTest, TopKWithTheKAttribute) {
  OneNodeModel m("TopK", 9);
  m.input("x", floats({3, 1, 4, 1, 5}, {5})).attr("k", std::int64_t{2});
  const auto out = m.run(2);
  EXPECT_EQ(to_vec(out[0]), (Doubles{5, 4}));
  EXPECT_EQ(out[1].to_ints(), (I64s{4, 2}));
}

TEST_F(AdaptersIndexTest, HardmaxBeforeOpset13FlattensAtAxis) {
  // [2, 2, 2]: opset 11 (axis 1) takes one maximum over each batch's 4 values; opset 13 (axis -1)
  // one per row of 2.
  const Tensor x = floats({1, 4, 3, 2, 0, 1, 1, 0}, {2, 2, 2});
  OneNodeModel old("Hardmax", 11);
  old.input("x", x);
  const Tensor y = old.run(1, DeviceRef::npu())[0];
  EXPECT_EQ(y.shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(to_vec(y), (Doubles{0, 1, 0, 0, 0, 1, 0, 0}));
  OneNodeModel now("Hardmax", 13);
  now.input("x", x);
  EXPECT_EQ(to_vec(now.run()[0]), (Doubles{0, 1, 1, 0, 0, 1, 1, 0}));
}

TEST_F(AdaptersIndexTest, ScatterIsScatterElements) {
  OneNodeModel m("Scatter", 10);
  m.input("data", floats({1, 2, 3, 4, 5}, {1, 5})).ints("idx", {1, 3}, {1, 2}).input("upd", floats({9, 8}, {1, 2}));
  m.attr("axis", std::int64_t{1});
  EXPECT_EQ(to_vec(m.run()[0]), (Doubles{1, 9, 3, 8, 5}));
}

TEST_F(AdaptersIndexTest, EyeLikeNonZeroAndRange) {
  OneNodeModel eye("EyeLike", 9);
  eye.input("x", floats({0, 0, 0, 0}, {2, 2})).attr("dtype", std::int64_t{onnx::TensorProto::INT64});
  const Tensor e = eye.run()[0];
  EXPECT_EQ(e.dtype(), DType::kI64);
  EXPECT_EQ(e.to_ints(), (I64s{1, 0, 0, 1}));
  OneNodeModel nz("NonZero", 13);
  nz.input("x", floats({0, 2, -0.0f, 3, 0, 1}, {2, 3}));
  const Tensor idx = nz.run(1, DeviceRef::npu())[0];
  EXPECT_EQ(idx.shape(), (Shape{2, 3}));
  EXPECT_EQ(idx.to_ints(), (I64s{0, 1, 1, 1, 0, 2}));
  const std::int64_t p60 = std::int64_t{1} << 60;
  OneNodeModel range("Range", 11);
  range.ints("start", {p60}, {}).ints("limit", {p60 + 3}, {}).ints("delta", {1}, {});
  EXPECT_EQ(range.run()[0].to_ints(), (I64s{p60, p60 + 1, p60 + 2}));
}

TEST_F(AdaptersIndexTest, ReductionAxesAsInputOrAttribute) {
  const Tensor x = floats({1, -7, 3, 4, 5, -6}, {2, 3});
  OneNodeModel max18("ReduceMax", 18);
  max18.input("x", x).ints("axes", {1}).attr("keepdims", std::int64_t{0});
  EXPECT_EQ(to_vec(max18.run(1, DeviceRef::npu())[0]), (Doubles{3, 5}));
  OneNodeModel l1("ReduceL1", 18);
  l1.input("x", x).ints("axes", {0});
  const Tensor y = l1.run()[0];
  EXPECT_EQ(y.shape(), (Shape{1, 3}));
  EXPECT_EQ(to_vec(y), (Doubles{5, 12, 9}));
  OneNodeModel all("ReduceMin", 18);  // no axes: all
  all.input("x", x);
  EXPECT_EQ(to_vec(all.run()[0]), (Doubles{-7}));
  OneNodeModel sum11("ReduceSum", 11);
  sum11.input("x", x).attr("axes", I64s{-1}).attr("keepdims", std::int64_t{0});
  EXPECT_EQ(to_vec(sum11.run()[0]), (Doubles{-3, 3}));
  // noop_with_empty_axes: nothing is reduced, but each element is still squared (see reduce_ext_ops.cpp).
  OneNodeModel noop("ReduceSumSquare", 18);
  noop.input("x", x).ints("axes", {}).attr("noop_with_empty_axes", std::int64_t{1});
  EXPECT_EQ(to_vec(noop.run()[0]), (Doubles{1, 49, 9, 16, 25, 36}));
}

// Trilu's k is an int64 operand: it went through a double (INT64_MAX became 2^63, cast back to
// INT64_MIN) and upper with k = INT64_MAX left the input unchanged, where k = 100 gave zeros. ONNX:
// a k beyond the matrix keeps all or nothing, whatever its size.
TEST_F(AdaptersIndexTest, TriluKIsReadExactly) {
  const Tensor x = floats({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  const std::int64_t min = std::numeric_limits<std::int64_t>::min();
  const Doubles zeros(9, 0.0), all = to_vec(x);
  for (const auto& [k, upper, expected] : std::vector<std::tuple<std::int64_t, std::int64_t, Doubles>>{
           {100, 1, zeros}, {max, 1, zeros}, {max, 0, all}, {-100, 1, all}, {min, 1, all}, {min, 0, zeros}}) {
    for (DeviceRef device : {DeviceRef::cpu(), DeviceRef::npu()}) {
      OneNodeModel m("Trilu", 14);
      m.input("x", x).ints("k", {k}, {}).attr("upper", upper);
      EXPECT_EQ(to_vec(m.run(1, device)[0]), expected) << "k " << k << " upper " << upper << " " << device.str();
    }
  }
}

// The same exact read for TopK's k: INT64_MAX is out of range for the axis, not a wrapped k.
TEST_F(AdaptersIndexTest, TopKHugeKIsAnError) {
  OneNodeModel m("TopK", 11);
  m.input("x", floats({3, 1, 4}, {3})).ints("k", {std::numeric_limits<std::int64_t>::max()}, {1});
  EXPECT_TRUE(mentions(error_of([&] { m.run(2); }), {"TopK", "k = 9223372036854775807", "outside [0, 3]"}));
}

// ONNX data types in int attributes were cast to int first: Cast to 2^32 + 1 ran as a Cast to FLOAT.
TEST_F(AdaptersIndexTest, DataTypeAttributesBeyondIntAreErrors) {
  const std::int64_t bad = (std::int64_t{1} << 32) + onnx::TensorProto::FLOAT;
  OneNodeModel cast("Cast", 13);
  cast.input("x", floats({1, 2}, {2})).attr("to", bad);
  EXPECT_TRUE(mentions(error_of([&] { cast.run(); }), {"Cast", "'to' = 4294967297 is not an ONNX data type"}));
  OneNodeModel eye("EyeLike", 9);
  eye.input("x", floats({0, 0, 0, 0}, {2, 2})).attr("dtype", bad);
  EXPECT_TRUE(mentions(error_of([&] { eye.run(); }), {"EyeLike", "'dtype' = 4294967297"}));
}

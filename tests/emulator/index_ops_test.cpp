// TopK, ArgMax, ArgMin, NonZero, OneHot: hand-computed values on the CPU (ONNX's examples, ties,
// NaN, exact int64 keys), NPU results identical to the CPU's for f32, f16 and i64, i64 index
// outputs, and bad attributes rejected.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "emulator/ext_op_test_util.h"
#include "npuscope/emulator/errors.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;
using npuscope::emulator::ops::Ints;

namespace {

class IndexOpsTest : public OpTest {};

std::vector<Tensor> topk(const Tensor& x, std::int64_t k, std::int64_t axis = -1, bool largest = true) {
  return call_op("TopK", {x}, {{"k", k}, {"axis", axis}, {"largest", std::int64_t{largest ? 1 : 0}}});
}

I64s arg(const char* op, const Tensor& x, std::int64_t axis, bool keepdims = false, bool last = false) {
  const Attrs a{{"axis", axis}, {"keepdims", std::int64_t{keepdims}}, {"select_last_index", std::int64_t{last}}};
  const Tensor y = call_op1(op, {x}, a);
  EXPECT_EQ(y.dtype(), DType::kI64);
  return y.to_ints();
}

}  // namespace

TEST_F(IndexOpsTest, TopKOnnxExampleLargestAndSmallest) {
  const Tensor x = floats({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 4});
  const auto big = topk(x, 3, 1);
  EXPECT_EQ(big[0].shape(), (Shape{3, 3}));
  EXPECT_EQ(big[1].dtype(), DType::kI64);
  EXPECT_EQ(to_vec(big[0]), (Doubles{3, 2, 1, 7, 6, 5, 11, 10, 9}));
  EXPECT_EQ(big[1].to_ints(), (I64s{3, 2, 1, 3, 2, 1, 3, 2, 1}));
  const auto small = topk(x, 2, -1, false);
  EXPECT_EQ(to_vec(small[0]), (Doubles{0, 1, 4, 5, 8, 9}));
  EXPECT_EQ(small[1].to_ints(), (I64s{0, 1, 0, 1, 0, 1}));
  const auto col = topk(floats({1, 5, 4, 2, 3, 3}, {3, 2}), 1, 0);
  EXPECT_EQ(col[0].shape(), (Shape{1, 2}));
  EXPECT_EQ(to_vec(col[0]), (Doubles{4, 5}));
  EXPECT_EQ(col[1].to_ints(), (I64s{1, 0}));
  EXPECT_EQ(topk(x, 0, 1)[0].shape(), (Shape{3, 0}));
}

TEST_F(IndexOpsTest, TopKTiesNanAndExactIntegers) {
  const auto ties = topk(floats({1, 3, 3, 2, 3}, {5}), 3);
  EXPECT_EQ(ties[1].to_ints(), (I64s{1, 2, 4}));  // equal values: lower index first
  EXPECT_EQ(topk(floats({2, 1, 3, 1}, {4}), 2, 0, false)[1].to_ints(), (I64s{1, 3}));
  const Tensor n = floats({1, std::nanf(""), 3}, {3});
  for (const Tensor& t : {n, on_npu({n})[0]}) {
    const auto hi = topk(t, 2);  // NaN counts as the largest
    EXPECT_TRUE(std::isnan(to_vec(hi[0])[0]));
    EXPECT_EQ(hi[1].to_ints(), (I64s{1, 2}));
    EXPECT_EQ(topk(t, 2, 0, false)[1].to_ints(), (I64s{0, 2}));
  }
  const std::int64_t p60 = std::int64_t{1} << 60;  // not representable in f32 / f64 apart
  const Tensor i = ints({p60 + 1, p60, p60 + 2}, {3});
  for (const Tensor& t : {i, on_npu({i})[0]}) {
    const auto r = topk(t, 2);
    EXPECT_EQ(r[0].to_ints(), (I64s{p60 + 2, p60 + 1}));
    EXPECT_EQ(r[1].to_ints(), (I64s{2, 0}));
  }
}

TEST_F(IndexOpsTest, ArgMaxArgMinHandValues) {
  const Tensor x = floats({2, 1, 3, 10}, {2, 2});
  EXPECT_EQ(arg("ArgMax", x, 0, true), (I64s{1, 1}));
  EXPECT_EQ(call_op1("ArgMax", {x}, {}).shape(), (Shape{1, 2}));  // axis 0, keepdims 1 by default
  EXPECT_EQ(arg("ArgMax", x, 1), (I64s{0, 1}));
  EXPECT_EQ(arg("ArgMin", x, -1), (I64s{1, 0}));
  const Tensor ties = floats({2, 2, 1, 1, 3, 3}, {2, 3});
  EXPECT_EQ(arg("ArgMax", ties, 1), (I64s{0, 1}));
  EXPECT_EQ(arg("ArgMax", ties, 1, false, true), (I64s{1, 2}));
  EXPECT_EQ(arg("ArgMin", ties, 1), (I64s{2, 0}));
  EXPECT_EQ(arg("ArgMin", ties, 1, false, true), (I64s{2, 0}));
  const Tensor n = floats({1, std::nanf(""), 5, std::nanf("")}, {4});
  for (const Tensor& t : {n, on_npu({n})[0]}) {
    EXPECT_EQ(arg("ArgMax", t, 0), (I64s{1}));  // numpy: the first NaN
    EXPECT_EQ(arg("ArgMin", t, 0), (I64s{1}));
    EXPECT_EQ(arg("ArgMax", t, 0, false, true), (I64s{3}));
  }
  const std::int64_t p60 = std::int64_t{1} << 60;
  EXPECT_EQ(arg("ArgMax", on_npu({ints({p60, p60 + 1, p60}, {3}, DType::kI64)})[0], 0), (I64s{1}));
}

TEST_F(IndexOpsTest, NpuMatchesCpuForTopKAndArg) {
  for (DType t : {DType::kF32, DType::kF16}) {
    const Tensor x = Tensor::randn({6, 33, 17}, t, DeviceRef::cpu(), 4);
    for (std::int64_t axis : {0, 1, -1}) {
      EXPECT_TRUE(npu_bytes_match_cpu("TopK", {x}, {{"k", std::int64_t{5}}, {"axis", axis}})) << axis;
      EXPECT_TRUE(
          npu_bytes_match_cpu("TopK", {x}, {{"k", std::int64_t{3}}, {"axis", axis}, {"largest", std::int64_t{0}}}));
      EXPECT_TRUE(npu_bytes_match_cpu("ArgMax", {x}, {{"axis", axis}}));
      EXPECT_TRUE(npu_bytes_match_cpu("ArgMin", {x}, {{"axis", axis}, {"keepdims", std::int64_t{0}}}));
    }
  }
  const Tensor i = ints({5, -3, 5, 9, 0, 9}, {2, 3}, DType::kI32);
  EXPECT_TRUE(npu_bytes_match_cpu("TopK", {i}, {{"k", std::int64_t{2}}}));
  EXPECT_TRUE(npu_bytes_match_cpu("ArgMax", {i}, {{"axis", std::int64_t{1}}, {"select_last_index", std::int64_t{1}}}));
}

TEST_F(IndexOpsTest, NonZeroListsCoordinatesRowMajor) {
  const Tensor x = ints({1, 0, 1, 1}, {2, 2}, DType::kBool);
  const Tensor y = call_op1("NonZero", {x}, {{"count", std::int64_t{3}}});
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(y.to_ints(), (I64s{0, 1, 1, 0, 0, 1}));
  const Tensor f = floats({0, -0.0f, std::nanf(""), 2}, {4});  // -0 is zero, NaN is not
  EXPECT_EQ(call_op1("NonZero", {f}, {{"count", std::int64_t{2}}}).to_ints(), (I64s{2, 3}));
  EXPECT_TRUE(npu_bytes_match_cpu("NonZero", {x}, {{"count", std::int64_t{3}}}));
  EXPECT_THROW(call_op1("NonZero", {x}, {}), InvalidArgument);  // the count must be read first
  EXPECT_THROW(call_op1("NonZero", {x}, {{"count", std::int64_t{5}}}), InvalidArgument);
}

TEST_F(IndexOpsTest, OneHotHandValues) {
  const Tensor off_on = floats({0, 1}, {2});
  const Tensor y = call_op1("OneHot", {ints({0, -1, 3, 5}, {4}), off_on}, {{"depth", std::int64_t{4}}});
  EXPECT_EQ(y.shape(), (Shape{4, 4}));
  EXPECT_EQ(to_vec(y), (Doubles{1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0}));  // -1 -> 3; 5 is out
  const Tensor a0 =
      call_op1("OneHot", {ints({1, 2}, {2}), off_on}, {{"depth", std::int64_t{3}}, {"axis", std::int64_t{0}}});
  EXPECT_EQ(a0.shape(), (Shape{3, 2}));
  EXPECT_EQ(to_vec(a0), (Doubles{0, 0, 1, 0, 0, 1}));
  // Float indices truncate; the output takes the values' dtype and bytes.
  const Tensor v = ints({2, 5}, {2}, DType::kI32);
  const Tensor i32 = call_op1("OneHot", {floats({1.7f, 0.2f}, {2}), v}, {{"depth", std::int64_t{2}}});
  EXPECT_EQ(i32.dtype(), DType::kI32);
  EXPECT_EQ(i32.to_ints(), (I64s{2, 5, 5, 2}));
  const Tensor h = floats({-0.5f, 65504}, {2}, DType::kF16);
  EXPECT_TRUE(npu_bytes_match_cpu("OneHot", {ints({2, 0, 1, 7, -2, 3}, {2, 3}), h},
                                  {{"depth", std::int64_t{5}}, {"axis", std::int64_t{1}}}));
  EXPECT_THROW(call_op1("OneHot", {ints({1}, {1}), floats({0, 1, 2}, {3})}, {{"depth", std::int64_t{2}}}),
               InvalidArgument);
  EXPECT_THROW(call_op1("OneHot", {ints({1}, {1}), off_on}, {{"depth", std::int64_t{0}}}), InvalidArgument);
  EXPECT_THROW(call_op1("OneHot", {ints({1}, {1}), off_on}, {{"depth", std::int64_t{2}}, {"axis", std::int64_t{2}}}),
               InvalidArgument);
}

TEST_F(IndexOpsTest, RejectsBadAttributes) {
  const Tensor x = floats({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_THROW(topk(x, 4), InvalidArgument);  // k > dim
  EXPECT_THROW(topk(x, -1), InvalidArgument);
  EXPECT_THROW(topk(x, 1, 2), InvalidArgument);
  EXPECT_THROW(call_op("TopK", {x}, {}), InvalidArgument);  // no k
  EXPECT_THROW(arg("ArgMax", x, 2), InvalidArgument);
  EXPECT_THROW(arg("ArgMin", Tensor::zeros({2, 0}, DType::kF32), 1), InvalidArgument);  // empty axis
  EXPECT_THROW(arg("ArgMax", floats({1}, {}), 0), InvalidArgument);                     // scalar
}

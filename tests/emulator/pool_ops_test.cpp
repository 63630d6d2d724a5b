// MaxPool, AvgPool, GlobalAvgPool: CPU golden vs hand-computed values (padding, stride, dilation,
// ceil_mode, count_include_pad, auto_pad), NPU vs CPU in f32 and f16, and bad attributes.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "emulator/op_test_util.h"
#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/op_registry.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;
using Ints = std::vector<std::int64_t>;

namespace {

class PoolOpsTest : public OpTest {};

// 1, 2, ... (or their negatives) in an [1, 1, h, w] tensor.
Tensor ramp(std::int64_t h, std::int64_t w, float sign = 1, DType dtype = DType::kF32) {
  std::vector<float> v(static_cast<std::size_t>(h * w));
  std::iota(v.begin(), v.end(), 1.0f);
  for (auto& e : v) e *= sign;
  return Tensor::from_floats(v, {1, 1, h, w}, dtype);
}

void expect_values(const Tensor& y, const Shape& shape, const std::vector<double>& want) {
  EXPECT_EQ(y.shape(), shape);
  EXPECT_TRUE(all_close(to_vec(y), want, 1e-6, 1e-7));
}

}  // namespace

TEST_F(PoolOpsTest, MaxPoolStridePaddingDilation) {
  expect_values(ops::max_pool2d(ramp(4, 4), {2, 2}, {2, 2}), {1, 1, 2, 2}, {6, 8, 14, 16});
  // Negative values: the padding is never a candidate (a zero pad would win everywhere).
  expect_values(ops::max_pool2d(ramp(3, 3, -1), {3, 3}, {1, 1}, {1, 1, 1, 1}), {1, 1, 3, 3},
                {-1, -1, -2, -1, -1, -2, -4, -4, -5});
  // ONNX test_maxpool_2d_dilations.
  expect_values(ops::max_pool2d(ramp(4, 4), {2, 2}, {1, 1}, {0, 0, 0, 0}, {2, 2}), {1, 1, 2, 2}, {11, 12, 15, 16});
  // Asymmetric pads {top, left, bottom, right}: a 1x2 window over [1..5] padded one on the right.
  expect_values(ops::max_pool2d(ramp(1, 5), {1, 2}, {1, 2}, {0, 0, 0, 1}), {1, 1, 1, 3}, {2, 4, 5});
}

TEST_F(PoolOpsTest, MaxPoolPropagatesNaN) {
  const std::vector<float> v{1, std::nanf(""), 3, 4};
  const Tensor x = Tensor::from_floats(v, {1, 1, 2, 2}, DType::kF32);
  for (const Tensor& in : {x, on_npu({x})[0]}) {
    const auto y = to_vec(ops::max_pool2d(in, {1, 2}, {1, 2}));
    ASSERT_EQ(y.size(), 2u);
    EXPECT_TRUE(std::isnan(y[0]));
    EXPECT_EQ(y[1], 4);
  }
}

TEST_F(PoolOpsTest, CeilMode) {
  // ONNX test_maxpool_2d_ceil / test_averagepool_2d_ceil: 4x4, kernel 3, stride 2.
  expect_values(ops::max_pool2d(ramp(4, 4), {3, 3}, {2, 2}), {1, 1, 1, 1}, {11});
  expect_values(ops::max_pool2d(ramp(4, 4), {3, 3}, {2, 2}, {0, 0, 0, 0}, {1, 1}, true), {1, 1, 2, 2},
                {11, 12, 15, 16});
  expect_values(ops::avg_pool2d(ramp(4, 4), {3, 3}, {2, 2}, {0, 0, 0, 0}, false, true), {1, 1, 2, 2},
                {6, 7.5, 12, 13.5});
  // A last window that would start in the right padding is dropped: 5 wide, kernel 2, stride 2,
  // pads 1 + 1 gives ceil(5/2) + 1 = 4 windows, the 4th starting at 6 = 5 + 1 -> 3 outputs.
  expect_values(ops::max_pool2d(ramp(1, 5), {1, 2}, {1, 2}, {0, 1, 0, 1}, {1, 1}, true), {1, 1, 1, 3}, {1, 3, 5});
}

TEST_F(PoolOpsTest, AvgPoolCountIncludePad) {
  const Tensor x = ramp(3, 3);
  expect_values(ops::avg_pool2d(x, {3, 3}, {1, 1}, {1, 1, 1, 1}, false), {1, 1, 3, 3},
                {3, 3.5, 4, 4.5, 5, 5.5, 6, 6.5, 7});
  expect_values(ops::avg_pool2d(x, {3, 3}, {1, 1}, {1, 1, 1, 1}, true), {1, 1, 3, 3},
                {12 / 9.0, 21 / 9.0, 16 / 9.0, 27 / 9.0, 5, 33 / 9.0, 24 / 9.0, 39 / 9.0, 28 / 9.0});
  // ceil_mode with count_include_pad: the last window [4, 7) covers input 4, pad 5 and nothing at
  // 6, so it divides by 2 (taps past the padding never count).
  expect_values(ops::avg_pool2d(ramp(1, 5), {1, 3}, {1, 2}, {0, 0, 0, 1}, true, true), {1, 1, 1, 3}, {2, 4, 2.5});
  expect_values(ops::avg_pool2d(ramp(1, 5), {1, 3}, {1, 2}, {0, 0, 0, 1}, false, true), {1, 1, 1, 3}, {2, 4, 5});
}

TEST_F(PoolOpsTest, AutoPad) {
  auto pool = [](const char* auto_pad) {
    return call_op1("MaxPool", {ramp(5, 5)}, {{"kernel_shape", Ints{2, 2}}, {"auto_pad", std::string(auto_pad)}});
  };
  // SAME_UPPER pads 1 at the end: window (i, j) covers rows/cols i..i+1.
  std::vector<double> upper, lower;
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 5; ++j) {
      upper.push_back(std::min(i + 1, 4) * 5 + std::min(j + 1, 4) + 1);
      lower.push_back(i * 5 + j + 1);  // SAME_LOWER pads the start: window i-1..i
    }
  }
  expect_values(pool("SAME_UPPER"), {1, 1, 5, 5}, upper);
  expect_values(pool("SAME_LOWER"), {1, 1, 5, 5}, lower);
  EXPECT_EQ(pool("VALID").shape(), (Shape{1, 1, 4, 4}));
}

TEST_F(PoolOpsTest, GlobalAvgPool) {
  const std::vector<float> v{1, 2, 3, 4, 5, 6, 7, 8};
  expect_values(ops::global_avg_pool(Tensor::from_floats(v, {1, 2, 2, 2}, DType::kF32)), {1, 2, 1, 1}, {2.5, 6.5});
  expect_values(ops::global_avg_pool(Tensor::from_floats(v, {2, 2, 2}, DType::kF32)), {2, 2, 1}, {1.5, 3.5, 5.5, 7.5});
}

TEST_F(PoolOpsTest, NpuMatchesCpuInF32AndF16) {
  for (DType dt : {DType::kF32, DType::kF16}) {
    const Tensor x = Tensor::randn({2, 3, 11, 13}, dt, DeviceRef::cpu(), 21, 2.0f);
    const Tensor xn = on_npu({x})[0];
    const auto tol = default_tolerance(dt);
    for (bool ceil : {false, true}) {
      auto maxp = [&](const Tensor& t) { return ops::max_pool2d(t, {3, 3}, {2, 2}, {1, 1, 0, 1}, {1, 1}, ceil); };
      EXPECT_TRUE(all_close(to_vec(maxp(xn)), to_vec(maxp(x)), 0, 0)) << "MaxPool is exact";
      for (bool include : {false, true}) {
        auto avgp = [&](const Tensor& t) { return ops::avg_pool2d(t, {3, 2}, {2, 2}, {1, 0, 1, 1}, include, ceil); };
        EXPECT_TRUE(all_close(to_vec(avgp(xn)), to_vec(avgp(x)), tol.rtol, tol.atol)) << dtype_name(dt);
      }
    }
    EXPECT_TRUE(all_close(to_vec(ops::global_avg_pool(xn)), to_vec(ops::global_avg_pool(x)), tol.rtol, tol.atol));
  }
}

TEST_F(PoolOpsTest, MaxPoolOnIntegersIsExact) {
  // u8 (ONNX test_maxpool_2d_uint8) runs the golden kernel, also when called on the NPU.
  const std::vector<std::int64_t> v{250, 3, 7, 255, 0, 1, 2, 254, 9};
  const Tensor x = Tensor::from_ints(v, {1, 1, 3, 3}, DType::kU8);
  for (const Tensor& in : {x, on_npu({x})[0]}) {
    const Tensor y = ops::max_pool2d(in, {2, 2}, {1, 1});
    EXPECT_EQ(y.dtype(), DType::kU8);
    EXPECT_EQ(y.to_ints(), (std::vector<std::int64_t>{255, 7, 255, 254}));
  }
}

TEST_F(PoolOpsTest, CostCountsKernelTaps) {
  const OpSchema& s = OpRegistry::instance().schema("MaxPool");
  const Attrs attrs{{"kernel_shape", Ints{3, 3}}};
  const std::vector<TensorMeta> in{{{1, 2, 8, 8}, DType::kF16}};
  const auto out = s.infer(in, attrs);
  ASSERT_EQ(out[0].shape, (Shape{1, 2, 6, 6}));
  const KernelCost c = s.cost(in, out, attrs);
  EXPECT_EQ(c.flops, 2 * 6 * 6 * 9);
  EXPECT_EQ(c.bytes, (2 * 8 * 8 + 2 * 6 * 6) * 2);
}

TEST_F(PoolOpsTest, BadAttributesAreInvalid) {
  const Tensor x = ramp(4, 4);
  EXPECT_THROW(call_op1("MaxPool", {x}, {{"strides", Ints{1, 1}}}), InvalidArgument);  // no kernel_shape
  EXPECT_THROW(call_op1("AvgPool", {on_npu({x})[0]}, {}), InvalidArgument);            // no kernel_shape
  EXPECT_THROW(ops::max_pool2d(x, {3}, {1, 1}), InvalidArgument);
  EXPECT_THROW(ops::max_pool2d(x, {0, 2}, {1, 1}), InvalidArgument);
  EXPECT_THROW(ops::max_pool2d(x, {2, 2}, {0, 1}), InvalidArgument);
  EXPECT_THROW(ops::max_pool2d(x, {2, 2}, {1, 1}, {1, 1}), InvalidArgument);          // pads need 4 values
  EXPECT_THROW(ops::max_pool2d(x, {2, 2}, {1, 1}, {2, 0, 0, 0}), InvalidArgument);    // pad >= kernel
  EXPECT_THROW(ops::avg_pool2d(x, {5, 5}, {1, 1}), InvalidArgument);                  // kernel > input
  EXPECT_THROW(ops::max_pool2d(x.view({1, 4, 4}), {2, 2}, {1, 1}), InvalidArgument);  // not 4-D
  EXPECT_THROW(call_op1("MaxPool", {x}, {{"kernel_shape", Ints{2, 2}}, {"auto_pad", std::string("SAME")}}),
               InvalidArgument);
  const std::vector<std::int64_t> ints(16, 1);
  EXPECT_THROW(ops::avg_pool2d(Tensor::from_ints(ints, {1, 1, 4, 4}, DType::kI32), {2, 2}, {1, 1}), InvalidArgument);
  EXPECT_THROW(ops::global_avg_pool(Tensor::from_floats(std::vector<float>{1, 2}, {1, 2}, DType::kF32)),
               InvalidArgument);
}

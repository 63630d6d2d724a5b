// GlobalMaxPool: CPU golden vs hand-computed values (2-D and 3-D planes, NaN, integers beyond
// 2^53), NPU vs CPU (exact: no arithmetic) in f32 and f16, integer fallback, bad inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "emulator/op_test_util.h"
#include "npuscope/emulator/errors.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

using PoolExtTest = OpTest;

Tensor gmp(const Tensor& x) { return call_op1("GlobalMaxPool", {x}, {}); }

}  // namespace

TEST_F(PoolExtTest, HandComputed) {
  auto x = Tensor::from_floats(std::vector<float>{1, 5, -2, 3, -7, -1, -3, -9}, {1, 2, 2, 2}, DType::kF32);
  auto y = gmp(x);
  EXPECT_EQ(y.shape(), (Shape{1, 2, 1, 1}));
  EXPECT_EQ(to_vec(y), (std::vector<double>{5, -1}));
  // 3-D planes [2, 2, 2] and a 1-D plane.
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>((i * 7) % 16);
  auto y3 = gmp(Tensor::from_floats(v, {2, 1, 2, 2, 2}, DType::kF32));
  EXPECT_EQ(y3.shape(), (Shape{2, 1, 1, 1, 1}));
  EXPECT_EQ(to_vec(y3), (std::vector<double>{14, 15}));
  EXPECT_EQ(to_vec(gmp(x.view({2, 2, 2}))), (std::vector<double>{5, 3, -1, -3}));
}

TEST_F(PoolExtTest, NanPropagatesOnBothBackends) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto x = Tensor::from_floats(std::vector<float>{1, nan, 3, 4, 5, 6}, {1, 2, 3}, DType::kF32);
  for (const Tensor& in : {x, on_npu({x})[0]}) {
    const auto y = to_vec(gmp(in));
    EXPECT_TRUE(std::isnan(y[0]));
    EXPECT_EQ(y[1], 6.0);
  }
}

TEST_F(PoolExtTest, IntegersAreExact) {
  const std::int64_t big = (std::int64_t{1} << 60) + 1;  // not representable in f64
  auto x = Tensor::from_ints(std::vector<std::int64_t>{big - 2, big, -5, -3}, {1, 2, 2}, DType::kI64);
  for (const Tensor& in : {x, on_npu({x})[0]}) {  // npu: integer input falls back to the CPU kernel
    auto y = gmp(in);
    EXPECT_EQ(y.dtype(), DType::kI64);
    EXPECT_EQ(y.to_ints(), (std::vector<std::int64_t>{big, -3}));
  }
  auto u8 = Tensor::from_ints(std::vector<std::int64_t>{200, 17, 255, 0}, {2, 1, 2}, DType::kU8);
  EXPECT_EQ(gmp(u8).to_ints(), (std::vector<std::int64_t>{200, 255}));
}

TEST_F(PoolExtTest, NpuMatchesCpuF32AndF16) {
  for (DType t : {DType::kF32, DType::kF16}) {
    auto x = Tensor::randn({3, 4, 7, 5}, t, DeviceRef::cpu(), 11);
    auto golden = gmp(x);
    auto out = gmp(on_npu({x})[0]);
    EXPECT_EQ(out.dtype(), t);
    EXPECT_EQ(out.shape(), (Shape{3, 4, 1, 1}));
    EXPECT_EQ(to_vec(out), to_vec(golden)) << dtype_name(t);  // a maximum is exact
  }
}

TEST_F(PoolExtTest, BadInputsAreInvalidArgument) {
  EXPECT_THROW(gmp(Tensor::zeros({2, 3}, DType::kF32)), InvalidArgument);        // no spatial dim
  EXPECT_THROW(gmp(Tensor::zeros({1, 2, 0, 3}, DType::kF32)), InvalidArgument);  // empty planes
  EXPECT_THROW(gmp(Tensor::zeros({1, 2, 3}, DType::kBool)), InvalidArgument);
  EXPECT_NO_THROW(gmp(Tensor::zeros({0, 2, 3}, DType::kF32)));  // no planes at all
}

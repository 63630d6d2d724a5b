// GroupNormV2 / GroupNormGrad: hand-computed normalisation, GroupNormGrad against the forward's finite differences,
// NPU vs CPU golden, bad shapes.
#include <gtest/gtest.h>

#include <cmath>

#include "emulator/op_test_util.h"
#include "npuscope/emulator/errors.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

using GroupNormTest = OpTest;

const Attrs kTwoGroups{{"num_groups", std::int64_t{2}}, {"epsilon", 0.0}};

Tensor f64(const std::vector<double>& v, Shape shape) {
  return Tensor::from_bytes(v.data(), std::move(shape), DType::kF64);
}

}  // namespace

TEST_F(GroupNormTest, NormalisesEachImageAndGroup) {
  // One image, 4 channels of 1 value, 2 groups: {1, 3} and {10, 14}: means 2 and 12, std 1 and 2.
  const Tensor x = floats({1, 3, 10, 14}, {1, 4, 1});
  const auto out = call_op("GroupNormV2", {x}, kTwoGroups);
  EXPECT_EQ(to_vec(out[0]), (std::vector<double>{-1, 1, -1, 1}));
  EXPECT_EQ(to_vec(out[1]), (std::vector<double>{2, 12}));
  EXPECT_EQ(to_vec(out[2]), (std::vector<double>{1, 0.5}));
  EXPECT_EQ(out[1].shape(), (Shape{1, 2}));
}

TEST_F(GroupNormTest, GradientMatchesFiniteDifferences) {
  const Shape shape{2, 4, 3};
  const Tensor x = Tensor::uniform(shape, DType::kF64, DeviceRef::cpu(), 1, -1, 1);
  const Tensor gamma = Tensor::uniform({4}, DType::kF64, DeviceRef::cpu(), 2, 0.5f, 1.5f);
  const Tensor beta = Tensor::uniform({4}, DType::kF64, DeviceRef::cpu(), 3, -1, 1);
  const Tensor dy = Tensor::uniform(shape, DType::kF64, DeviceRef::cpu(), 4, -1, 1);
  const Attrs attrs{{"num_groups", std::int64_t{2}}, {"epsilon", 1e-5}};
  const auto fwd = call_op("GroupNormV2", {x, gamma, beta}, attrs);
  const auto grads = call_op("GroupNormGrad", {dy, x, fwd[1], fwd[2], gamma}, attrs);
  // <dy, y(x + h e_i)> - <dy, y(x - h e_i)> over 2h is dx_i.
  auto loss = [&](const std::vector<double>& xs) {
    const auto y = to_vec(call_op("GroupNormV2", {f64(xs, shape), gamma, beta}, attrs)[0]);
    const auto g = to_vec(dy);
    double s = 0;
    for (std::size_t i = 0; i < y.size(); ++i) s += y[i] * g[i];
    return s;
  };
  const auto xv = to_vec(x), dx = to_vec(grads[0]);
  for (std::size_t i = 0; i < xv.size(); i += 5) {
    auto plus = xv, minus = xv;
    plus[i] += 1e-5;
    minus[i] -= 1e-5;
    EXPECT_NEAR((loss(plus) - loss(minus)) / 2e-5, dx[i], 1e-5) << i;
  }
  // dbeta = Σ dy per channel.
  const auto db = to_vec(grads[2]), g = to_vec(dy);
  EXPECT_NEAR(db[1], g[3] + g[4] + g[5] + g[15] + g[16] + g[17], 1e-12);
}

TEST_F(GroupNormTest, NpuMatchesGolden) {
  const Shape shape{2, 6, 5};
  const Tensor x = Tensor::uniform(shape, DType::kF32, DeviceRef::cpu(), 5, -2, 2);
  const Tensor dy = Tensor::uniform(shape, DType::kF32, DeviceRef::cpu(), 6, -1, 1);
  const Attrs attrs{{"num_groups", std::int64_t{3}}};
  const auto cpu = call_op("GroupNormV2", {x}, attrs);
  const auto npu = call_op("GroupNormV2", on_npu({x}), attrs);
  EXPECT_TRUE(all_close(to_vec(npu[0]), to_vec(cpu[0]), 1e-5, 1e-5));
  const auto gcpu = call_op("GroupNormGrad", {dy, x, cpu[1], cpu[2]}, attrs);
  const auto gnpu = call_op("GroupNormGrad", on_npu({dy, x, cpu[1], cpu[2]}), attrs);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_TRUE(all_close(to_vec(gnpu[i]), to_vec(gcpu[i]), 1e-4, 1e-5)) << i;
}

TEST_F(GroupNormTest, BadShapesNameTheOp) {
  const Tensor x = Tensor::zeros({2, 6, 5}, DType::kF32);
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op("GroupNormV2", {x}, {{"num_groups", std::int64_t{4}}});
                       }),
                       {"GroupNormV2", "num_groups 4 must divide"}));
  EXPECT_TRUE(
      mentions(error_of([&] {
                 call_op("GroupNormV2", {x, Tensor::zeros({5}, DType::kF32)}, {{"num_groups", std::int64_t{3}}});
               }),
               {"GroupNormV2", "gamma"}));
}

// LayerNorm, RMSNorm, BatchNorm: CPU golden vs hand-computed values, NPU vs CPU in f32 and f16, and
// bad shapes.
#include <gtest/gtest.h>

#include <vector>

#include "emulator/op_test_util.h"
#include "npuscope/emulator/errors.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

class NormOpsTest : public OpTest {};

// Runs `f` on cpu inputs and on their npu copies; the npu result must match within the dtype tolerance.
template <class F>
void expect_npu_matches_cpu(const std::vector<Tensor>& inputs, F f, const char* what) {
  const auto tol = default_tolerance(inputs[0].dtype());
  const auto golden = to_vec(f(inputs));
  EXPECT_TRUE(all_close(to_vec(f(on_npu(inputs))), golden, tol.rtol, tol.atol))
      << what << " " << dtype_name(inputs[0].dtype());
}

// 1/sqrt(2) and friends: x = [1, 2, 3, 4] has mean 2.5, var 1.25; with eps 0.75, 1/sqrt(var + eps) = 1/sqrt(2).
constexpr double kR = 0.70710678118654752;

}  // namespace

TEST_F(NormOpsTest, LayerNormCpuMatchesHandComputedValues) {
  const Tensor x = floats({1, 2, 3, 4}, {1, 4});
  const Tensor scale = floats({1, 2, 0.5f, 1}, {4}), bias = floats({0, 1, 0, -1}, {4});
  const std::vector<double> normed{-1.5 * kR, -0.5 * kR, 0.5 * kR, 1.5 * kR};
  EXPECT_TRUE(all_close(to_vec(ops::layer_norm(x, scale, Tensor(), -1, 0.75f)),
                        {normed[0], 2 * normed[1], 0.5 * normed[2], normed[3]}, 1e-6, 0));
  EXPECT_TRUE(all_close(to_vec(ops::layer_norm(x, scale, bias, -1, 0.75f)),
                        {normed[0], 2 * normed[1] + 1, 0.5 * normed[2], normed[3] - 1}, 1e-6, 0));
}

TEST_F(NormOpsTest, LayerNormOverTwoDims) {
  // [2, 2, 2] normalised over the last two dims: row 0 is [1, 2, 3, 4]; row 1 is constant, so only
  // the bias is left.
  const Tensor x = floats({1, 2, 3, 4, 10, 10, 10, 10}, {2, 2, 2});
  const Tensor scale = floats({1, 2, 0.5f, 1}, {2, 2}), bias = floats({0, 1, 0, -1}, {2, 2});
  const std::vector<double> want{-1.5 * kR, -kR + 1, 0.25 * kR, 1.5 * kR - 1, 0, 1, 0, -1};
  EXPECT_TRUE(all_close(to_vec(ops::layer_norm(x, scale, bias, 1, 0.75f)), want, 1e-6, 1e-7));
  EXPECT_TRUE(all_close(to_vec(ops::layer_norm(x, scale, bias, -2, 0.75f)), want, 1e-6, 1e-7));
  // scale [1, 2, 2] (a leading 1) is the same parameter.
  EXPECT_TRUE(all_close(to_vec(ops::layer_norm(x, scale.view({1, 2, 2}), bias, 1, 0.75f)), want, 1e-6, 1e-7));
}

TEST_F(NormOpsTest, LayerNormNpuMatchesCpu) {
  for (DType dt : {DType::kF32, DType::kF16}) {
    const Tensor x = Tensor::randn({4, 6, 96}, dt, DeviceRef::cpu(), 1, 2.0f);
    const Tensor scale = Tensor::randn({96}, dt, DeviceRef::cpu(), 2);
    const Tensor bias = Tensor::randn({96}, dt, DeviceRef::cpu(), 3);
    const Tensor scale2 = Tensor::randn({6, 96}, dt, DeviceRef::cpu(), 4);
    expect_npu_matches_cpu(
        {x, scale, bias}, [](const std::vector<Tensor>& t) { return ops::layer_norm(t[0], t[1], t[2]); },
        "LayerNorm with bias");
    expect_npu_matches_cpu(
        {x, scale}, [](const std::vector<Tensor>& t) { return ops::layer_norm(t[0], t[1], Tensor()); },
        "LayerNorm without bias");
    expect_npu_matches_cpu(
        {x, scale2}, [](const std::vector<Tensor>& t) { return ops::layer_norm(t[0], t[1], Tensor(), 1, 1e-3f); },
        "LayerNorm axis 1");
  }
}

TEST_F(NormOpsTest, RmsNormCpuAndNpu) {
  // mean(x²) = 7.5, + eps 0.5 = 8: y = x · scale / (2·sqrt(2)).
  const Tensor x = floats({1, 2, 3, 4}, {1, 4}), scale = floats({1, 1, 2, 0.5f}, {4});
  EXPECT_TRUE(all_close(to_vec(ops::rms_norm(x, scale, 0.5f)), {kR / 2, kR, 3 * kR, kR}, 1e-6, 0));
  for (DType dt : {DType::kF32, DType::kF16}) {
    const Tensor xs = Tensor::randn({3, 5, 128}, dt, DeviceRef::cpu(), 5, 3.0f);
    const Tensor s = Tensor::randn({128}, dt, DeviceRef::cpu(), 6);
    expect_npu_matches_cpu(
        {xs, s}, [](const std::vector<Tensor>& t) { return ops::rms_norm(t[0], t[1]); }, "RMSNorm");
  }
}

TEST_F(NormOpsTest, BatchNormCpuAndNpu) {
  // N = 2, C = 2, L = 2. Channel 0: (x − 4)/2·2 + 1 = x − 3; channel 1: (x − 5)/1·0.5 − 1.
  const Tensor x = floats({1, 3, 2, 4, 5, 7, 6, 8}, {2, 2, 2});
  const Tensor scale = floats({2, 0.5f}, {2}), bias = floats({1, -1}, {2});
  const Tensor mean = floats({4, 5}, {2}), var = floats({3.99f, 0.99f}, {2});
  EXPECT_TRUE(all_close(to_vec(ops::batch_norm(x, scale, bias, mean, var, 0.01f)), {-2, 0, -2.5, -1.5, 2, 4, -0.5, 0.5},
                        1e-6, 1e-6));
  for (DType dt : {DType::kF32, DType::kF16}) {
    const Tensor xs = Tensor::randn({2, 3, 5, 7}, dt, DeviceRef::cpu(), 8, 2.0f);
    const Tensor s = Tensor::randn({3}, dt, DeviceRef::cpu(), 9), b = Tensor::randn({3}, dt, DeviceRef::cpu(), 10);
    const Tensor m = Tensor::randn({3}, dt, DeviceRef::cpu(), 11);
    const Tensor v = Tensor::uniform({3}, dt, DeviceRef::cpu(), 12, 0.5f, 2.0f);
    expect_npu_matches_cpu(
        {xs, s, b, m, v}, [](const std::vector<Tensor>& t) { return ops::batch_norm(t[0], t[1], t[2], t[3], t[4]); },
        "BatchNorm");
  }
}

TEST_F(NormOpsTest, StaysF32UnderMixPrecision) {
  const Tensor x = Tensor::randn({4, 64}, DType::kF32, DeviceRef::cpu(), 13);
  const Tensor scale = Tensor::randn({64}, DType::kF32, DeviceRef::cpu(), 14);
  Runtime::get().device().set_precision_mode(PrecisionMode::kAllowMixPrecision);
  expect_npu_matches_cpu(
      {x, scale}, [](const std::vector<Tensor>& t) { return ops::layer_norm(t[0], t[1], Tensor()); },
      "LayerNorm under allow_mix_precision");
  expect_npu_matches_cpu(
      {x, scale}, [](const std::vector<Tensor>& t) { return ops::rms_norm(t[0], t[1]); },
      "RMSNorm under allow_mix_precision");
}

TEST_F(NormOpsTest, BadShapesAreInvalid) {
  const Tensor x = Tensor::randn({2, 3, 4}, DType::kF32, DeviceRef::cpu(), 1);
  const Tensor s4 = floats({1, 1, 1, 1}, {4}), s3 = floats({1, 1, 1}, {3});
  EXPECT_THROW(ops::layer_norm(x, s3, Tensor()), InvalidArgument);        // scale [3] vs [4]
  EXPECT_THROW(ops::layer_norm(x, s4, s3), InvalidArgument);              // bias [3] vs [4]
  EXPECT_THROW(ops::layer_norm(x, s4, Tensor(), 1), InvalidArgument);     // axis 1 wants [3, 4]
  EXPECT_THROW(ops::layer_norm(x, s4, Tensor(), 3), InvalidArgument);     // bad axis
  EXPECT_THROW(ops::layer_norm(x, Tensor(), Tensor()), InvalidArgument);  // no scale
  EXPECT_THROW(ops::layer_norm(on_npu({x})[0], on_npu({s3})[0], Tensor()), InvalidArgument);
  EXPECT_THROW(ops::rms_norm(x, s3), InvalidArgument);
  const Tensor c3 = floats({1, 1, 1}, {3}), c4 = floats({1, 1, 1, 1}, {4});
  EXPECT_THROW(ops::batch_norm(x, c3, c3, c4, c3), InvalidArgument);             // mean [4] for C = 3
  EXPECT_THROW(ops::batch_norm(x.view({24}), c3, c3, c3, c3), InvalidArgument);  // no channel dim
  const std::vector<std::int64_t> ints{1, 2, 3, 4};
  EXPECT_THROW(ops::rms_norm(Tensor::from_ints(ints, {1, 4}, DType::kI32), s4), InvalidArgument);
}

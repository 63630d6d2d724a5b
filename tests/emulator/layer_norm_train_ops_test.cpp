// LayerNormV3 and LayerNormGrad: values from PyTorch 1.13's CPU native_layer_norm(_backward), the
// statistics' shapes, NPU vs CPU in f32 and f16, in-place runs and bad shapes.
#include <gtest/gtest.h>

#include <vector>

#include "emulator/alias_test_util.h"
#include "emulator/ext_op_test_util.h"
#include "npuscope/emulator/dispatch.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

class LayerNormTrainTest : public OpTest {};

const std::vector<float> kX{0.5f, -1.0f, 2.0f, 3.5f, 1.0f, 1.0f, -2.0f, 0.25f, -0.75f, 4.0f, 0.0f, 1.5f};
const std::vector<float> kDy{0.1f, -0.2f, 0.3f, 0.4f, 1.0f, -1.0f, 0.5f, 0.5f, 0.2f, 0.2f, -0.7f, 0.1f};
const std::vector<float> kGamma{1.0f, 2.0f, 0.5f, -1.0f}, kBeta{0.0f, 0.5f, -0.5f, 1.0f};

// torch.native_layer_norm(x, [4], gamma, beta, 1e-5) and its backward, in float64.
const Doubles kY{-0.4472128005, -2.183276803, -0.2763935998, -0.3416384014, 0.7624903297,  2.024980659,
                 -1.338739363,  0.8475019341, -1.067695094,  3.59975995,    -0.8271968836, 0.8277911139};
const Doubles kMean{1.25, 0.0625, 1.1875}, kRstd{0.5962837339, 0.8133230184, 0.5510684355};
const Doubles kDx{0.1431080908,  -0.1520523681, 0.1699408695, -0.1609965923, 1.262540837,  -1.177428218,
                  0.02837457182, -0.1134871909, 0.1804860762, 0.06775632417, -0.157803159, -0.09043924141};
const Doubles kDgamma{0.5042300309, -0.1841866545, -0.2464998855, 0.6301252821}, kDbeta{1.3, -1, 0.1, 1};
const Doubles kDxNoGamma{0.02981397469,  -0.02981482273, 0.02981439871, -0.02981355066, 0.7282070368,  -0.898439,
                         -0.05674174602, 0.2269737092,   0.2218652571,  0.01568915181,  -0.3066504568, 0.06909604788};

}  // namespace

TEST_F(LayerNormTrainTest, ForwardMatchesPyTorch) {
  const Tensor x = floats(kX, {3, 4}), g = floats(kGamma, {4}), b = floats(kBeta, {4});
  const BothBackends r = run_both("LayerNormV3", {x, g, b}, {{"axis", std::int64_t{-1}}, {"epsilon", 1e-5}});
  ASSERT_EQ(r.cpu.size(), 3u);
  EXPECT_EQ(r.cpu[1].shape(), (Shape{3, 1}));
  EXPECT_EQ(r.cpu[2].shape(), (Shape{3, 1}));
  for (const auto* out : {&r.cpu, &r.npu}) {
    EXPECT_TRUE(all_close(to_vec((*out)[0]), kY, 1e-6, 1e-6));
    EXPECT_TRUE(all_close(to_vec((*out)[1]), kMean, 1e-6, 1e-7));
    EXPECT_TRUE(all_close(to_vec((*out)[2]), kRstd, 1e-6, 1e-7));
  }
  // Normalised over the last two dims of [3, 2, 2], no gamma/beta: statistics [3, 1, 1].
  const std::vector<Tensor> r3 = call_op("LayerNormV3", {x.view({3, 2, 2})}, {{"axis", std::int64_t{1}}});
  EXPECT_EQ(r3[1].shape(), (Shape{3, 1, 1}));
  EXPECT_TRUE(all_close(to_vec(r3[1]), kMean, 1e-7, 0));
  EXPECT_TRUE(all_close(to_vec(r3[2]), kRstd, 1e-6, 0));
}

TEST_F(LayerNormTrainTest, BackwardMatchesPyTorch) {
  const Tensor dy = floats(kDy, {3, 4}), x = floats(kX, {3, 4}), g = floats(kGamma, {4});
  const std::vector<float> mean(kMean.begin(), kMean.end()), rstd(kRstd.begin(), kRstd.end());
  const Tensor m = floats(mean, {3, 1}), rs = floats(rstd, {3, 1});
  const BothBackends r = run_both("LayerNormGrad", {dy, x, m, rs, g});
  ASSERT_EQ(r.cpu.size(), 3u);
  EXPECT_EQ(r.cpu[1].shape(), (Shape{4}));
  for (const auto* out : {&r.cpu, &r.npu}) {
    EXPECT_TRUE(all_close(to_vec((*out)[0]), kDx, 1e-5, 1e-6));
    EXPECT_TRUE(all_close(to_vec((*out)[1]), kDgamma, 1e-5, 1e-6));
    EXPECT_TRUE(all_close(to_vec((*out)[2]), kDbeta, 1e-6, 1e-6));
  }
  EXPECT_TRUE(all_close(to_vec(call_op("LayerNormGrad", {dy, x, m, rs})[0]), kDxNoGamma, 1e-5, 1e-6));
}

TEST_F(LayerNormTrainTest, NpuMatchesCpuInF32AndF16) {
  for (DType dt : {DType::kF32, DType::kF16}) {
    const Tensor x = Tensor::randn({6, 5, 96}, dt, DeviceRef::cpu(), 1, 2.0f);
    const Tensor g = Tensor::randn({5, 96}, dt, DeviceRef::cpu(), 2),
                 b = Tensor::randn({5, 96}, dt, DeviceRef::cpu(), 3);
    const Tensor dy = Tensor::randn({6, 5, 96}, dt, DeviceRef::cpu(), 4);
    const Attrs attrs{{"axis", std::int64_t{-2}}};
    const Tolerance tol = default_tolerance(dt);
    const BothBackends f = run_both("LayerNormV3", {x, g, b}, attrs);
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(all_close(to_vec(f.npu[i]), to_vec(f.cpu[i]), tol.rtol, tol.atol)) << i;
    const BothBackends bw = run_both("LayerNormGrad", {dy, x, f.cpu[1], f.cpu[2], g}, attrs);
    // dgamma/dbeta sum 6 rows of products: a few f16 ulps.
    const double rtol = dt == DType::kF16 ? 4e-3 : 1e-5, atol = dt == DType::kF16 ? 4e-3 : 1e-5;
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(all_close(to_vec(bw.npu[i]), to_vec(bw.cpu[i]), rtol, atol)) << i;
  }
}

TEST_F(LayerNormTrainTest, InPlaceMatchesOutOfPlace) {
  const Tensor x = Tensor::randn({4, 32}, DType::kF32, DeviceRef::cpu(), 1);
  const Tensor g = Tensor::randn({32}, DType::kF32, DeviceRef::cpu(), 2),
               dy = Tensor::randn({4, 32}, DType::kF32, DeviceRef::cpu(), 3);
  const std::vector<Tensor> f = call_op("LayerNormV3", {x, g});
  EXPECT_EQ(to_vec(run_in_place("LayerNormV3", {x, g}, {}, Backend::kCpu)), to_vec(f[0]));
  const std::vector<Tensor> in{dy, x, f[1], f[2], g};
  const Doubles want = to_vec(call_op("LayerNormGrad", in)[0]);
  EXPECT_EQ(to_vec(run_in_place("LayerNormGrad", in, {}, Backend::kCpu, 0)), want);  // dx over dy
  EXPECT_EQ(to_vec(run_in_place("LayerNormGrad", in, {}, Backend::kCpu, 1)), want);  // dx over x
}

TEST_F(LayerNormTrainTest, BadShapesNameTheInput) {
  const Tensor x = floats(kX, {3, 4});
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op("LayerNormV3", {x, floats({1, 2, 3}, {3})});
                       }),
                       {"LayerNormV3", "gamma", "[3]", "[4]"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op("LayerNormV3", {x}, {{"axis", std::int64_t{2}}});
                       }),
                       {"LayerNormV3", "axis"}));
  const Tensor st = floats({0, 0, 0}, {3, 1});
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op("LayerNormGrad", {floats(kX, {4, 3}), x, st, st});
                       }),
                       {"LayerNormGrad", "dy", "[4, 3]"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op("LayerNormGrad", {x, x, floats({0, 0}, {2, 1}), st});
                       }),
                       {"LayerNormGrad", "mean", "[2, 1]"}));
}

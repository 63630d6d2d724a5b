// NLLLoss / NLLLossGrad vs PyTorch's nll_loss_forward / nll_loss_backward (none, mean, sum, class
// weights, ignore_index, 1-D input), NPU vs CPU, target faults and bad shapes.
#include <gtest/gtest.h>

#include <cmath>

#include "emulator/train_op_test_util.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

using NllLossTest = OpTest;

// logp = log_softmax(seq([4,5], 0.6, scale 2)) and w = |seq([5], 0.3)| + 0.5, computed in f64.
Tensor logp(DType dt = DType::kF64) {
  const std::vector<float> v{-2.2131273851196744f, -1.692640911082504f,  -1.3954433307449796f, -1.361758719424484f,
                             -1.5961463556091764f, -0.6783208274060574f, -1.3216942571812953f, -2.050627099793562f,
                             -2.7664616131001796f, -3.372312965314993f,  -1.874701899591043f,  -2.040573400559976f,
                             -1.9359975281387114f, -1.5751280012756133f, -1.0068069520622038f, -3.1430214573297652f,
                             -2.408222817317024f,  -1.7369301844988019f, -1.2199998427782208f, -0.9273959924135358f};
  return floats(v, {4, 5}, dt);
}
Tensor weight(DType dt = DType::kF64) {
  return floats({0.7955202162265778f, 1.120985984802246f, 1.362404227256775f, 1.4871001243591309f, 1.478196620941162f},
                {5}, dt);
}
Tensor target() { return i64({1, -100, 4, 0}, {4}); }
Attrs reduction(std::int64_t r) { return {{"reduction", r}, {"ignore_index", -100}}; }

}  // namespace

TEST_F(NllLossTest, ForwardAndBackwardMatchPytorch) {
  const std::vector<std::vector<double>> loss{
      {1.8974267386263919, 0.0, 1.4882586344784203, 2.5003371093397484}, {1.7338844638626816}, {5.886022482444561}};
  const std::vector<double> total{0.0, 3.394702821969986, 3.394702821969986};
  // Nonzero dlogp entries at [0,1], [2,4], [3,0] for dloss = seq(loss shape, 1.0).
  const std::vector<std::vector<double>> grad{{-0.943277149193591, -1.4570867964741865, -0.6826500727854281},
                                              {-0.27786737121401284, -0.36641190413349967, -0.19719168145485572},
                                              {-0.943277149193591, -1.2438595249653872, -0.6694071575038052}};
  for (std::int64_t r = 0; r < 3; ++r) {
    const auto out = call_op("NLLLoss", {logp(), target(), weight()}, reduction(r));
    EXPECT_EQ(out[0].shape(), r == 0 ? Shape{4} : Shape{});
    EXPECT_EQ(out[1].shape(), Shape{});
    EXPECT_TRUE(all_close(to_vec(out[0]), loss[r], 1e-6, 1e-7)) << r;
    EXPECT_TRUE(all_close(to_vec(out[1]), {total[r]}, 1e-6, 1e-7)) << r;
    const Tensor dloss = seq(out[0].shape(), 1.0, DType::kF64);
    const auto dx = to_vec(call_op1("NLLLossGrad", {dloss, logp(), target(), weight(), out[1]}, reduction(r)));
    ASSERT_EQ(dx.size(), 20u);
    EXPECT_TRUE(all_close({dx[1], dx[14], dx[15]}, grad[r], 1e-6, 1e-7)) << r;
    EXPECT_EQ(std::count(dx.begin(), dx.end(), 0.0), 17);
    // NPU in f32.
    const auto n = call_op("NLLLoss", on_npu({logp(DType::kF32), target(), weight(DType::kF32)}), reduction(r));
    EXPECT_TRUE(all_close(to_vec(n[0]), loss[r], 1e-5, 1e-6)) << r;
    const auto ndx = to_vec(call_op1(
        "NLLLossGrad", on_npu({seq(out[0].shape(), 1.0), logp(DType::kF32), target(), weight(DType::kF32), n[1]}),
        reduction(r)));
    EXPECT_TRUE(all_close({ndx[1], ndx[14], ndx[15]}, grad[r], 1e-5, 1e-6)) << r;
  }
}

TEST_F(NllLossTest, UnweightedOneDimAndAllIgnored) {
  // Without weight, mean is the average over the non-ignored samples.
  const auto l = call_op("NLLLoss", {logp(), target()}, reduction(1));
  const auto x = to_vec(logp());
  EXPECT_NEAR(to_vec(l[0])[0], -(x[1] + x[14] + x[15]) / 3, 1e-12);
  EXPECT_EQ(to_vec(l[1])[0], 3.0);
  // A [C] input with a [] target: loss [] for every reduction, total_weight = w[t].
  const Tensor row = floats({-2.5f, -0.5f, -1.5f}, {3}, DType::kF64), w = floats({1, 2, 4}, {3}, DType::kF64);
  for (std::int64_t r = 0; r < 3; ++r) {
    const auto o = call_op("NLLLoss", {row, i64({2}, {}), w}, reduction(r));
    EXPECT_EQ(o[0].shape(), Shape{});
    EXPECT_EQ(to_vec(o[0])[0], r == 1 ? 1.5 : 6.0) << r;
    EXPECT_EQ(to_vec(o[1])[0], 4.0);
    const auto dx =
        to_vec(call_op1("NLLLossGrad", {floats({2}, {}, DType::kF64), row, i64({2}, {}), w, o[1]}, reduction(r)));
    EXPECT_TRUE(all_close(dx, {0, 0, r == 1 ? -2.0 : -8.0}, 0, 0)) << r;
  }
  // Every sample ignored: mean is 0/0 = NaN, as aten.
  const auto none = call_op("NLLLoss", {logp(), i64({-100, -100, -100, -100}, {4})}, reduction(1));
  EXPECT_TRUE(std::isnan(to_vec(none[0])[0]));
  EXPECT_EQ(to_vec(none[1])[0], 0.0);
}

TEST_F(NllLossTest, TargetOutOfRangeIsAFaultNotACrash) {
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op("NLLLoss", {logp(), i64({1, 5, 0, 0}, {4})}, reduction(1));
                       }),
                       {"NLLLoss", "target 5 is out of bounds [0, 5)"}));
  EXPECT_TRUE(
      mentions(error_of([&] {
                 const auto r = call_op("NLLLoss", on_npu({logp(DType::kF32), i64({1, -3, 0, 0}, {4})}), reduction(2));
                 (void)r[0].cpu();
                 Runtime::get().synchronize_all();
               }),
               {"NLLLoss", "target -3"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("NLLLossGrad",
                                  {floats({1}, {}, DType::kF64), logp(), i64({7, 0, 0, 0}, {4}), Tensor(),
                                   floats({4}, {}, DType::kF64)},
                                  reduction(1));
                       }),
                       {"NLLLossGrad", "target 7"}));
}

TEST_F(NllLossTest, BadShapes) {
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op("NLLLoss", {logp(), i64({1, 2}, {2})}, reduction(1));
                       }),
                       {"NLLLoss", "target must be [4]"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op("NLLLoss", {logp(), target(), floats({1, 2}, {2})}, reduction(1));
                       }),
                       {"NLLLoss", "weight must be [5]"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op("NLLLoss", {logp(), target()}, reduction(3));
                       }),
                       {"NLLLoss", "reduction 3"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op("NLLLoss", {logp(), logp()}, reduction(1));
                       }),
                       {"NLLLoss", "target must be an integer tensor"}));
}

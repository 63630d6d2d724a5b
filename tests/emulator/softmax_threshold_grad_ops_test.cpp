// LogSoftmaxGrad, SoftmaxGrad, ThresholdGrad vs PyTorch's _log_softmax_backward_data,
// _softmax_backward_data and threshold_backward; NPU vs CPU (f32, f16); dx in dy's memory; errors.
#include <gtest/gtest.h>

#include "emulator/train_op_test_util.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

using SoftmaxThresholdGradTest = OpTest;

// x = seq([2,3,4], 0.4, scale 3), dy = seq([2,3,4], 1.9); y from our own (Log)Softmax, which
// matches PyTorch's to f32 rounding.
const Tensor& x() {
  static const Tensor t = seq({2, 3, 4}, 0.4, DType::kF32, 3.0);
  return t;
}
const Tensor& dy() {
  static const Tensor t = seq({2, 3, 4}, 1.9);
  return t;
}

}  // namespace

TEST_F(SoftmaxThresholdGradTest, LogSoftmaxGradMatchesPytorch) {
  const Tensor y = call_op1("LogSoftmax", {x()}, {{"axis", 1}});
  const Tensor dx = call_op1("LogSoftmaxGrad", {dy(), y}, {{"axis", 1}});
  EXPECT_TRUE(all_close(
      to_vec(dx),
      {0.9887052160673865,   1.058657129816447,   1.2361095216295717,   1.1966563494975044,  -0.00646251309301366,
       -0.19652701097145753, -0.6090905181484911, -0.8914648420782716,  -0.9822427029743729, -0.8621301188449896,
       -0.6270190034810805,  -0.3051915074192329, 0.053938339992610274, 0.4101066809521696,  0.7081590976728661,
       0.9090697612211175,   0.9371285973934605,  0.7671668833630091,   0.3634504828488864,  0.04622501095297532,
       -0.9910669373860708,  -1.1772735643151788, -1.0716095805217525,  -0.9552947721740928},
      1e-5, 1e-6));
  const Tensor y_last = call_op1("LogSoftmax", {x()}, {{"axis", -1}});
  const auto last = to_vec(call_op1("LogSoftmaxGrad", {dy(), y_last}, {{"axis", -1}}));
  EXPECT_TRUE(all_close({last.begin(), last.begin() + 4},
                        {0.7856861767026203, 0.3622672682393287, -0.2817127264949724, -0.8662407184469763}, 1e-5,
                        1e-6));
  EXPECT_TRUE(all_close(to_vec(call_op1("LogSoftmaxGrad", on_npu({dy(), y}), {{"axis", 1}})), to_vec(dx), 1e-5, 1e-6));
}

TEST_F(SoftmaxThresholdGradTest, SoftmaxGradMatchesPytorch) {
  const Tensor y = call_op1("Softmax", {x()}, {{"axis", 1}});
  const Tensor dx = call_op1("SoftmaxGrad", {dy(), y}, {{"axis", 1}});
  EXPECT_TRUE(all_close(to_vec(dx),
                        {0.155237613345684,      0.3297887748041989,    0.2309480165562843,    0.07553425046362093,
                         -0.13268575858529014,   -0.3208797763710056,   -0.22742693479907952,  -0.07463449114795796,
                         -0.022551854760393904,  -0.008908998433193283, -0.003521081757204806, -0.0008997593156629612,
                         -0.0002739884206531956, 0.0016163478683470264, 0.005357489583047484,  0.013404613310531542,
                         0.04373793508492367,    0.15803715386156464,   0.32561705252934897,   0.21090639093957167,
                         -0.043463946664270454,  -0.15965350172991166,  -0.33097454211239646,  -0.22431100425010317},
                        1e-5, 1e-6));
  EXPECT_TRUE(all_close(to_vec(call_op1("SoftmaxGrad", on_npu({dy(), y}), {{"axis", 1}})), to_vec(dx), 1e-5, 1e-6));
}

TEST_F(SoftmaxThresholdGradTest, NpuF16AndLongRows) {
  const Tensor xs = seq({4, 1000}, 0.1, DType::kF16, 4.0), g = seq({4, 1000}, 0.5, DType::kF16);
  for (const char* op : {"LogSoftmax", "Softmax"}) {
    const Tensor y = call_op1(op, {xs});
    const std::string grad = std::string(op) + "Grad";
    const auto want = to_vec(call_op1(grad, {g, y}));
    EXPECT_TRUE(all_close(to_vec(call_op1(grad, on_npu({g, y}))), want, 2e-3, 2e-3)) << grad;
  }
}

TEST_F(SoftmaxThresholdGradTest, GradInDyMemory) {
  const Tensor y = call_op1("Softmax", {x()}, {{"axis", 1}});
  const auto want = to_vec(call_op1("SoftmaxGrad", {dy(), y}, {{"axis", 1}}));
  std::vector<Tensor> in{dy().to(DeviceRef::cpu()), y}, out{in[0]};
  run_cpu_kernel("SoftmaxGrad", in, out, {{"axis", 1}});
  EXPECT_TRUE(all_close(to_vec(in[0]), want, 0, 0));
}

TEST_F(SoftmaxThresholdGradTest, ThresholdGrad) {
  const Tensor g = floats({1, 2, 3, 4, 5, 6}, {6});
  const Tensor xs = floats({-1, 0, 0.5f, 1, std::nanf(""), 2}, {6});
  const std::vector<double> relu{0, 0, 3, 4, 5, 6};  // x <= 0 -> 0; NaN <= 0 is false
  EXPECT_TRUE(all_close(to_vec(call_op1("ThresholdGrad", {g, xs})), relu, 0, 0));
  EXPECT_TRUE(all_close(to_vec(call_op1("ThresholdGrad", on_npu({g, xs}))), relu, 0, 0));
  EXPECT_TRUE(all_close(to_vec(call_op1("ThresholdGrad", {g, xs}, {{"threshold", 1.0}})), {0, 0, 0, 0, 5, 6}, 0, 0));
  std::vector<Tensor> in{g.to(DeviceRef::cpu()), xs}, out{in[0]};
  run_cpu_kernel("ThresholdGrad", in, out, {});
  EXPECT_TRUE(all_close(to_vec(in[0]), relu, 0, 0));
  EXPECT_TRUE(mentions(error_of([&] { call_op1("ThresholdGrad", {g, floats({1, 2}, {2})}); }), {"ThresholdGrad"}));
}

TEST_F(SoftmaxThresholdGradTest, BadShapes) {
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("SoftmaxGrad", {dy(), seq({2, 3}, 0)});
                       }),
                       {"SoftmaxGrad", "dy [2, 3, 4] and y [2, 3] differ in shape"}));
  EXPECT_TRUE(mentions(error_of([&] { call_op1("LogSoftmaxGrad", {dy(), dy()}, {{"axis", 3}}); }), {"LogSoftmaxGrad"}));
}

// BatchNormTraining / BatchNormTrainingGrad vs PyTorch's native_batch_norm(training=True) and
// native_batch_norm_backward (train and eval), NPU vs CPU, running stats updated in place, the NPU's
// in-place reads and writes of x, y, dy and dx (Note [Batch norm in place]) with both overflow modes,
// errors.
#include <gtest/gtest.h>

#include <limits>

#include "emulator/alias_test_util.h"
#include "emulator/train_op_test_util.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

using BatchNormTrainTest = OpTest;

// The inputs of the PyTorch script: x = seq([2,3,2,2], 0.2, scale 2), w = seq([3], 0.5),
// b = seq([3], 0.9), running_mean = seq([3], 1.1), running_var = |seq([3], 1.7)| + 0.5;
// momentum 0.2, eps 1e-3; dy = seq([2,3,2,2], 2.1).
struct Inputs {
  Tensor x = seq({2, 3, 2, 2}, 0.2, DType::kF32, 2.0), w = seq({3}, 0.5), b = seq({3}, 0.9);
  Tensor rm = seq({3}, 1.1), rv = running_var(), dy = seq({2, 3, 2, 2}, 2.1);
  static Tensor running_var() {
    std::vector<double> v = to_vec(seq({3}, 1.7));
    std::vector<float> f;
    for (double e : v) f.push_back(static_cast<float>(std::fabs(e) + 0.5));
    return floats(f, {3});
  }
};

const Attrs kTrainAttrs{{"momentum", 0.2}, {"epsilon", 1e-3}};

}  // namespace

TEST_F(BatchNormTrainTest, ForwardMatchesPytorch) {
  const Inputs in;
  const auto r = call_op("BatchNormTraining", {in.x, in.w, in.b, in.rm, in.rv}, kTrainAttrs);
  ASSERT_EQ(r.size(), 5u);
  EXPECT_TRUE(all_close(
      to_vec(r[0]),
      {0.9663317656194697,   1.1810974117411221,  1.3498587527391903,  1.449774666038776,   1.917050796260441,
       1.6931185905906472,   1.217085615518691,   0.5533807622267538,  0.7295256245301358,  0.2638766268842111,
       -0.13552942573327964, -0.4146348393357053, 0.21296329882271772, 0.23900340530127684, 0.3465471269457497,
       0.5210389635692854,   -0.5105519179956739, 0.2615031146952323,  0.9752197708417574,  1.5339999428194264,
       2.004215579992066,    2.036987009067212,   1.8960191700982092,  1.6003914278980298},
      1e-5, 1e-6));
  EXPECT_TRUE(all_close(to_vec(r[1]), {-0.18373959884047508, 1.0715442560613155, 0.378056934569031}, 1e-5, 1e-6));
  EXPECT_TRUE(all_close(to_vec(r[2]), {0.6569113716082696, 1.3731554343428767, 0.6832224935422881}, 1e-5, 1e-6));
  // The running variance moves towards the UNBIASED batch variance.
  EXPECT_TRUE(all_close(to_vec(r[3]), {0.6762179501354695, 1.0102483443915844, 0.8467977863736451}, 1e-5, 1e-6));
  EXPECT_TRUE(all_close(to_vec(r[4]), {1.722776957773116, 1.2233649984586994, 1.4057827940807397}, 1e-5, 1e-6));
  // NPU agrees.
  const auto n = call_op("BatchNormTraining", on_npu({in.x, in.w, in.b, in.rm, in.rv}), kTrainAttrs);
  for (std::size_t i = 0; i < 5; ++i) EXPECT_TRUE(all_close(to_vec(n[i]), to_vec(r[i]), 1e-5, 1e-6)) << i;
}

TEST_F(BatchNormTrainTest, WithoutOptionalInputs) {
  const Inputs in;
  const auto r = call_op("BatchNormTraining", {in.x, Tensor(), Tensor(), Tensor(), Tensor()}, kTrainAttrs);
  ASSERT_EQ(r.size(), 5u);
  EXPECT_EQ(r[3].shape(), Shape{3});
  EXPECT_EQ(r[4].shape(), Shape{3});
  // Without weight and bias y is (x − mean)·invstd.
  const auto x = to_vec(in.x), y = to_vec(r[0]), mean = to_vec(r[1]), inv = to_vec(r[2]);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::size_t ch = (i / 4) % 3;
    EXPECT_NEAR(y[i], (x[i] - mean[ch]) * inv[ch], 1e-6);
  }
}

TEST_F(BatchNormTrainTest, RunningStatsUpdatedInPlace) {
  const Inputs in;
  std::vector<Tensor> inputs{in.x, in.w, in.b, in.rm.to(DeviceRef::cpu()), in.rv.to(DeviceRef::cpu())};
  std::vector<Tensor> outputs{Tensor::empty({2, 3, 2, 2}, DType::kF32), Tensor::empty({3}, DType::kF32),
                              Tensor::empty({3}, DType::kF32), inputs[3], inputs[4]};
  run_cpu_kernel("BatchNormTraining", inputs, outputs, kTrainAttrs);
  EXPECT_TRUE(all_close(to_vec(inputs[3]), {0.6762179501354695, 1.0102483443915844, 0.8467977863736451}, 1e-6, 1e-7));
  EXPECT_TRUE(all_close(to_vec(inputs[4]), {1.722776957773116, 1.2233649984586994, 1.4057827940807397}, 1e-6, 1e-7));
}

TEST_F(BatchNormTrainTest, NpuOutputMayBeTheMemoryOfXOrDy) {
  // [3, 5, 9, 9]: planes of 81 values, more than one lane block each.
  const Tensor x = seq({3, 5, 9, 9}, 0.4, DType::kF32, 3.0), dy = seq({3, 5, 9, 9}, 1.9);
  const Tensor w = seq({5}, 0.5), b = seq({5}, 0.9), rm = seq({5}, 1.1), rv = floats({1, 2, 3, 4, 5}, {5});
  const auto fresh = call_op("BatchNormTraining", on_npu({x, w, b, rm, rv}), kTrainAttrs);
  const Tensor y = run_in_place("BatchNormTraining", {x, w, b, rm, rv}, kTrainAttrs, Backend::kNpu, 0);
  EXPECT_EQ(bytes_of(y), bytes_of(fresh[0]));
  const std::vector<Tensor> grad_in{dy, x, w, fresh[1].cpu(), fresh[2].cpu()};
  const auto grad = call_op("BatchNormTrainingGrad", on_npu(grad_in), {{"epsilon", 1e-3}});
  EXPECT_EQ(bytes_of(run_in_place("BatchNormTrainingGrad", grad_in, {{"epsilon", 1e-3}}, Backend::kNpu, 0)),
            bytes_of(grad[0]));
  EXPECT_EQ(bytes_of(run_in_place("BatchNormTrainingGrad", grad_in, {{"epsilon", 1e-3}}, Backend::kNpu, 1)),
            bytes_of(grad[0]));
}

TEST_F(BatchNormTrainTest, NpuOverflowFlagsAndSaturation) {
  // A weight of 3e38 takes the normalised values above 1 past the f32 maximum.
  const Tensor x = seq({2, 3, 4, 4}, 0.2, DType::kF32, 2.0);
  const Tensor w = floats({3e38f, 1, 1}, {3}), b = floats({0, 0, 0}, {3});
  const std::vector<Tensor> in{x, w, b, Tensor(), Tensor()};
  for (OverflowMode mode : {OverflowMode::kInfNan, OverflowMode::kSaturation}) {
    Runtime::configure(RuntimeOptions{.overflow_mode = mode});
    Device& dev = Runtime::get().device();
    dev.clear_float_status();
    const auto cpu = to_vec(call_op("BatchNormTraining", in, kTrainAttrs)[0]);
    const auto npu = to_vec(call_op("BatchNormTraining", on_npu(in), kTrainAttrs)[0]);
    const bool saturate = mode == OverflowMode::kSaturation;
    EXPECT_EQ(dev.float_status(), saturate);
    int clamped = 0;
    for (std::size_t i = 0; i < npu.size(); ++i) {
      if (!std::isinf(cpu[i])) continue;
      ++clamped;
      EXPECT_EQ(npu[i], saturate ? std::copysign(std::numeric_limits<float>::max(), cpu[i]) : cpu[i]) << i;
    }
    EXPECT_GT(clamped, 0);
  }
}

TEST_F(BatchNormTrainTest, BackwardMatchesPytorch) {
  const Inputs in;
  const auto f = call_op("BatchNormTraining", {in.x, in.w, in.b, in.rm, in.rv}, kTrainAttrs);
  const auto g = call_op("BatchNormTrainingGrad", {in.dy, in.x, in.w, f[1], f[2]}, {{"epsilon", 1e-3}});
  ASSERT_EQ(g.size(), 3u);
  EXPECT_TRUE(all_close(
      to_vec(g[0]),
      {0.11721677885622314, 0.061907613024468226, -0.02433386751374969, -0.1298352802879898,  0.16730671657367216,
       -0.2791306165488665, -0.772511790059458,   -1.2460598119298423,  -0.25552731452784755, -0.14511340327370345,
       0.03265441258025315, 0.2537160119138554,   -0.14685242686038374, -0.03961800013621278, 0.05042513671397444,
       0.11109004620367018, 0.20667083002760836,  0.5322738326624091,   0.7011132981065186,   0.6903375411679586,
       0.33163766060607014, 0.10264057788289843,  -0.09253499208209805, -0.22747295309942808},
      1e-5, 1e-6));
  EXPECT_TRUE(all_close(to_vec(g[1]), {-1.1671949875125134, -3.4589154201102867, -0.2589874277673572}, 1e-5, 1e-6));
  EXPECT_TRUE(all_close(to_vec(g[2]), {4.373712696135044, -0.3180222511291504, -4.431383848190308}, 1e-5, 1e-6));
  const auto n = call_op("BatchNormTrainingGrad", on_npu({in.dy, in.x, in.w, f[1], f[2]}), {{"epsilon", 1e-3}});
  for (std::size_t i = 0; i < 3; ++i) EXPECT_TRUE(all_close(to_vec(n[i]), to_vec(g[i]), 1e-5, 1e-6)) << i;
}

TEST_F(BatchNormTrainTest, EvalBackwardUsesTheRunningStats) {
  const Inputs in;
  const auto g =
      call_op("BatchNormTrainingGrad", {in.dy, in.x, in.w, in.rm, in.rv}, {{"training", 0}, {"epsilon", 1e-3}});
  const auto dx = to_vec(g[0]);
  EXPECT_TRUE(all_close({dx.begin(), dx.begin() + 4},
                        {0.33873195554637375, 0.24417065193165224, 0.11656198769032115, -0.026822791828585442}, 1e-5,
                        1e-6));
  EXPECT_TRUE(all_close(to_vec(g[1]), {-5.302491600983293, -2.1658315566420137, 2.0709447430164665}, 1e-5, 1e-6));
  EXPECT_TRUE(all_close(to_vec(g[2]), {4.373712696135044, -0.3180222511291504, -4.431383848190308}, 1e-5, 1e-6));
}

TEST_F(BatchNormTrainTest, BadShapes) {
  const Inputs in;
  EXPECT_TRUE(mentions(error_of([&] { call_op("BatchNormTraining", {seq({4}, 0)}, {}); }),
                       {"BatchNormTraining", "[N, C, ...]"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op("BatchNormTraining", {in.x, seq({4}, 0)}, {});
                       }),
                       {"BatchNormTraining", "weight (input 1) must be [3], got [4]"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op("BatchNormTrainingGrad", {in.dy, in.x, in.w, in.rm, Tensor()}, {});
                       }),
                       {"BatchNormTrainingGrad", "invstd_or_var (input 4) is required"}));
}

// CTCLossV2 / CTCLossV2Grad vs PyTorch 1.13's _ctc_loss / _ctc_loss_backward on the CPU (padded and
// concatenated targets, another blank, an empty target, zero_infinity with an infeasible sample), NPU
// vs CPU, where the op runs, bad shapes and data faults.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string_view>

#include "emulator/ext_op_test_util.h"
#include "emulator/task_end_records.h"
#include "emulator/train_op_test_util.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

using CtcLossTest = OpTest;

constexpr double kInf = std::numeric_limits<double>::infinity();

// The PyTorch side of every constant below, in f64:
//   lp = seq([5, 3, 4], 0.3) (train_op_test_util.h); tg = [[1, 2], [3, 3], [2, 0]]; il = [5, 4, 2]; tl = [2, 2, 0]
//   nll, alpha = torch._ctc_loss(lp, tg, il, tl, 0, False)
//   torch.ops.aten._ctc_loss_backward(g, lp, tg, il, tl, nll, alpha, 0, False) with g = [0.5, -1, 2]
Tensor lp(DType dt = DType::kF64) { return seq({5, 3, 4}, 0.3, dt); }
Tensor padded(DType dt = DType::kI64) { return ints({1, 2, 3, 3, 2, 0}, {3, 2}, dt); }
Tensor input_lengths() { return ints({5, 4, 2}, {3}); }
Tensor target_lengths() { return ints({2, 2, 0}, {3}); }
Tensor grad_out(DType dt = DType::kF64) { return floats({0.5f, -1, 2}, {3}, dt); }
Attrs blank(std::int64_t b, std::int64_t zero_infinity = 0) { return {{"blank", b}, {"zero_infinity", zero_infinity}}; }

const Doubles kLoss{-3.7040944743272135, -1.3735896502905574, -0.8700373843312263};
const Doubles kGrad{0.48369163916850105,
                    0.6186018993915644,
                    1.1844245522168688,
                    1.3417207658996742,
                    -2.2748404549623933,
                    -2.3091945953382638,
                    -1.7902059052995245,
                    -0.6674888673717627,
                    -0.2228404606643013,
                    1.2509798676269341,
                    0.9383283680074936,
                    0.7797295986314694,
                    0.025929335504721707,
                    -0.09170916897035075,
                    0.1921337341517213,
                    0.3286009466061893,
                    -0.5092090677119847,
                    -1.3525931737894963,
                    -1.870700632945906,
                    -1.8065874080246502,
                    3.3726185757086773,
                    5.311667307466524,
                    4.60110501126289,
                    3.560583161033152,
                    0.41318134585027944,
                    0.2748959894883175,
                    0.20120363342322972,
                    0.23354360577735248,
                    0.254715953679565,
                    -0.36809748528590847,
                    -0.3987867321978275,
                    -0.13297711973099557,
                    0.0,
                    0.0,
                    0.0,
                    0.0,
                    1.036745218908006,
                    1.2754814192553414,
                    1.0507791635816468,
                    1.1459270501112784,
                    -1.506280607738292,
                    -1.2658246140321967,
                    -0.8766447759613132,
                    0.11786200804145164,
                    0.0,
                    0.0,
                    0.0,
                    0.0,
                    0.10969661903677991,
                    0.33270399052595706,
                    0.11195111259509155,
                    0.6851214865117746,
                    0.0,
                    0.0,
                    0.0,
                    0.0,
                    0.0,
                    0.0,
                    0.0,
                    0.0};

}  // namespace

TEST_F(CtcLossTest, LossAndGradientMatchPyTorch) {
  const auto out = call_op("CTCLossV2", {lp(), padded(), input_lengths(), target_lengths()}, blank(0));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), Shape{3});
  EXPECT_EQ(out[1].shape(), (Shape{3, 5, 5}));
  EXPECT_TRUE(all_close(to_vec(out[0]), kLoss, 1e-12, 1e-12));
  // log_alpha of sample 0 at its last frame, as aten's; states past a sample's lengths are -inf.
  const Doubles alpha = to_vec(out[1]);
  EXPECT_TRUE(
      all_close({alpha.begin() + 20, alpha.begin() + 25},
                {-0.3025749772787094, 1.5936193030681878, 2.0354302107926117, 3.3863229063477043, 2.4029901101837257},
                1e-12, 1e-12));
  EXPECT_EQ(alpha[25 + 4 * 5], -kInf);  // sample 1 has 4 frames
  EXPECT_EQ(alpha[50 + 1], -kInf);      // sample 2 has an empty target: one state
  const Tensor grad = call_op1(
      "CTCLossV2Grad", {grad_out(), lp(), padded(), input_lengths(), target_lengths(), out[0], out[1]}, blank(0));
  EXPECT_EQ(grad.shape(), (Shape{5, 3, 4}));
  EXPECT_TRUE(all_close(to_vec(grad), kGrad, 1e-12, 1e-12));
}

TEST_F(CtcLossTest, ConcatenatedTargetsAndInt32MatchPadded) {
  const Tensor concatenated = ints({1, 2, 3, 3}, {4}, DType::kI32);
  const Attrs attrs{{"blank", std::int64_t{0}}, {"max_target_length", std::int64_t{2}}};
  const auto out = call_op("CTCLossV2", {lp(), concatenated, input_lengths(), target_lengths()}, attrs);
  EXPECT_EQ(out[1].shape(), (Shape{3, 5, 5}));
  EXPECT_TRUE(all_close(to_vec(out[0]), kLoss, 1e-12, 1e-12));
  const Tensor grad = call_op1(
      "CTCLossV2Grad", {grad_out(), lp(), concatenated, input_lengths(), target_lengths(), out[0], out[1]}, attrs);
  EXPECT_TRUE(all_close(to_vec(grad), kGrad, 1e-12, 1e-12));
  // Padded int32 targets too.
  EXPECT_TRUE(all_close(
      to_vec(call_op("CTCLossV2", {lp(), padded(DType::kI32), input_lengths(), target_lengths()}, blank(0))[0]), kLoss,
      1e-12, 1e-12));
}

TEST_F(CtcLossTest, AnotherBlankMatchesPyTorch) {
  // tg = [[1, 3], [3, 3], [0, 0]], blank 2; grad weighted by seq([5, 3, 4], 1.1) and summed.
  const Tensor tg = ints({1, 3, 3, 3, 0, 0}, {3, 2});
  const auto out = call_op("CTCLossV2", {lp(), tg, input_lengths(), target_lengths()}, blank(2));
  EXPECT_TRUE(all_close(to_vec(out[0]), {-4.1678181466464626, -1.422239857413312, -0.07634681463241577}, 1e-12, 1e-12));
  const Doubles grad =
      op_values("CTCLossV2Grad", {grad_out(), lp(), tg, input_lengths(), target_lengths(), out[0], out[1]}, blank(2));
  const Doubles w = to_vec(seq({5, 3, 4}, 1.1, DType::kF64));
  double sum = 0;
  for (std::size_t i = 0; i < w.size(); ++i) sum += grad[i] * w[i];
  EXPECT_NEAR(sum, 6.293611778542706, 1e-11);
}

TEST_F(CtcLossTest, ZeroInfinityZeroesTheInfeasibleSample) {
  // lp = seq([4, 2, 3], 0.9), tg = [[1, 1, 1], [2, 1, 0]], il = [4, 4], tl = [3, 2]: sample 0 needs 5 frames.
  const Tensor x = seq({4, 2, 3}, 0.9, DType::kF64), tg = ints({1, 1, 1, 2, 1, 0}, {2, 3});
  const Tensor il = ints({4, 4}, {2}), tl = ints({3, 2}, {2}), g = floats({1.5f, 0.75f}, {2}, DType::kF64);
  const auto raw = call_op("CTCLossV2", {x, tg, il, tl}, blank(0));
  EXPECT_TRUE(all_close(to_vec(raw[0]), {kInf, -3.335440125941296}, 1e-12, 1e-12));
  EXPECT_TRUE(
      all_close(to_vec(call_op("CTCLossV2", {x, tg, il, tl}, blank(0, 1))[0]), {0, -3.335440125941296}, 1e-12, 1e-12));
  const Doubles sample1{1.4996825751300427,  1.495398771115901,    0.7029708822281994, 0.10198483431238228,
                        0.16070230617579678, -0.14060474470576004, 0.7551678691810683, 0.8459482614723349,
                        1.4335657145932315,  1.2206213092917628,   0.609025679610105,  0.7611653616140659};
  const Doubles zeroed = op_values("CTCLossV2Grad", {g, x, tg, il, tl, raw[0], raw[1]}, blank(0, 1));
  const Doubles kept = op_values("CTCLossV2Grad", {g, x, tg, il, tl, raw[0], raw[1]}, blank(0, 0));
  Doubles zeroed0, zeroed1;
  for (std::size_t i = 0; i < zeroed.size(); ++i) {
    (i % 6 < 3 ? zeroed0 : zeroed1).push_back(zeroed[i]);
    if (i % 6 < 3) {
      EXPECT_TRUE(std::isnan(kept[i])) << i;  // as aten: inf - inf
    }
  }
  EXPECT_TRUE(all_close(zeroed0, Doubles(12, 0.0), 0, 0));
  EXPECT_TRUE(all_close(zeroed1, sample1, 1e-12, 1e-12));
}

TEST_F(CtcLossTest, NpuAgreesWithCpu) {
  // 30 frames, 4 samples, 10 classes, targets up to 8 labels with repeats.
  const Tensor x = seq({30, 4, 10}, 0.2, DType::kF32, 3.0);
  const Tensor tg =
      ints({1, 2, 2, 3, 4, 5, 6, 7, 9, 9, 9, 1, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 5, 4, 3, 2, 1, 2, 3, 4}, {4, 8});
  const Tensor il = ints({30, 25, 7, 30}, {4}), tl = ints({8, 4, 1, 8}, {4}), g = floats({1, 0.5f, -2, 0.25f}, {4});
  for (const std::int64_t b : {std::int64_t{0}, std::int64_t{8}}) {
    const BothBackends loss = run_both("CTCLossV2", {x, tg, il, tl}, blank(b));
    EXPECT_TRUE(all_close(to_vec(loss.npu[0]), to_vec(loss.cpu[0]), 1e-5, 1e-5)) << b;
    const BothBackends grad = run_both("CTCLossV2Grad", {g, x, tg, il, tl, loss.cpu[0], loss.cpu[1]}, blank(b));
    EXPECT_TRUE(all_close(to_vec(grad.npu[0]), to_vec(grad.cpu[0]), 1e-4, 1e-5)) << b;
  }
}

TEST_F(CtcLossTest, RunsOnTheAiCoreUnlessCannSendsItToTheAiCpu) {
  EndRecords log;
  const Tensor x = seq({3, 1, 4}, 0.2, DType::kF32), il = ints({3}, {1}), tl = ints({1}, {1});
  (void)call_op("CTCLossV2", on_npu({x, ints({1}, {1, 1}), il, tl}), blank(0))[0].cpu();
  // Targets longer than 1000 labels: CANN's AI CPU kernel.
  (void)call_op("CTCLossV2", on_npu({x, ints(I64s(1001, 1), {1, 1001}), il, tl}), blank(0))[0].cpu();
  std::vector<npuscope::TaskType> types;
  for (const auto& r : log.ends) {
    if (std::string_view(r.op_type) == "CTCLossV2") types.push_back(r.task_type);
  }
  ASSERT_EQ(types.size(), 2u);
  EXPECT_NE(types[0], npuscope::TaskType::kAiCpu);
  EXPECT_EQ(types[1], npuscope::TaskType::kAiCpu);
}

TEST_F(CtcLossTest, BadShapesNameTheOp) {
  const Tensor il = input_lengths(), tl = target_lengths();
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op("CTCLossV2", {seq({5, 12}, 0.3), padded(), il, tl});
                       }),
                       {"CTCLossV2", "log_probs must be [T, N, C]"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op("CTCLossV2", {lp(), ints({1, 2}, {1, 2}), il, tl});
                       }),
                       {"CTCLossV2", "targets must be [N, S] = [3, S]"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op("CTCLossV2", {lp(), seq({3, 2}, 0.1), il, tl});
                       }),
                       {"CTCLossV2", "targets must be an integer tensor"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op("CTCLossV2", {lp(), padded(), ints({5, 4}, {2}), tl});
                       }),
                       {"CTCLossV2", "input_lengths must be [3]"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op("CTCLossV2", {lp(), padded(), il, tl}, blank(4));
                       }),
                       {"CTCLossV2", "blank 4 is outside the classes [0, 4)"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op("CTCLossV2", {lp(), ints({1, 2, 3, 3}, {4}), il, tl});
                       }),
                       {"CTCLossV2", "max_target_length"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op("CTCLossV2", {lp(), padded(), il, tl}, {{"max_target_length", std::int64_t{3}}});
                       }),
                       {"CTCLossV2", "max_target_length 3 is outside [0, 2]"}));
  const auto out = call_op("CTCLossV2", {lp(), padded(), il, tl});
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op("CTCLossV2Grad", {grad_out(), lp(), padded(), il, tl, out[0], seq({3, 5, 4}, 0.1)});
                       }),
                       {"CTCLossV2Grad", "log_alpha must be [N, T, 2·S + 1]"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op("CTCLossV2Grad", {seq({2}, 0.1), lp(), padded(), il, tl, out[0], out[1]});
                       }),
                       {"CTCLossV2Grad", "grad_out must be [3]"}));
}

TEST_F(CtcLossTest, BadLengthsAndLabelsAreFaultsNotCrashes) {
  const Tensor tl = target_lengths();
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op("CTCLossV2", {lp(), padded(), ints({5, 6, 2}, {3}), tl});
                       }),
                       {"CTCLossV2", "input_lengths[1] = 6 is outside [0, 5]"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op("CTCLossV2", {lp(), padded(), input_lengths(), ints({2, 3, 0}, {3})});
                       }),
                       {"CTCLossV2", "target_lengths[1] = 3 is outside [0, 2]"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op("CTCLossV2", {lp(), ints({1, 2, 4, 3}, {4}), input_lengths(), tl},
                                 {{"max_target_length", std::int64_t{2}}});
                       }),
                       {"CTCLossV2", "target 4 of sample 1 is out of bounds [0, 4)"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op("CTCLossV2", {lp(), ints({1, 2, 3}, {3}), input_lengths(), tl},
                                 {{"max_target_length", std::int64_t{2}}});
                       }),
                       {"CTCLossV2", "concatenated targets hold 3 labels, but the target lengths add up to 4"}));
  // On the NPU the fault surfaces at the next synchronisation.
  EXPECT_TRUE(mentions(error_of([&] {
                         const auto r =
                             call_op("CTCLossV2",
                                     on_npu({lp(DType::kF32), ints({1, -1, 3, 3, 2, 0}, {3, 2}), input_lengths(), tl}));
                         (void)r[0].cpu();
                         Runtime::get().synchronize_all();
                       }),
                       {"CTCLossV2", "target -1"}));
  const auto out = call_op("CTCLossV2", {lp(), padded(), input_lengths(), tl});
  EXPECT_TRUE(
      mentions(error_of([&] {
                 call_op("CTCLossV2Grad", {grad_out(), lp(), padded(), ints({9, 4, 2}, {3}), tl, out[0], out[1]});
               }),
               {"CTCLossV2Grad", "input_lengths[0] = 9"}));
}

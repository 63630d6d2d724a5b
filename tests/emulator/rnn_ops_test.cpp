// LSTM, GRU and RNN: values computed by hand from the ONNX equations (one unit, one or two steps) on
// both backends, sequence lengths in both directions, force_fp16 numerics, the AI CPU fallback, the
// cost model's cube + vector time, and bad inputs. Every option against an f64 reference:
// rnn_options_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "emulator/op_test_util.h"
#include "emulator/task_end_records.h"
#include "npuscope/emulator/float16.h"
#include "npuscope/runtime_hooks/hook_api.h"

using namespace npuscope;
using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

class RnnOpsTest : public OpTest {};

using V = std::vector<double>;

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

// Runs the op on the cpu and on the npu; returns both results as doubles.
std::vector<std::vector<V>> both(const char* op, const std::vector<Tensor>& in, const Attrs& attrs) {
  std::vector<std::vector<V>> out;
  for (const auto& inputs : {in, on_npu(in)}) {
    std::vector<V> r;
    for (const Tensor& t : call_op(op, inputs, attrs)) r.push_back(to_vec(t));
    out.push_back(r);
  }
  return out;
}

// An LSTM of `seq` steps, batch 4, input 32, hidden 64 on the npu: its one task.
hooks::TaskRecord lstm_task(std::int64_t seq, DType dtype) {
  EndRecords rec;
  const std::int64_t B = 4, I = 32, H = 64;
  const Tensor x = floats(std::vector<float>(static_cast<std::size_t>(seq * B * I), 0.1f), {seq, B, I}, dtype);
  const Tensor w = floats(std::vector<float>(static_cast<std::size_t>(4 * H * I), 0.01f), {1, 4 * H, I}, dtype);
  const Tensor r = floats(std::vector<float>(static_cast<std::size_t>(4 * H * H), 0.01f), {1, 4 * H, H}, dtype);
  call_op("LSTM", on_npu({x, w, r}))[0].cpu();
  hooks::subscribe(nullptr);
  for (const auto& t : rec.ends) {
    if (std::string(t.op_type) == "LSTM") return t;
  }
  ADD_FAILURE() << "no LSTM task";
  return {};
}

}  // namespace

TEST_F(RnnOpsTest, RnnTwoStepsByHand) {
  // W 0.5, R -1, Wb 0.1, Rb 0.2: h1 = tanh(0.5·1 + 0.3), h2 = tanh(0.5·2 - h1 + 0.3).
  const std::vector<Tensor> in{floats({1, 2}, {2, 1, 1}), floats({0.5}, {1, 1, 1}), floats({-1}, {1, 1, 1}),
                               floats({0.1f, 0.2f}, {1, 2})};
  const double h1 = std::tanh(0.8), h2 = std::tanh(1.0 - h1 + 0.3);
  for (const auto& out : both("RNN", in, {})) {
    EXPECT_TRUE(all_close(out[0], {h1, h2}, 1e-6, 1e-6));
    EXPECT_TRUE(all_close(out[1], {h2}, 1e-6, 1e-6));
  }
}

TEST_F(RnnOpsTest, LstmOneStepWithPeepholesByHand) {
  // W (i, o, f, c) = (1, 2, 3, 4), R = 0, x = 0.5, C0 = 0.25, P (i, o, f) = (0.1, 0.2, 0.3).
  const std::vector<Tensor> in{
      floats({0.5}, {1, 1, 1}), floats({1, 2, 3, 4}, {1, 4, 1}), floats({0, 0, 0, 0}, {1, 4, 1}),   Tensor(), Tensor(),
      floats({0}, {1, 1, 1}),   floats({0.25}, {1, 1, 1}),       floats({0.1f, 0.2f, 0.3f}, {1, 3})};
  const double i = sigmoid(0.5 + 0.1 * 0.25), f = sigmoid(1.5 + 0.3 * 0.25), c = f * 0.25 + i * std::tanh(2.0);
  const double h = sigmoid(1.0 + 0.2 * c) * std::tanh(c);
  for (const auto& out : both("LSTM", in, {})) {
    EXPECT_TRUE(all_close(out[0], {h}, 1e-6, 1e-6));
    EXPECT_TRUE(all_close(out[1], {h}, 1e-6, 1e-6));
    EXPECT_TRUE(all_close(out[2], {c}, 1e-6, 1e-6));
  }
  // input_forget: f = 1 - i.
  const double c2 = (1 - i) * 0.25 + i * std::tanh(2.0), h2 = sigmoid(1.0 + 0.2 * c2) * std::tanh(c2);
  for (const auto& out : both("LSTM", in, {{"input_forget", std::int64_t{1}}})) {
    EXPECT_TRUE(all_close(out[1], {h2}, 1e-6, 1e-6));
    EXPECT_TRUE(all_close(out[2], {c2}, 1e-6, 1e-6));
  }
}

TEST_F(RnnOpsTest, GruOneStepBothResetFormsByHand) {
  // W (z, r, h) = (1, -1, 2), R = (0.5, 0.25, -1), Wb = (0.1, 0.2, 0.3), Rb = (0.4, 0.5, 0.6), x = 1, H0 = 0.5.
  const std::vector<Tensor> in{floats({1}, {1, 1, 1}),
                               floats({1, -1, 2}, {1, 3, 1}),
                               floats({0.5f, 0.25f, -1}, {1, 3, 1}),
                               floats({0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f}, {1, 6}),
                               Tensor(),
                               floats({0.5}, {1, 1, 1})};
  const double z = sigmoid(1 + 0.25 + 0.5), r = sigmoid(-1 + 0.125 + 0.7);
  const double h_default = std::tanh(2 + (r * 0.5) * -1 + 0.6 + 0.3);
  const double h_linear = std::tanh(2 + 0.3 + r * (0.5 * -1 + 0.6));
  for (const auto& [lbr, hh] : {std::pair{0, h_default}, std::pair{1, h_linear}}) {
    SCOPED_TRACE(lbr);
    const double h = (1 - z) * hh + z * 0.5;
    for (const auto& out : both("GRU", in, {{"linear_before_reset", std::int64_t{lbr}}})) {
      EXPECT_TRUE(all_close(out[0], {h}, 1e-6, 1e-6));
      EXPECT_TRUE(all_close(out[1], {h}, 1e-6, 1e-6));
    }
  }
}

TEST_F(RnnOpsTest, SequenceLensZeroTheTailAndEndEachSequenceAtItsLastStep) {
  // Batch 2, lengths (2, 1); W 1, R 0.5. X[t][b]: t0 = (1, 2), t1 = (3, 4).
  const std::vector<Tensor> in{floats({1, 2, 3, 4}, {2, 2, 1}), floats({1}, {1, 1, 1}), floats({0.5}, {1, 1, 1}),
                               Tensor(), Tensor::from_ints(std::vector<std::int64_t>{2, 1}, {2}, DType::kI32)};
  const double f0 = std::tanh(1), f1 = std::tanh(3 + 0.5 * f0), s = std::tanh(2);
  for (const auto& out : both("RNN", in, {})) {
    EXPECT_TRUE(all_close(out[0], {f0, s, f1, 0}, 1e-6, 1e-6));  // [T, D, B, H]
    EXPECT_TRUE(all_close(out[1], {f1, s}, 1e-6, 1e-6));
  }
  // Reverse: sequence 0 runs t1 then t0; sequence 1 only t0.
  const double r1 = std::tanh(3), r0 = std::tanh(1 + 0.5 * r1);
  for (const auto& out : both("RNN", in, {{"direction", std::string("reverse")}})) {
    EXPECT_TRUE(all_close(out[0], {r0, s, r1, 0}, 1e-6, 1e-6));
    EXPECT_TRUE(all_close(out[1], {r0, s}, 1e-6, 1e-6));
  }
}

TEST_F(RnnOpsTest, ForceFp16RoundsTheHiddenStateAndStaysCloseToTheGolden) {
  Runtime::configure({.precision_mode = PrecisionMode::kForceFp16});
  const std::int64_t T = 6, B = 3, I = 5, H = 8;
  std::vector<float> x, w, r;
  for (int i = 0; i < T * B * I; ++i) x.push_back(static_cast<float>(std::sin(0.3 * i)));
  for (int i = 0; i < 4 * H * I; ++i) w.push_back(static_cast<float>(0.4 * std::cos(0.7 * i)));
  for (int i = 0; i < 4 * H * H; ++i) r.push_back(static_cast<float>(0.3 * std::sin(1.1 * i + 0.2)));
  const std::vector<Tensor> in{floats(x, {T, B, I}), floats(w, {1, 4 * H, I}), floats(r, {1, 4 * H, H})};
  const auto out = both("LSTM", in, {});
  const V &cpu = out[0][0], &npu = out[1][0];
  double worst = 0;
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    worst = std::max(worst, std::fabs(cpu[i] - npu[i]));
    EXPECT_EQ(npu[i], round_to_half(static_cast<float>(npu[i]))) << i;  // stored as f16 values
  }
  EXPECT_GT(worst, 0.0);   // f16 inputs and states: not the golden's bits
  EXPECT_LT(worst, 5e-3);  // but close
}

TEST_F(RnnOpsTest, F64RunsOnTheAiCpuWithTheGoldenKernel) {
  const std::vector<Tensor> in{floats({1, 2}, {2, 1, 1}, DType::kF64), floats({0.5}, {1, 1, 1}, DType::kF64),
                               floats({-1}, {1, 1, 1}, DType::kF64)};
  EndRecords rec;
  const auto out = call_op("RNN", on_npu(in));
  const V y = to_vec(out[0]);
  hooks::subscribe(nullptr);
  const double h1 = std::tanh(0.5);
  EXPECT_TRUE(all_close(y, {h1, std::tanh(1.0 - h1)}, 1e-12, 0));
  ASSERT_FALSE(rec.ends.empty());
  EXPECT_EQ(rec.ends.back().fallback, 1);
}

TEST_F(RnnOpsTest, NpuTimeIsOneProjectionPlusCubeAndVectorWorkPerStep) {
  const hooks::TaskRecord t4 = lstm_task(4, DType::kF32), t8 = lstm_task(8, DType::kF32);
  const hooks::TaskRecord t16 = lstm_task(16, DType::kF32);
  EXPECT_EQ(t8.task_type, TaskType::kAiCore);
  EXPECT_EQ(t8.fallback, 0);
  const double d4 = static_cast<double>(t4.end_ns - t4.start_ns), d8 = static_cast<double>(t8.end_ns - t8.start_ns);
  const double d16 = static_cast<double>(t16.end_ns - t16.start_ns);
  // The steps dominate and cost the same each: the time is affine in the sequence length.
  EXPECT_GT(d8, d4);
  EXPECT_NEAR(d16 - d8, 2 * (d8 - d4), 4);
  // The recorded flops: 2·T·B·4H·(I + H) for the GEMMs plus 40 vector flops per unit and step.
  EXPECT_EQ(t8.flops, static_cast<std::uint64_t>(2.0 * 8 * 4 * 256 * (32 + 64) + 8 * 4 * 64 * 40));
  // A step's [4, 64] x [64, 256] GEMM pads 4 rows to 16 and the gates run on the vector unit: a
  // step costs more than its share of the flops at the cube's peak.
  const DeviceSpec& spec = Runtime::get().device().spec();
  EXPECT_GT((d8 - d4) / 4, 2.0 * 4 * 64 * 256 / (spec.cube_peak_f16() * spec.cube_f32_rate) * 1e9);
  // In f16 the cube runs faster.
  const hooks::TaskRecord h8 = lstm_task(8, DType::kF16);
  EXPECT_LT(h8.end_ns - h8.start_ns, t8.end_ns - t8.start_ns);
}

TEST_F(RnnOpsTest, BadInputsNameTheOpAndTheInput) {
  const Tensor x = floats(std::vector<float>(6, 0.5f), {2, 1, 3});
  const Tensor w = floats(std::vector<float>(24, 0.1f), {1, 8, 3}), r = floats(std::vector<float>(16, 0.1f), {1, 8, 2});
  auto err = [&](std::vector<Tensor> in, const Attrs& a = {}, const char* op = "LSTM") {
    return error_of([&] { call_op(op, std::move(in), a); });
  };
  EXPECT_TRUE(mentions(err({floats({1, 2}, {1, 2}), w, r}), {"LSTM", "X must be 3-D", "[1, 2]"}));
  EXPECT_TRUE(mentions(err({x, floats(std::vector<float>(12, 0), {1, 4, 3}), r}), {"LSTM", "W must be [1, 8, 3]"}));
  EXPECT_TRUE(mentions(err({x, w, r}, {{"hidden_size", std::int64_t{3}}}), {"hidden_size = 3", "hidden size 2"}));
  EXPECT_TRUE(mentions(err({x, w, r}, {{"direction", std::string("sideways")}}), {"direction 'sideways'"}));
  EXPECT_TRUE(mentions(err({x, w, r}, {{"layout", std::int64_t{2}}}), {"layout must be 0 or 1"}));
  EXPECT_TRUE(mentions(err({x, w, r}, {{"activations", std::string("Sigmoid,Swish,Tanh")}}),
                       {"unknown activation 'Swish'", "Softplus"}));
  EXPECT_TRUE(
      mentions(err({x, w, r}, {{"activations", std::string("Tanh")}}), {"activations lists 1 functions, expected 3"}));
  EXPECT_TRUE(mentions(err({x, w, r}, {{"clip", -1.0}}), {"clip must be > 0"}));
  EXPECT_TRUE(mentions(err({x, floats(std::vector<float>(24, 0.1f), {1, 8, 3}, DType::kF16), r}), {"W has dtype f16"}));
  EXPECT_TRUE(mentions(err({x, w, r, Tensor(), floats({2}, {1})}), {"sequence_lens must be int32 or int64"}));
  EXPECT_TRUE(
      mentions(err({x, w, r, Tensor(), Tensor(), floats({0, 0, 0}, {1, 1, 3})}), {"initial_h must be [1, 1, 2]"}));
  EXPECT_TRUE(mentions(err({x, floats(std::vector<float>(18, 0.1f), {1, 6, 3}),
                            floats(std::vector<float>(12, 0.1f), {1, 6, 2}), floats(std::vector<float>(6, 0), {1, 6})},
                           {}, "GRU"),
                       {"GRU", "B must be [1, 12]"}));
  // A length beyond seq_length is data: a kernel fault, raised by the op on the cpu.
  EXPECT_TRUE(mentions(err({x, w, r, Tensor(), Tensor::from_ints(std::vector<std::int64_t>{5}, {1}, DType::kI32)}),
                       {"sequence_lens[0] = 5 is out of range [0, 2]"}));
}

TEST_F(RnnOpsTest, EmptySequenceEndsInZeroStates) {
  // seq_length 0: Y is empty and Y_h / Y_c are zeros, the initial states notwithstanding (as ONNX
  // Runtime gives for a sequence of length 0).
  const std::vector<Tensor> in{
      floats({}, {0, 1, 1}),    floats({1, 2, 3, 4}, {1, 4, 1}), floats({1, 2, 3, 4}, {1, 4, 1}), Tensor(), Tensor(),
      floats({0.5}, {1, 1, 1}), floats({-0.25}, {1, 1, 1})};
  for (const auto& out : both("LSTM", in, {})) {
    EXPECT_TRUE(out[0].empty());
    EXPECT_EQ(out[1], V{0.0});
    EXPECT_EQ(out[2], V{0.0});
  }
}

TEST_F(RnnOpsTest, Bf16InputsRunOnTheCubeInBf16) {
  const std::int64_t T = 4, B = 2, I = 3, H = 5;
  std::vector<float> x, w, r;
  for (int i = 0; i < T * B * I; ++i) x.push_back(static_cast<float>(std::sin(0.45 * i)));
  for (int i = 0; i < 3 * H * I; ++i) w.push_back(static_cast<float>(0.5 * std::cos(0.8 * i)));
  for (int i = 0; i < 3 * H * H; ++i) r.push_back(static_cast<float>(0.4 * std::sin(1.3 * i + 0.5)));
  const std::vector<Tensor> in{floats(x, {T, B, I}, DType::kBF16), floats(w, {1, 3 * H, I}, DType::kBF16),
                               floats(r, {1, 3 * H, H}, DType::kBF16)};
  EndRecords rec;
  const auto npu = call_op("GRU", on_npu(in));
  const V y = to_vec(npu[0]);
  hooks::subscribe(nullptr);
  ASSERT_FALSE(rec.ends.empty());
  EXPECT_EQ(rec.ends.back().task_type, TaskType::kAiCore);
  EXPECT_EQ(rec.ends.back().compute_dtype, static_cast<std::uint8_t>(DType::kBF16));
  EXPECT_EQ(npu[0].dtype(), DType::kBF16);
  // Within bf16's error of the golden (which computes in f32 and rounds once).
  EXPECT_TRUE(all_close(y, to_vec(call_op("GRU", in)[0]), 0, 3e-2));
}

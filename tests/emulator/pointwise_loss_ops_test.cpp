// MseLoss / MseLossGrad and SmoothL1LossV2 / SmoothL1LossGradV2: values from PyTorch 1.13 CPU for each
// reduction (and beta), NPU vs CPU, bad inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "emulator/ext_op_test_util.h"
#include "npuscope/emulator/dispatch.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

class MseLossTest : public OpTest {};

const Tensor kX = floats({0.5f, -1, 2, 3, 0, -0.25f}, {2, 3});
const Tensor kY = floats({1, 1, 1, 2, -1, 0}, {2, 3});

Attrs reduction(std::int64_t r) { return {{"reduction", r}}; }

void expect_both(const char* op, const std::vector<Tensor>& in, const Attrs& attrs, const Doubles& want, Shape shape) {
  const BothBackends r = run_both(op, in, attrs);
  EXPECT_EQ(r.npu[0].shape(), shape) << op;
  EXPECT_TRUE(all_close(to_vec(r.cpu[0]), want, 1e-7, 1e-7)) << op << " cpu";
  EXPECT_TRUE(all_close(to_vec(r.npu[0]), want, 1e-6, 1e-7)) << op << " npu";
}

}  // namespace

TEST_F(MseLossTest, LossOfEachReductionMatchesPyTorch) {
  expect_both("MseLoss", {kX, kY}, reduction(0), {0.25, 4, 1, 1, 1, 0.0625}, {2, 3});
  expect_both("MseLoss", {kX, kY}, reduction(1), {1.21875}, {});
  expect_both("MseLoss", {kX, kY}, reduction(2), {7.3125}, {});
}

TEST_F(MseLossTest, GradientOfEachReductionMatchesPyTorch) {
  const Tensor g = floats({0.7f}, {});
  expect_both("MseLossGrad", {g, kX, kY}, reduction(1),
              {-0.11666666666666665, -0.4666666666666666, 0.2333333333333333, 0.2333333333333333, 0.2333333333333333,
               -0.05833333333333333},
              {2, 3});
  expect_both("MseLossGrad", {g, kX, kY}, reduction(2), {-0.7, -2.8, 1.4, 1.4, 1.4, -0.35}, {2, 3});
  expect_both("MseLossGrad", {floats({0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f}, {2, 3}), kX, kY}, reduction(0),
              {-0.5, -2, 1, 1, 1, -0.25}, {2, 3});
}

TEST_F(MseLossTest, LongInputsAgreeAcrossBackends) {
  std::vector<float> a(10000), b(10000);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = std::sin(0.01f * i), b[i] = std::cos(0.013f * i);
  const Tensor x = floats(a, {100, 100}), y = floats(b, {100, 100});
  EXPECT_TRUE(npu_close_to_cpu("MseLoss", {x, y}, reduction(1), 1e-6, 1e-7));
}

TEST_F(MseLossTest, BadInputsNameTheOp) {
  EXPECT_THROW(call_op("MseLoss", {kX, floats({1, 2}, {2})}), InvalidArgument);
  EXPECT_THROW(call_op("MseLoss", {kX, kY}, reduction(3)), InvalidArgument);
  EXPECT_THROW(call_op("MseLossGrad", {kX, kX, kY}, reduction(1)), InvalidArgument);  // dloss must be 0-dim
}

namespace {

Attrs smooth(std::int64_t r, double beta) { return {{"reduction", r}, {"beta", beta}}; }

}  // namespace

TEST_F(MseLossTest, SmoothL1LossOfEachReductionAndBetaMatchesPyTorch) {
  expect_both("SmoothL1LossV2", {kX, kY}, smooth(0, 1.0), {0.125, 1.5, 0.5, 0.5, 0.5, 0.03125}, {2, 3});
  expect_both("SmoothL1LossV2", {kX, kY}, smooth(1, 1.0), {0.526041666667}, {});
  expect_both("SmoothL1LossV2", {kX, kY}, smooth(2, 1.0), {3.15625}, {});
  expect_both("SmoothL1LossV2", {kX, kY}, smooth(2, 0.5), {4.3125}, {});
  // beta 0 is the L1 loss
  expect_both("SmoothL1LossV2", {kX, kY}, smooth(0, 0.0), {0.5, 2, 1, 1, 1, 0.25}, {2, 3});
  expect_both("SmoothL1LossV2", {kX, kY}, smooth(1, 0.0), {0.958333333333}, {});
}

TEST_F(MseLossTest, SmoothL1GradientMatchesPyTorch) {
  const Tensor g = floats({0.7f}, {});
  expect_both("SmoothL1LossGradV2", {g, kX, kY}, smooth(1, 1.0),
              {-0.058333333333, -0.116666666667, 0.116666666667, 0.116666666667, 0.116666666667, -0.029166666667},
              {2, 3});
  expect_both("SmoothL1LossGradV2", {g, kX, kY}, smooth(2, 0.5), {-0.7, -0.7, 0.7, 0.7, 0.7, -0.35}, {2, 3});
  expect_both("SmoothL1LossGradV2", {floats({0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f}, {2, 3}), kX, kY}, smooth(0, 1.0),
              {-0.25, -0.5, 0.5, 0.5, 0.5, -0.125}, {2, 3});
}

TEST_F(MseLossTest, SmoothL1BadInputsNameTheOp) {
  EXPECT_THROW(call_op("SmoothL1LossV2", {kX, kY}, smooth(1, -1.0)), InvalidArgument);
  EXPECT_THROW(call_op("SmoothL1LossV2", {kX, floats({1, 2}, {2})}), InvalidArgument);
  EXPECT_THROW(call_op("SmoothL1LossGradV2", {kX, kX, kY}, smooth(2, 1.0)), InvalidArgument);
}

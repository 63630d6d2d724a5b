// The ONNX loss adapters (adapters_loss.cpp): NegativeLogLikelihoodLoss on an N-d input (class dim 1
// moved last, Note [N-d losses on the 2-D NLLLoss]) with each reduction, class weights and
// ignore_index; SoftmaxCrossEntropyLoss with its log_prob output; errors naming the node.
#include <gtest/gtest.h>

#include <cmath>

#include "emulator/adapter_test_util.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

class AdaptersLossTest : public OpTest {};

// input [N=1, C=2, d=2]: x[0, c, d] = 1 + 2c + d; target [[0, 1]]: the samples pick 1 and 4.
OneNodeModel nll(const std::string& reduction, bool weighted) {
  OneNodeModel m("NegativeLogLikelihoodLoss", 13);
  m.input("x", floats({1, 2, 3, 4}, {1, 2, 2})).ints("t", {0, 1}, {1, 2});
  if (weighted) m.floats("w", {2, 3}, {2});
  m.attr("reduction", reduction);
  return m;
}

}  // namespace

TEST_F(AdaptersLossTest, NllOnNdInputsWithEachReduction) {
  const Tensor none = nll("none", false).run(1, DeviceRef::npu())[0];
  EXPECT_EQ(none.shape(), (Shape{1, 2}));
  EXPECT_EQ(to_vec(none), (std::vector<double>{-1, -4}));
  EXPECT_EQ(to_vec(nll("none", true).run()[0]), (std::vector<double>{-2, -12}));
  EXPECT_EQ(to_vec(nll("sum", true).run()[0]), (std::vector<double>{-14}));
  EXPECT_NEAR(to_vec(nll("mean", true).run()[0])[0], -14.0 / 5, 1e-6);  // divided by the summed weights
}

TEST_F(AdaptersLossTest, IgnoredSamplesCountNeitherLossNorWeight) {
  auto m = nll("mean", true);
  m.attr("ignore_index", std::int64_t{1});
  EXPECT_EQ(to_vec(m.run(1, DeviceRef::npu())[0]), (std::vector<double>{-1}));  // -2 / 2
}

// scores [1, 2] = [0, ln 3]: softmax [1/4, 3/4]; label 1.
TEST_F(AdaptersLossTest, SoftmaxCrossEntropyGivesLossAndLogProb) {
  OneNodeModel m("SoftmaxCrossEntropyLoss", 13);
  m.input("s", floats({0, static_cast<float>(std::log(3.0))}, {1, 2})).ints("l", {1}, {1});
  const auto out = m.run(2);
  EXPECT_NEAR(to_vec(out[0])[0], -std::log(0.75), 1e-6);
  ASSERT_EQ(out[1].shape(), (Shape{1, 2}));
  EXPECT_NEAR(to_vec(out[1])[0], std::log(0.25), 1e-6);
  EXPECT_NEAR(to_vec(out[1])[1], std::log(0.75), 1e-6);
}

TEST_F(AdaptersLossTest, ErrorsNameTheNode) {
  EXPECT_TRUE(
      mentions(error_of([] { nll("avg", false).run(); }), {"node 'n' (NegativeLogLikelihoodLoss)", "reduction 'avg'"}));
  OneNodeModel bad("NegativeLogLikelihoodLoss", 13);
  bad.input("x", floats({1, 2, 3, 4}, {1, 2, 2})).ints("t", {0, 1}, {2});
  EXPECT_TRUE(mentions(error_of([&] { bad.run(); }), {"node 'n'", "target must be [1, 2]", "got [2]"}));
}

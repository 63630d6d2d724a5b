// The ONNX Conv and pool adapters on the paths the node test data does not reach: 3-D Conv with
// auto_pad and groups, MaxPool's Indices output in 1-D and 3-D (both storage orders), the global
// pools on 5-D inputs, a Conv whose X and W ranks differ, and BatchNormalization in training_mode.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "emulator/adapter_test_util.h"
#include "npuscope/emulator/errors.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

class AdaptersConvPoolTest : public OpTest {};

Tensor ramp(Shape shape) {
  std::vector<float> v(static_cast<std::size_t>(shape_numel(shape)));
  std::iota(v.begin(), v.end(), 1.0f);
  return Tensor::from_floats(v, std::move(shape), DType::kF32);
}

}  // namespace

TEST_F(AdaptersConvPoolTest, Conv3dWithAutoPadAndGroups) {
  const Tensor x = Tensor::uniform({1, 4, 5, 4, 6}, DType::kF32, DeviceRef::cpu(), 3, -1, 1);
  const Tensor w = Tensor::uniform({6, 2, 3, 2, 3}, DType::kF32, DeviceRef::cpu(), 4, -1, 1);
  // SAME_UPPER, strides {2, 1, 2}: outputs ceil(in / stride) = {3, 4, 3}; total pads {2, 1, 1}, the
  // odd one at the end.
  const Attrs explicit_pads{{"strides", I64s{2, 1, 2}}, {"pads", I64s{1, 0, 0, 1, 1, 1}}, {"group", std::int64_t{2}}};
  const Tensor want = call_op1("Conv3d", {x, w}, explicit_pads);
  ASSERT_EQ(want.shape(), (Shape{1, 6, 3, 4, 3}));
  for (DeviceRef dev : {DeviceRef::cpu(), DeviceRef::npu()}) {
    OneNodeModel m("Conv", 13);
    m.input("x", x).input("w", w).attr("strides", I64s{2, 1, 2}).attr("group", std::int64_t{2});
    m.attr("auto_pad", std::string("SAME_UPPER"));
    const Tensor y = m.run(1, dev)[0];
    EXPECT_EQ(y.shape(), want.shape());
    EXPECT_TRUE(all_close(to_vec(y), to_vec(want), 1.3e-6, 1e-5));
  }
}

TEST_F(AdaptersConvPoolTest, MaxPoolIndices1dAnd3d) {
  // 1-D through the height-1 reshape: [3, 1, 4, 2] -> maxima 3 and 4 at indices 0 and 2; the second
  // channel counts from 4.
  const Tensor x1 = Tensor::from_floats(std::vector<float>{3, 1, 4, 2, 0, 9, 8, 7}, {1, 2, 4}, DType::kF32);
  for (DeviceRef dev : {DeviceRef::cpu(), DeviceRef::npu()}) {
    OneNodeModel m("MaxPool", 12);
    m.input("x", x1).attr("kernel_shape", I64s{2}).attr("strides", I64s{2});
    const auto out = m.run(2, dev);
    EXPECT_EQ(to_vec(out[0]), (Doubles{3, 4, 9, 8}));
    EXPECT_EQ(out[1].shape(), (Shape{1, 2, 2}));
    EXPECT_EQ(out[1].to_ints(), (I64s{0, 2, 5, 6}));
  }
  // 3-D, column-major: x[z][y][x] = 9z + 3y + x + 1 has its maxima at (z+1, y+1, x+1).
  OneNodeModel m3("MaxPool", 12);
  m3.input("x", ramp({1, 1, 3, 3, 3})).attr("kernel_shape", I64s{2, 2, 2}).attr("storage_order", std::int64_t{1});
  const auto out = m3.run(2);
  EXPECT_EQ(to_vec(out[0]), (Doubles{14, 15, 17, 18, 23, 24, 26, 27}));
  EXPECT_EQ(out[1].to_ints(), (I64s{13, 22, 16, 25, 14, 23, 17, 26}));
  // Without Indices asked for, MaxPool runs as before (one output).
  OneNodeModel plain("MaxPool", 12);
  plain.input("x", ramp({1, 1, 3, 3, 3})).attr("kernel_shape", I64s{3, 3, 3});
  EXPECT_EQ(to_vec(plain.run(1)[0]), (Doubles{27}));
}

TEST_F(AdaptersConvPoolTest, GlobalPoolsOn5dInputs) {
  const Tensor x = ramp({1, 2, 2, 2, 2});
  OneNodeModel avg("GlobalAveragePool", 13);
  avg.input("x", x);
  const Tensor a = avg.run()[0];
  EXPECT_EQ(a.shape(), (Shape{1, 2, 1, 1, 1}));
  EXPECT_EQ(to_vec(a), (Doubles{4.5, 12.5}));
  OneNodeModel mx("GlobalMaxPool", 13);
  mx.input("x", x);
  EXPECT_EQ(to_vec(mx.run()[0]), (Doubles{8, 16}));
}

TEST_F(AdaptersConvPoolTest, ConvRankMismatchNamesTheNode) {
  OneNodeModel m("Conv", 13);
  m.input("x", Tensor::zeros({1, 2, 3, 3, 3}, DType::kF32)).input("w", Tensor::zeros({2, 2, 3, 3}, DType::kF32));
  EXPECT_TRUE(mentions(error_of([&] { m.run(); }), {"Conv", "1-D, 2-D and 3-D", "[1, 2, 3, 3, 3]", "[2, 2, 3, 3]"}));
}

TEST_F(AdaptersConvPoolTest, BatchNormalizationInTrainingModeUsesTheBatchAndOnnxsMomentum) {
  // x = [1, 2, 3, 6] over one channel: mean 3, biased variance 14 / 4 = 3.5 (the unbiased 14 / 3
  // would give another running_var). ONNX's momentum weighs the inputs: running_mean =
  // 10 · 0.5 + 3 · 0.5, running_var = 20 · 0.5 + 3.5 · 0.5.
  OneNodeModel m("BatchNormalization", 15);
  m.floats("x", {1, 2, 3, 6}, {2, 1, 1, 2}).floats("scale", {2}, {1}).floats("b", {1}, {1});
  m.floats("mean", {10}, {1}).floats("var", {20}, {1});
  m.attr("training_mode", std::int64_t{1}).attr("momentum", 0.5f).attr("epsilon", 0.0f);
  for (DeviceRef d : {DeviceRef::cpu(), DeviceRef::npu()}) {
    const std::vector<Tensor> out = m.run(3, d);
    const double s = 2 / std::sqrt(3.5);
    const std::vector<float> y = out[0].to_floats();
    const double want[] = {-2 * s + 1, -1 * s + 1, 1, 3 * s + 1};
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(y[i], want[i], 1e-5) << i;
    EXPECT_NEAR(out[1].to_floats()[0], 6.5, 1e-6);
    EXPECT_NEAR(out[2].to_floats()[0], 11.75, 1e-5);
  }
}

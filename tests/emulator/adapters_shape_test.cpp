// The ONNX adapters of adapters_shape.cpp on the opset paths the ONNX node test data (opsets <= 17)
// does not reach: Pad with attributes (< 11) and with axes (18), Split by num_outputs (18) and by
// the output count (< 13), Slice and Squeeze with attributes, and Dropout's mask and training mode.
#include <gtest/gtest.h>

#include "emulator/adapter_test_util.h"
#include "npuscope/emulator/errors.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

class AdaptersShapeTest : public OpTest {};

const Tensor kX = Tensor::from_floats(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}, DType::kF32);

}  // namespace

TEST_F(AdaptersShapeTest, PadOpset18AxesAndOpset10Attributes) {
  for (DeviceRef dev : {DeviceRef::cpu(), DeviceRef::npu()}) {
    OneNodeModel m("Pad", 18);
    m.input("x", kX).ints("pads", {1, 1}).floats("value", {5}, {}).ints("axes", {-1});
    const Tensor y = m.run(1, dev)[0];
    EXPECT_EQ(y.shape(), (Shape{2, 5}));
    EXPECT_EQ(to_vec(y), (Doubles{5, 1, 2, 3, 5, 5, 4, 5, 6, 5}));
  }
  OneNodeModel old("Pad", 10);
  old.input("x", kX).attr("pads", I64s{0, 1, 0, 0}).attr("value", 7.0f);
  EXPECT_EQ(to_vec(old.run()[0]), (Doubles{7, 1, 2, 3, 7, 4, 5, 6}));
  OneNodeModel edge("Pad", 11);
  edge.input("x", kX).ints("pads", {1, 0, 0, 0}).attr("mode", std::string("edge"));
  EXPECT_EQ(to_vec(edge.run()[0]), (Doubles{1, 2, 3, 1, 2, 3, 4, 5, 6}));
}

TEST_F(AdaptersShapeTest, SplitByNumOutputsOutputCountOrInput) {
  const Tensor x = Tensor::from_floats(std::vector<float>{1, 2, 3, 4, 5}, {5}, DType::kF32);
  OneNodeModel by_count("Split", 18);
  by_count.input("x", x).attr("num_outputs", std::int64_t{2});
  const auto parts = by_count.run(2);
  EXPECT_EQ(to_vec(parts[0]), (Doubles{1, 2, 3}));  // ceil(5 / 2), then the rest
  EXPECT_EQ(to_vec(parts[1]), (Doubles{4, 5}));
  OneNodeModel equal("Split", 11);
  equal.input("x", kX).attr("axis", std::int64_t{1});
  const auto cols = equal.run(3);
  EXPECT_EQ(to_vec(cols[2]), (Doubles{3, 6}));
  OneNodeModel sized("Split", 13);
  sized.input("x", x).ints("split", {1, 4});
  EXPECT_EQ(to_vec(sized.run(2, DeviceRef::npu())[1]), (Doubles{2, 3, 4, 5}));
}

TEST_F(AdaptersShapeTest, SliceAndSqueezeWithAttributes) {
  OneNodeModel slice("Slice", 9);
  slice.input("x", kX).attr("starts", I64s{1}).attr("ends", I64s{3}).attr("axes", I64s{1});
  EXPECT_EQ(to_vec(slice.run()[0]), (Doubles{2, 3, 5, 6}));
  OneNodeModel squeeze("Squeeze", 11);
  squeeze.input("x", Tensor::zeros({1, 3, 1}, DType::kF32)).attr("axes", I64s{0});
  EXPECT_EQ(squeeze.run()[0].shape(), (Shape{3, 1}));
  OneNodeModel all("Squeeze", 13);  // no axes input: every size-1 dim
  all.input("x", Tensor::zeros({1, 3, 1}, DType::kF32));
  EXPECT_EQ(all.run()[0].shape(), (Shape{3}));
  OneNodeModel unsqueeze("Unsqueeze", 11);
  unsqueeze.input("x", kX).attr("axes", I64s{0, 3});
  EXPECT_EQ(unsqueeze.run(1, DeviceRef::npu())[0].shape(), (Shape{1, 2, 3, 1}));
}

TEST_F(AdaptersShapeTest, DropoutIsTheIdentityWithAnAllTrueMask) {
  OneNodeModel m("Dropout", 13);
  m.input("x", kX);
  const auto out = m.run(2, DeviceRef::npu());
  EXPECT_EQ(bytes_of(out[0]), bytes_of(kX));
  EXPECT_EQ(out[1].dtype(), DType::kBool);
  EXPECT_EQ(out[1].to_ints(), (I64s{1, 1, 1, 1, 1, 1}));
  OneNodeModel old("Dropout", 7);  // before opset 10 the mask has the input's dtype
  old.input("x", kX).attr("ratio", 0.3f);
  const auto old_out = old.run(2);
  EXPECT_EQ(old_out[1].dtype(), DType::kF32);
  EXPECT_EQ(to_vec(old_out[1]), Doubles(6, 1.0));
  // Training mode drops nothing at ratio 0; with a ratio it would be random: refused.
  OneNodeModel zero("Dropout", 13);
  zero.input("x", kX).floats("r", {0}, {}).input("t", Tensor::from_ints(I64s{1}, {}, DType::kBool));
  EXPECT_EQ(bytes_of(zero.run()[0]), bytes_of(kX));
  OneNodeModel train("Dropout", 13);
  train.input("x", kX).floats("r", {0.5f}, {}).input("t", Tensor::from_ints(I64s{1}, {}, DType::kBool));
  EXPECT_THROW(train.run(), ModelError);
}

// Shapes read from operands are user input: a ConstantOfShape, Reshape or Expand to a huge shape,
// or an initializer declaring far more elements than it holds, is an error naming the node (and
// the shape) before anything is allocated, not a std::bad_alloc or a wrapped size.
TEST_F(AdaptersShapeTest, HugeShapesFromOperandsAreErrorsBeforeAllocating) {
  const std::int64_t p40 = std::int64_t{1} << 40, p62 = std::int64_t{1} << 62;
  OneNodeModel cos("ConstantOfShape", 17);
  cos.ints("shape", {p40, p40});
  EXPECT_TRUE(
      mentions(error_of([&] { cos.run(); }), {"ConstantOfShape", "[1099511627776, 1099511627776]", "too large"}));
  OneNodeModel reshape("Reshape", 17);
  reshape.input("x", Tensor::zeros({2, 2}, DType::kF32)).ints("shape", {p62, p62, 0, 1});
  EXPECT_TRUE(mentions(error_of([&] { reshape.run(); }), {"Reshape", "overflows int64"}));
  OneNodeModel expand("Expand", 17);
  expand.input("x", Tensor::zeros({1}, DType::kF32)).ints("shape", {p40, 1 << 20});
  EXPECT_TRUE(mentions(error_of([&] { expand.run(); }), {"Expand", "too large", "the limit is 1099511627776 bytes"}));
  OneNodeModel lying("Identity", 17);
  lying.floats("w", {1, 2, 3}, {std::int64_t{1} << 30});  // declares 4 GiB of floats, holds 3: no 4 GiB allocation
  EXPECT_TRUE(mentions(error_of([&] { lying.run(); }), {"'w'", "3 values, expected 1073741824"}));
}

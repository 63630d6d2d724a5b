// The detection ops through the ONNX importer (adapters_vision.cpp): NonMaxSuppression's optional
// inputs and its host-side count, RoiAlign's opset-10 coordinates, GridSample and BitShift by the
// default rule, on cpu and npu:0.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "emulator/adapter_test_util.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

class AdaptersVisionTest : public OpTest {};

// Box 1 overlaps box 0 with IoU 0.82; box 2 is apart.
Tensor boxes() { return floats({0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 2, 1, 3}, {1, 3, 4}); }
Tensor scores() { return floats({0.9f, 0.8f, 0.7f}, {1, 1, 3}); }

}  // namespace

TEST_F(AdaptersVisionTest, NonMaxSuppressionOptionalInputs) {
  for (DeviceRef d : {DeviceRef::cpu(), DeviceRef::npu()}) {
    OneNodeModel all("NonMaxSuppression", 11);
    all.input("b", boxes()).input("s", scores()).ints("max", {10}).floats("iou", {0.5f}, {1});
    all.floats("thr", {0.75f}, {1});
    const Tensor y = all.run(1, d)[0];
    EXPECT_EQ(y.dtype(), DType::kI64);
    EXPECT_EQ(y.shape(), (Shape{1, 3}));
    EXPECT_EQ(y.to_ints(), (I64s{0, 0, 0}));
    // No iou_threshold (0: any overlap suppresses), no score threshold.
    OneNodeModel two("NonMaxSuppression", 11);
    two.input("b", boxes()).input("s", scores()).ints("max", {10});
    EXPECT_EQ(two.run(1, d)[0].to_ints(), (I64s{0, 0, 0, 0, 0, 2}));
    // No max_output_boxes_per_class: nothing is selected, an empty [0, 3].
    OneNodeModel none("NonMaxSuppression", 11);
    none.input("b", boxes()).input("s", scores());
    EXPECT_EQ(none.run(1, d)[0].shape(), (Shape{0, 3}));
  }
}

TEST_F(AdaptersVisionTest, RoiAlignOpset10UsesOutputHalfPixel) {
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i);
  for (std::int64_t opset : {10, 16}) {
    OneNodeModel m("RoiAlign", opset);
    m.input("x", floats(v, {1, 1, 4, 4})).input("rois", floats({0, 0, 4, 4}, {1, 4})).ints("idx", {0});
    m.attr("output_height", std::int64_t{1})
        .attr("output_width", std::int64_t{1})
        .attr("sampling_ratio", std::int64_t{2});
    // Opset 10 samples at 1 and 3 (mean 10); opset 16's half_pixel at 0.5 and 2.5 (mean 7.5).
    EXPECT_NEAR(to_vec(m.run(1, DeviceRef::npu())[0])[0], opset == 10 ? 10 : 7.5, 1e-5) << opset;
  }
}

TEST_F(AdaptersVisionTest, GridSampleAndBitShiftByTheDefaultRule) {
  OneNodeModel gs("GridSample", 16);
  gs.input("x", floats({1, 2, 3, 4}, {1, 1, 2, 2})).input("g", floats({0, 0, 1, 1}, {1, 1, 2, 2}));
  gs.attr("align_corners", std::int64_t{1});
  EXPECT_EQ(to_vec(gs.run(1, DeviceRef::npu())[0]), (Doubles{2.5, 4}));
  OneNodeModel bs("BitShift", 11);
  bs.input("x", ints({3, 5}, {2}, DType::kU8)).input("y", ints({1, 2}, {2}, DType::kU8));
  bs.attr("direction", std::string("LEFT"));
  EXPECT_EQ(bs.run()[0].to_ints(), (I64s{6, 20}));
}

// RoiAlign: hand-computed averages and maxima on a ramp (bilinear sampling of a linear function is
// exact), both coordinate conventions, adaptive sampling, spatial_scale, NPU vs CPU in f32 and f16,
// and the errors for bad shapes, attributes and batch indices.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "emulator/ext_op_test_util.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

using RoiAlignTest = OpTest;

// X[0, 0, r, c] = 4 r + c on a 4 x 4 map.
Tensor ramp(DType t = DType::kF32) {
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i);
  return floats(v, {1, 1, 4, 4}, t);
}

Tensor roi_align(const std::vector<float>& box, Attrs attrs, const Tensor& x = ramp()) {
  return call_op1("RoiAlign", {x, floats(box, {1, 4}), ints({0}, {1})}, attrs);
}

Attrs params(const char* ctm, std::int64_t out, std::int64_t ratio, const char* m = "avg") {
  return {{"coordinate_transformation_mode", std::string(ctm)},
          {"output_height", out},
          {"output_width", out},
          {"sampling_ratio", ratio},
          {"mode", std::string(m)}};
}

}  // namespace

TEST_F(RoiAlignTest, AverageOfSamplesOnARamp) {
  // half_pixel: the roi [0, 4) starts at -0.5; 2 x 2 samples at 0.5 and 2.5 average to 1.5 -> 7.5.
  EXPECT_TRUE(all_close(to_vec(roi_align({0, 0, 4, 4}, params("half_pixel", 1, 2))), {7.5}, 1e-6, 0));
  // output_half_pixel: samples at 1 and 3 -> mean position (2, 2) -> 10.
  EXPECT_TRUE(all_close(to_vec(roi_align({0, 0, 4, 4}, params("output_half_pixel", 1, 2))), {10}, 1e-6, 0));
  // 2 x 2 bins of one sample each: the pixels (1, 1), (1, 3), (3, 1), (3, 3).
  const Tensor y = roi_align({0, 0, 4, 4}, params("output_half_pixel", 2, 1));
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  EXPECT_TRUE(all_close(to_vec(y), {5, 7, 13, 15}, 1e-6, 0));
  // spatial_scale 0.5 on a box twice as large is the same roi.
  Attrs half = params("output_half_pixel", 1, 2);
  half.set("spatial_scale", 0.5);
  EXPECT_TRUE(all_close(to_vec(roi_align({0, 0, 8, 8}, half)), {10}, 1e-6, 0));
}

TEST_F(RoiAlignTest, AdaptiveSamplingAndMax) {
  // sampling_ratio 0: ceil(4 / 1) = 4 samples per axis at 0.5, 1.5, 2.5, 3.5 (clamped to 3) -> 1.875.
  EXPECT_TRUE(all_close(to_vec(roi_align({0, 0, 4, 4}, params("output_half_pixel", 1, 0))), {1.875 * 5}, 1e-6, 0));
  // max: the largest sample (3, 3) = 15 where avg gives 10.
  EXPECT_TRUE(all_close(to_vec(roi_align({0, 0, 4, 4}, params("output_half_pixel", 1, 2, "max"))), {15}, 1e-6, 0));
}

TEST_F(RoiAlignTest, NpuMatchesCpu) {
  std::vector<float> xv(2 * 3 * 6 * 5);
  for (std::size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>((i * 29) % 13) - 6;
  for (DType t : {DType::kF32, DType::kF16}) {
    const Tensor x = floats(xv, {2, 3, 6, 5}, t);
    const Tensor rois = floats({0, 0, 4, 5, 1.5f, 0.5f, 3, 2.5f, -1, 2, 7, 9}, {3, 4}, t);
    for (const char* m : {"avg", "max"}) {
      Attrs a = params("half_pixel", 3, 0, m);
      a.set("spatial_scale", 0.75);
      EXPECT_TRUE(npu_close_to_cpu("RoiAlign", {x, rois, ints({1, 0, 1}, {3})}, a, 4e-3, 1e-2)) << m;
    }
  }
}

TEST_F(RoiAlignTest, BadInputsNameTheProblem) {
  EXPECT_TRUE(mentions(error_of([&] {
                         roi_align({0, 0, 4, 4}, params("asymmetric", 1, 2));
                       }),
                       {"RoiAlign", "coordinate_transformation_mode 'asymmetric'"}));
  EXPECT_TRUE(mentions(error_of([&] { roi_align({0, 0, 4, 4}, params("half_pixel", 0, 2)); }), {"output_height"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("RoiAlign", {ramp(), floats({0, 0, 4}, {1, 3}), ints({0}, {1})});
                       }),
                       {"rois", "[1, 3]"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("RoiAlign", {ramp(), floats({0, 0, 4, 4}, {1, 4}), ints({0, 0}, {2})});
                       }),
                       {"batch_indices", "[2]"}));
  // A batch index outside X is a kernel fault naming it.
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("RoiAlign", {ramp(), floats({0, 0, 4, 4}, {1, 4}), ints({1}, {1})});
                       }),
                       {"RoiAlign", "batch_indices", "1"}));
}

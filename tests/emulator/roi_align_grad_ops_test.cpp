// ROIAlignGrad: values from torchvision 0.14's CPU roi_align backward (aligned True and False, i.e.
// half_pixel and output_half_pixel; fixed and adaptive sampling; spatial_scale; samples outside the
// map), the adjoint of RoiAlign, NPU vs CPU in f32 and f16, and the errors for bad inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "emulator/ext_op_test_util.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

using RoiAlignGradTest = OpTest;

Attrs params(bool aligned, std::int64_t ratio, const I64s& xdiff_shape, double scale = 1.0) {
  return {{"coordinate_transformation_mode", std::string(aligned ? "half_pixel" : "output_half_pixel")},
          {"sampling_ratio", ratio},
          {"spatial_scale", scale},
          {"xdiff_shape", xdiff_shape}};
}

// dy = 1, 2, ... over an out x out grid of one roi (0, 0, 4, 4) on a 1 x 1 x 4 x 4 map, on both backends.
BothBackends grad_of_one_roi(bool aligned, std::int64_t ratio, std::int64_t out) {
  std::vector<float> dy(static_cast<std::size_t>(out * out));
  for (std::size_t i = 0; i < dy.size(); ++i) dy[i] = static_cast<float>(i + 1);
  return run_both("ROIAlignGrad", {floats(dy, {1, 1, out, out}), floats({0, 0, 4, 4}, {1, 4}), ints({0}, {1})},
                  params(aligned, ratio, {1, 1, 4, 4}));
}

void expect_both(const BothBackends& r, const Doubles& want, const char* what) {
  EXPECT_TRUE(all_close(to_vec(r.cpu[0]), want, 1e-12, 1e-12)) << what << " cpu";
  EXPECT_TRUE(all_close(to_vec(r.npu[0]), want, 1e-6, 1e-7)) << what << " npu";
}

}  // namespace

TEST_F(RoiAlignGradTest, MatchesTorchvisionOnOneRoi) {
  // aligned=True (half_pixel): 2 x 2 samples at -0.5 + {1, 3}; each spreads 1/4 over 4 pixels.
  expect_both(grad_of_one_roi(true, 2, 1), Doubles(16, 0.0625), "aligned, ratio 2");
  expect_both(grad_of_one_roi(true, 0, 1), Doubles(16, 0.0625), "aligned, adaptive");
  expect_both(grad_of_one_roi(true, 1, 2),
              {0.25, 0.25, 0.5, 0.5, 0.25, 0.25, 0.5, 0.5, 0.75, 0.75, 1, 1, 0.75, 0.75, 1, 1}, "aligned, 2 x 2 bins");
  // aligned=False (output_half_pixel): samples on the pixels (1, 1), (1, 3), (3, 1), (3, 3).
  expect_both(grad_of_one_roi(false, 2, 1), {0, 0, 0, 0, 0, 0.25, 0, 0.25, 0, 0, 0, 0, 0, 0.25, 0, 0.25},
              "not aligned, ratio 2");
  expect_both(grad_of_one_roi(false, 1, 2), {0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4}, "not aligned, 2 x 2");
  // Adaptive: 4 x 4 samples at 0.5 .. 3.5, the last clamped to the map's edge.
  expect_both(grad_of_one_roi(false, 0, 1),
              {0.015625, 0.03125, 0.03125, 0.046875, 0.03125, 0.0625, 0.0625, 0.09375, 0.03125, 0.0625, 0.0625, 0.09375,
               0.046875, 0.09375, 0.09375, 0.140625},
              "not aligned, adaptive");
}

TEST_F(RoiAlignGradTest, TwoRoisSpatialScaleAndSamplesOutsideTheMap) {
  // x [2, 1, 3, 4]; rois (batch 1: 1, 2, 5, 4) and (batch 0: -3, 1, 2, 9) at spatial_scale 0.5, 2 x 1
  // bins of 2 x 2 samples; the second roi's samples left of x = -1 add nothing.
  const Tensor dy = floats({1, -2, 0.5f, 3}, {2, 1, 2, 1});
  const Tensor rois = floats({1, 2, 5, 4, -3, 1, 2, 9}, {2, 4});
  const Tensor batch = ints({1, 0}, {2});
  expect_both(run_both("ROIAlignGrad", {dy, rois, batch}, params(true, 2, {2, 1, 3, 4}, 0.5)),
              {0.0625, 0,     0,      0, 0.125,   0,      0,       0, 0.8125, 0,     0,      0,  //
               0.0625, 0.125, 0.0625, 0, -0.1875, -0.375, -0.1875, 0, -0.125, -0.25, -0.125, 0},
              "aligned");
  expect_both(run_both("ROIAlignGrad", {dy, rois, batch}, params(false, 2, {2, 1, 3, 4}, 0.5)),
              {0, 0, 0, 0, 0.203125, 0.046875, 0,     0, 1.421875, 0.328125, 0,      0,  //
               0, 0, 0, 0, 0,        0.125,    0.125, 0, 0,        -0.625,   -0.625, 0},
              "not aligned");
}

TEST_F(RoiAlignGradTest, SamplesOutsideTheMapAddNothingEvenNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const BothBackends r =
      run_both("ROIAlignGrad", {floats({nan}, {1, 1, 1, 1}), floats({20, 20, 24, 24}, {1, 4}), ints({0}, {1})},
               params(true, 2, {1, 1, 4, 4}));
  expect_both(r, Doubles(16, 0.0), "outside");
}

// <RoiAlign(x), dy> = <x, ROIAlignGrad(dy)>: the gradient spreads over exactly the forward's taps.
TEST_F(RoiAlignGradTest, IsTheAdjointOfRoiAlign) {
  std::vector<float> xv(2 * 3 * 6 * 5), dyv(3 * 3 * 2 * 3);
  for (std::size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>((i * 29) % 13) - 6;
  for (std::size_t i = 0; i < dyv.size(); ++i) dyv[i] = static_cast<float>((i * 7) % 11) - 5;
  const Tensor x = floats(xv, {2, 3, 6, 5}, DType::kF64), dy = floats(dyv, {3, 3, 2, 3}, DType::kF64);
  const Tensor rois = floats({0, 0, 4, 5, 1.5f, 0.5f, 3, 2.5f, -1, 2, 7, 9}, {3, 4}, DType::kF64);
  const Tensor batch = ints({1, 0, 1}, {3});
  for (bool aligned : {true, false}) {
    for (std::int64_t ratio : {0, 2}) {
      Attrs fwd = params(aligned, ratio, {2, 3, 6, 5}, 0.75);
      fwd.set("output_height", std::int64_t{2}).set("output_width", std::int64_t{3});
      const std::vector<double> y = to_vec(call_op1("RoiAlign", {x, rois, batch}, fwd));
      const std::vector<double> dx =
          to_vec(call_op1("ROIAlignGrad", {dy, rois, batch}, params(aligned, ratio, {2, 3, 6, 5}, 0.75)));
      double lhs = 0, rhs = 0;
      for (std::size_t i = 0; i < y.size(); ++i) lhs += y[i] * static_cast<double>(dyv[i]);
      for (std::size_t i = 0; i < dx.size(); ++i) rhs += dx[i] * static_cast<double>(xv[i]);
      EXPECT_NEAR(lhs, rhs, 1e-9) << "aligned " << aligned << ", ratio " << ratio;
    }
  }
}

TEST_F(RoiAlignGradTest, NpuMatchesCpu) {
  std::vector<float> dyv(3 * 3 * 3 * 3);
  for (std::size_t i = 0; i < dyv.size(); ++i) dyv[i] = static_cast<float>((i * 29) % 13) - 6;
  for (DType t : {DType::kF32, DType::kF16}) {
    const Tensor dy = floats(dyv, {3, 3, 3, 3}, t);
    const Tensor rois = floats({0, 0, 4, 5, 1.5f, 0.5f, 3, 2.5f, -1, 2, 7, 9}, {3, 4}, t);
    for (bool aligned : {true, false}) {
      EXPECT_TRUE(npu_close_to_cpu("ROIAlignGrad", {dy, rois, ints({1, 0, 1}, {3})},
                                   params(aligned, 0, {2, 3, 6, 5}, 0.75), 4e-3, 1e-2))
          << dtype_name(t) << " aligned " << aligned;
    }
  }
}

TEST_F(RoiAlignGradTest, BadInputsNameTheProblem) {
  const Tensor dy = floats({1}, {1, 1, 1, 1}), rois = floats({0, 0, 4, 4}, {1, 4}), batch = ints({0}, {1});
  auto run = [&](const Attrs& a, const Tensor& d) { call_op1("ROIAlignGrad", {d, rois, batch}, a); };
  EXPECT_TRUE(mentions(error_of([&] {
                         run({{"sampling_ratio", std::int64_t{2}}}, dy);
                       }),
                       {"ROIAlignGrad", "xdiff_shape"}));
  EXPECT_TRUE(mentions(error_of([&] { run(params(true, 2, {1, 2, 4, 4}), dy); }), {"xdiff_shape", "[1, 2, 4, 4]"}));
  EXPECT_TRUE(mentions(error_of([&] { run(params(true, 2, {1, 1, 4}), dy); }), {"xdiff_shape", "4"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         run(params(true, 2, {1, 1, 4, 4}), floats({1, 2}, {2, 1, 1, 1}));
                       }),
                       {"dy", "one row per roi"}));
  EXPECT_TRUE(mentions(error_of([&] { run(params(true, 2, {1, 1, 4, 4}), floats({1}, {1, 1, 1})); }), {"dy", "4-D"}));
  Attrs max = params(true, 2, {1, 1, 4, 4});
  max.set("mode", std::string("max"));
  EXPECT_TRUE(mentions(error_of([&] { run(max, dy); }), {"ROIAlignGrad", "avg"}));
  EXPECT_TRUE(mentions(error_of([&] { run(params(true, -1, {1, 1, 4, 4}), dy); }), {"sampling_ratio"}));
  EXPECT_TRUE(
      mentions(error_of([&] {
                 call_op1("ROIAlignGrad", {dy, floats({0, 0, 4}, {1, 3}), batch}, params(true, 2, {1, 1, 4, 4}));
               }),
               {"rois", "[1, 3]"}));
  // A batch index outside dx is a kernel fault naming it.
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("ROIAlignGrad", {dy, rois, ints({1}, {1})}, params(true, 2, {1, 1, 4, 4}));
                       }),
                       {"ROIAlignGrad", "batch_indices", "1"}));
}

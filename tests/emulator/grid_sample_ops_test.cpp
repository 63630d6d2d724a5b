// GridSample: hand-computed bilinear / nearest / bicubic samples, the three padding modes on both
// align_corners conventions, NPU vs CPU in f32 and f16, and the errors for bad shapes and modes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "emulator/ext_op_test_util.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

using GridSampleTest = OpTest;

// X = [[1, 2], [3, 4]] sampled at the (x, y) points given.
Tensor sample(const std::vector<float>& points, Attrs attrs, DeviceRef device = DeviceRef::cpu()) {
  const auto n = static_cast<std::int64_t>(points.size() / 2);
  const Tensor x = floats({1, 2, 3, 4}, {1, 1, 2, 2}).to(device), grid = floats(points, {1, 1, n, 2}).to(device);
  return call_op1("GridSample", {x, grid}, attrs).cpu();
}

Attrs mode(const char* m, const char* pad, std::int64_t align) {
  return {{"mode", std::string(m)}, {"padding_mode", std::string(pad)}, {"align_corners", align}};
}

}  // namespace

TEST_F(GridSampleTest, BilinearAlignCorners) {
  // align_corners: -1 and 1 are the corner pixels' centres; 0 is the middle.
  const Tensor y = sample({-1, -1, 1, 1, 0, 0, 0, -1}, mode("bilinear", "zeros", 1));
  EXPECT_EQ(y.shape(), (Shape{1, 1, 1, 4}));
  EXPECT_TRUE(all_close(to_vec(y), {1, 4, 2.5, 1.5}, 1e-12, 1e-12));
}

TEST_F(GridSampleTest, PaddingModesAtTheOuterCorner) {
  // align_corners 0: (-1, -1) is the outer corner of pixel (0, 0), half a pixel outside both ways.
  const std::vector<float> corner{-1, -1, 0, 0};
  EXPECT_TRUE(all_close(to_vec(sample(corner, mode("bilinear", "zeros", 0))), {0.25, 2.5}, 1e-12, 1e-12));
  EXPECT_TRUE(all_close(to_vec(sample(corner, mode("bilinear", "border", 0))), {1, 2.5}, 1e-12, 1e-12));
  EXPECT_TRUE(all_close(to_vec(sample(corner, mode("bilinear", "reflection", 0))), {1, 2.5}, 1e-12, 1e-12));
  // Far outside: zeros gives 0, border the nearest edge pixel, reflection mirrors back in.
  const std::vector<float> far{3, 0};  // x = 3 (align_corners: 1 past the right edge, at column 2)
  EXPECT_EQ(to_vec(sample(far, mode("bilinear", "zeros", 1))), (Doubles{0}));
  EXPECT_EQ(to_vec(sample(far, mode("bilinear", "border", 1))), (Doubles{3}));      // (2 + 4) / 2
  EXPECT_EQ(to_vec(sample(far, mode("bilinear", "reflection", 1))), (Doubles{2}));  // x 2 -> 0: (1 + 3) / 2
}

TEST_F(GridSampleTest, NearestRoundsHalfToEven) {
  // align_corners 1 on 2 pixels: x = (n + 1) / 2. 0.55 -> 1, 0.45 -> 0, 0.5 -> 0 (even).
  const Tensor y = sample({0.1f, 0.1f, -0.1f, -0.1f, 0, 0}, mode("nearest", "zeros", 1));
  EXPECT_EQ(to_vec(y), (Doubles{4, 1, 1}));
}

TEST_F(GridSampleTest, BicubicAtAPixelCentreIsThePixel) {
  // Keys' weights at distance 0 are (0, 1, 0, 0): a 4 x 4 ramp sampled at pixel (row 2, column 1).
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i);
  const Tensor x = floats(v, {1, 1, 4, 4}), grid = floats({-1.0f / 3, 1.0f / 3}, {1, 1, 1, 2});
  const Tensor y = call_op1("GridSample", {x, grid}, mode("bicubic", "border", 1));
  EXPECT_NEAR(to_vec(y)[0], 9, 1e-6);
  // A constant image stays constant anywhere with border padding (the weights sum to 1).
  const Tensor c = floats(std::vector<float>(16, 5), {1, 1, 4, 4}), g = floats({0.3f, -0.7f, 1.2f, 0.9f}, {1, 1, 2, 2});
  EXPECT_TRUE(all_close(to_vec(call_op1("GridSample", {c, g}, mode("bicubic", "border", 0))), {5, 5}, 1e-6, 0));
}

TEST_F(GridSampleTest, NpuMatchesCpuAndChannelsShareTaps) {
  std::vector<float> xv(2 * 3 * 5 * 4), gv(2 * 3 * 2 * 2);
  for (std::size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>((i * 37) % 11) - 5;
  for (std::size_t i = 0; i < gv.size(); ++i) gv[i] = static_cast<float>((i * 13) % 9) / 4 - 1.1f;
  for (DType t : {DType::kF32, DType::kF16}) {
    const Tensor x = floats(xv, {2, 3, 5, 4}, t), g = floats(gv, {2, 3, 2, 2}, t);
    for (const char* m : {"bilinear", "nearest", "bicubic"}) {
      for (const char* pad : {"zeros", "border", "reflection"}) {
        const Tolerance tol = default_tolerance(t);
        EXPECT_TRUE(npu_close_to_cpu("GridSample", {x, g}, mode(m, pad, 0), tol.rtol * 4, 1e-2))
            << m << " " << pad << " " << dtype_name(t);
      }
    }
  }
}

TEST_F(GridSampleTest, BadInputsNameTheProblem) {
  const Tensor x = floats({1, 2, 3, 4}, {1, 1, 2, 2});
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("GridSample", {floats({1, 2}, {1, 2}), floats({0, 0}, {1, 1, 1, 2})});
                       }),
                       {"GridSample", "4-D"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("GridSample", {x, floats({0, 0, 0}, {1, 1, 1, 3})});
                       }),
                       {"grid", "[1, 1, 1, 3]"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("GridSample", {x, floats({0, 0}, {1, 1, 1, 2})}, mode("area", "zeros", 0));
                       }),
                       {"unknown mode 'area'"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("GridSample", {x, floats({0, 0}, {1, 1, 1, 2})}, mode("bilinear", "wrap", 0));
                       }),
                       {"padding_mode 'wrap'"}));
  // A NaN position reads nothing (zeros padding) instead of crashing.
  EXPECT_EQ(to_vec(sample({NAN, 0}, mode("bilinear", "zeros", 0))), (Doubles{0}));
}

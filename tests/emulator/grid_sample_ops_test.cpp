// GridSample: hand-computed bilinear / nearest / bicubic samples, the three padding modes on both
// align_corners conventions, bicubic_padding = taps against PyTorch 1.13, NPU vs CPU in f32 and f16,
// and the errors for bad shapes and modes.
#include <gtest/gtest.h>

#include <cmath>
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

TEST_F(GridSampleTest, BicubicPaddingTapsMatchesPyTorch) {
  // F.grid_sample(x, grid, mode="bicubic", padding_mode, align_corners) in f64, to 12 digits: X =
  // [[1, 2, 3], [4, 5, 6]] at points inside, just left of, beyond the corner of and far outside the map.
  struct Case {
    const char* pad;
    std::int64_t align;
    Doubles y;
  };
  const Case cases[] = {
      {"zeros", 0, {4.77519091964, 1.34393200278, 0.345757961273, -0.0104534737766, 0}},
      {"zeros", 1, {4.46993032098, 3.44594240561, 2.35517263412, 3.3181065917, 0.00337958335876}},
      {"border", 0, {4.03558349609, 2.77054595947, 2.90869140625, 6.00070953369, 3}},
      {"border", 1, {3.65270996094, 3.00677490234, 2.60510253906, 6.44311523438, 3}},
      {"reflection", 0, {4.03558349609, 2.60083007812, 2.8369140625, 5.70922851562, 3.1591796875}},
      {"reflection", 1, {3.76806640625, 2.98425292969, 2.86572265625, 5.17297363281, 3.0732421875}},
  };
  const Tensor x = floats({1, 2, 3, 4, 5, 6}, {1, 1, 2, 3});
  const Tensor grid =
      floats({-0.375f, 0.375f, 0.8125f, -0.875f, -1.25f, 0.125f, 1.3125f, 1.625f, 2.875f, -3.75f}, {1, 1, 5, 2});
  for (const Case& c : cases) {
    Attrs attrs = mode("bicubic", c.pad, c.align);
    attrs.set("bicubic_padding", std::string("taps"));
    for (const std::vector<Tensor>& in : {std::vector<Tensor>{x, grid}, on_npu({x, grid})}) {
      EXPECT_TRUE(all_close(to_vec(call_op1("GridSample", in, attrs).cpu()), c.y, 1e-6, 1e-6))
          << c.pad << " " << c.align << (in[0].device().is_npu() ? " npu" : " cpu");
    }
  }
  // ONNX's convention (the default) pads the position first: beyond the corner it samples the
  // clamped corner (6) with border padding, where PyTorch's taps give 6.0007.
  EXPECT_NEAR(to_vec(call_op1("GridSample", {x, grid}, mode("bicubic", "border", 0)))[3], 6, 1e-6);
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
        Attrs taps = mode(m, pad, 1);
        taps.set("bicubic_padding", std::string("taps"));
        EXPECT_TRUE(npu_close_to_cpu("GridSample", {x, g}, taps, tol.rtol * 4, 1e-2))
            << m << " " << pad << " taps " << dtype_name(t);
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
  Attrs bad_taps = mode("bicubic", "border", 0);
  bad_taps.set("bicubic_padding", std::string("tap"));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("GridSample", {x, floats({0, 0}, {1, 1, 1, 2})}, bad_taps);
                       }),
                       {"GridSample", "bicubic_padding 'tap'"}));
  // A NaN position reads nothing (zeros padding) instead of crashing.
  EXPECT_EQ(to_vec(sample({NAN, 0}, mode("bilinear", "zeros", 0))), (Doubles{0}));
  Attrs taps = mode("bicubic", "border", 0);
  taps.set("bicubic_padding", std::string("taps"));
  EXPECT_EQ(to_vec(sample({NAN, 0, INFINITY, 0, 1e30f, 0}, taps)), (Doubles{0, 0, 3}));
}

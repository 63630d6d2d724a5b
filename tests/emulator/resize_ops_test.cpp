// Resize: CPU golden vs hand-computed values (ONNX's documented examples and Keys' cubic weights) for
// nearest (every nearest_mode), linear and cubic, the coordinate transformation modes, sizes vs
// scales, tf_crop_and_resize extrapolation; NPU vs CPU in f32 and f16; integer input; bad attributes.
#include <gtest/gtest.h>

#include <vector>

#include "emulator/op_test_util.h"
#include "npuscope/emulator/errors.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

using ResizeTest = OpTest;
using Ints = std::vector<std::int64_t>;
using Floats = std::vector<double>;

Tensor resize(const Tensor& x, Attrs attrs) { return call_op1("Resize", {x}, attrs); }

Attrs with(Attrs a, const char* name, AttrValue v) {
  a.set(name, std::move(v));
  return a;
}

}  // namespace

TEST_F(ResizeTest, NearestHandComputed) {
  auto x = floats({1, 2, 3, 4}, {1, 1, 2, 2});
  // Upsample's example: asymmetric + floor repeats each value (2 rows, 3 columns).
  auto up = resize(x, {{"scales", Floats{1, 1, 2, 3}},
                       {"coordinate_transformation_mode", std::string("asymmetric")},
                       {"nearest_mode", std::string("floor")}});
  EXPECT_EQ(up.shape(), (Shape{1, 1, 4, 6}));
  EXPECT_EQ(to_vec(up), (std::vector<double>{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}));
  // Defaults (half_pixel, round_prefer_floor) with scale 2 give the same repeats.
  EXPECT_EQ(to_vec(resize(x, {{"sizes", Ints{1, 1, 4, 4}}})),
            (std::vector<double>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
  // ONNX's downsample_scales_nearest: 2x4 at 0.6 -> 1x2 = [1, 3].
  auto down = resize(floats({1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 2, 4}), {{"scales", Floats{1, 1, 0.6, 0.6}}});
  EXPECT_EQ(down.shape(), (Shape{1, 1, 1, 2}));
  EXPECT_EQ(to_vec(down), (std::vector<double>{1, 3}));
}

TEST_F(ResizeTest, NearestModesRoundTiesAsNamed) {
  // asymmetric, 4 -> 8: x_original = 0, 0.5, 1, 1.5, ...; the ties at .5 go down or up.
  auto x = floats({10, 20, 30, 40}, {4});
  const Attrs base{{"sizes", Ints{8}}, {"coordinate_transformation_mode", std::string("asymmetric")}};
  auto run = [&](const char* mode) { return to_vec(resize(x, with(base, "nearest_mode", std::string(mode)))); };
  EXPECT_EQ(run("round_prefer_floor"), (std::vector<double>{10, 10, 20, 20, 30, 30, 40, 40}));
  EXPECT_EQ(run("floor"), (std::vector<double>{10, 10, 20, 20, 30, 30, 40, 40}));
  EXPECT_EQ(run("round_prefer_ceil"), (std::vector<double>{10, 20, 20, 30, 30, 40, 40, 40}));  // clamped at the end
  EXPECT_EQ(run("ceil"), (std::vector<double>{10, 20, 20, 30, 30, 40, 40, 40}));
}

TEST_F(ResizeTest, LinearHandComputed) {
  // ONNX's upsample_scales_linear (half_pixel, edges clamped).
  auto up =
      resize(floats({1, 2, 3, 4}, {1, 1, 2, 2}), {{"mode", std::string("linear")}, {"scales", Floats{1, 1, 2, 2}}});
  EXPECT_TRUE(all_close(to_vec(up), {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4},
                        1e-12, 0));
  // ONNX's downsample_scales_linear and its align_corners variant, whose length_resized is 4 · 0.6 = 2.4.
  auto x = floats({1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 2, 4});
  const Attrs lin{{"mode", std::string("linear")}, {"scales", Floats{1, 1, 0.6, 0.6}}};
  EXPECT_TRUE(all_close(to_vec(resize(x, lin)), {2 + 2.0 / 3, 4 + 1.0 / 3}, 1e-6, 0));
  auto ac = resize(x, with(lin, "coordinate_transformation_mode", std::string("align_corners")));
  EXPECT_TRUE(all_close(to_vec(ac), {1, 1 + 3 / 1.4}, 1e-6, 0));
}

TEST_F(ResizeTest, CubicMatchesKeysWeights) {
  // asymmetric 2x: output 1 sits at 0.5, taps -1..2 (clamped to x0, x0, x1, x2) with Keys' weights
  // for a = -0.75: [-0.09375, 0.59375, 0.59375, -0.09375].
  auto x = floats({1, 2, 4, 8}, {4});
  const Attrs cubic{{"mode", std::string("cubic")},
                    {"scales", Floats{2}},
                    {"coordinate_transformation_mode", std::string("asymmetric")}};
  const auto y = to_vec(resize(x, cubic));
  ASSERT_EQ(y.size(), 8u);
  EXPECT_DOUBLE_EQ(y[0], 1);
  EXPECT_DOUBLE_EQ(y[1], -0.09375 * 1 + 0.59375 * 1 + 0.59375 * 2 - 0.09375 * 4);
  EXPECT_DOUBLE_EQ(y[2], 2);
  // exclude_outside drops tap -1 and renormalises the rest.
  const auto ex = to_vec(resize(x, with(cubic, "exclude_outside", std::int64_t{1})));
  EXPECT_NEAR(ex[1], (0.59375 * 1 + 0.59375 * 2 - 0.09375 * 4) / 1.09375, 1e-6);
  // a = -0.5 at the same point: weights [-0.0625, 0.5625, 0.5625, -0.0625].
  const auto a5 = to_vec(resize(x, with(cubic, "cubic_coeff_a", -0.5)));
  EXPECT_NEAR(a5[5], -0.0625 * 2 + 0.5625 * 4 + 0.5625 * 8 - 0.0625 * 8, 1e-6);
}

TEST_F(ResizeTest, CropAndResizeExtrapolates) {
  // roi [0.5, 1.5] of [0, 1, 2, 3]: x_original = 1.5 + 1.5·x -> 1.5, 3, 4.5 (outside: 10).
  auto y = resize(floats({0, 1, 2, 3}, {4}), {{"mode", std::string("linear")},
                                              {"sizes", Ints{3}},
                                              {"coordinate_transformation_mode", std::string("tf_crop_and_resize")},
                                              {"roi", Floats{0.5, 1.5}},
                                              {"extrapolation_value", 10.0}});
  EXPECT_EQ(to_vec(y), (std::vector<double>{1.5, 3, 10}));
}

TEST_F(ResizeTest, OtherCoordinateModes) {
  auto x = floats({0, 10, 20, 30}, {4});
  auto run = [&](const char* ctm, std::int64_t out) {
    return to_vec(resize(
        x,
        {{"mode", std::string("linear")}, {"sizes", Ints{out}}, {"coordinate_transformation_mode", std::string(ctm)}}));
  };
  EXPECT_EQ(run("align_corners", 7), (std::vector<double>{0, 5, 10, 15, 20, 25, 30}));
  EXPECT_EQ(run("asymmetric", 8), (std::vector<double>{0, 5, 10, 15, 20, 25, 30, 30}));
  EXPECT_EQ(run("tf_half_pixel_for_nn", 2), (std::vector<double>{10, 30}));  // (x + 0.5) · 2
  EXPECT_EQ(run("half_pixel", 2), (std::vector<double>{5, 25}));             // (x + 0.5) · 2 − 0.5
  EXPECT_EQ(run("pytorch_half_pixel", 1), (std::vector<double>{0}));         // length 1: −0.5, clamped
  EXPECT_EQ(run("half_pixel_symmetric", 2), (std::vector<double>{5, 25}));   // integral sizes: as half_pixel
}

TEST_F(ResizeTest, NpuMatchesCpuF32AndF16) {
  const std::vector<Attrs> cases{
      {{"mode", std::string("linear")}, {"scales", Floats{1, 1.5, 2.25, 0.7}}},
      {{"mode", std::string("cubic")}, {"sizes", Ints{2, 3, 11, 4}}},
      {{"mode", std::string("nearest")},
       {"scales", Floats{1, 2, 1.7, 0.5}},
       {"coordinate_transformation_mode", std::string("align_corners")}},
  };
  for (DType t : {DType::kF32, DType::kF16}) {
    auto x = Tensor::randn({2, 3, 5, 6}, t, DeviceRef::cpu(), 17);
    for (const Attrs& a : cases) {
      auto golden = resize(x, a);
      auto out = resize(on_npu({x})[0], a);
      EXPECT_EQ(out.dtype(), t);
      ASSERT_EQ(out.shape(), golden.shape());
      const auto tol = default_tolerance(t);
      EXPECT_TRUE(all_close(to_vec(out), to_vec(golden), tol.rtol, tol.atol)) << dtype_name(t);
    }
  }
}

TEST_F(ResizeTest, IntegerInputRunsOnTheCpuKernel) {
  auto x = Tensor::from_ints(Ints{1, 2, 3, 4}, {2, 2}, DType::kI32);
  for (const Tensor& in : {x, on_npu({x})[0]}) {
    auto y = resize(in, {{"scales", Floats{1, 2}}});
    EXPECT_EQ(y.dtype(), DType::kI32);
    EXPECT_EQ(y.to_ints(), (Ints{1, 1, 2, 2, 3, 3, 4, 4}));
  }
}

TEST_F(ResizeTest, BadAttributesAreInvalidArgument) {
  auto x = Tensor::zeros({1, 1, 2, 2}, DType::kF32);
  EXPECT_THROW(resize(x, {}), InvalidArgument);                                // no scales or sizes
  EXPECT_THROW(resize(x, {{"scales", Floats{1, 2}}}), InvalidArgument);        // wrong length
  EXPECT_THROW(resize(x, {{"scales", Floats{1, 1, 0, 2}}}), InvalidArgument);  // non-positive
  EXPECT_THROW(resize(x, {{"sizes", Ints{1, 1, 4}}}), InvalidArgument);
  EXPECT_THROW(resize(x, {{"sizes", Ints{1, 1, -4, 4}}}), InvalidArgument);
  const Attrs ok{{"scales", Floats{1, 1, 2, 2}}};
  EXPECT_NO_THROW(resize(x, ok));
  EXPECT_THROW(resize(x, with(ok, "mode", std::string("bilinear"))), InvalidArgument);
  EXPECT_THROW(resize(x, with(ok, "coordinate_transformation_mode", std::string("corners"))), InvalidArgument);
  EXPECT_THROW(resize(x, with(ok, "nearest_mode", std::string("round"))), InvalidArgument);
  EXPECT_THROW(resize(x, with(ok, "roi", Floats{0, 1})), InvalidArgument);
  EXPECT_THROW(resize(Tensor::zeros({2, 2}, DType::kBool), {{"scales", Floats{1, 2}}}), InvalidArgument);
}

// Scales of 1e30 made a double far beyond int64 that was cast anyway (undefined; it came out as a
// misleading "negative size"). Now the output size is checked before the cast and the allocation.
TEST_F(ResizeTest, HugeScalesAndSizesAreErrors) {
  auto x = Tensor::zeros({1, 1, 2, 2}, DType::kF32);
  EXPECT_TRUE(mentions(error_of([&] {
                         resize(x, {{"scales", Floats{1, 1, 1e30, 1e30}}});
                       }),
                       {"Resize", "scales", "dim 2", "size limit"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         resize(x, {{"sizes", Ints{1, 1, std::int64_t{1} << 40, 1 << 20}}});
                       }),
                       {"Resize", "too large"}));
}

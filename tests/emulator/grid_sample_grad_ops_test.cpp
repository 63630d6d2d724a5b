// GridSampler2DGrad: dx and dgrid from PyTorch 1.13 CPU for bilinear, nearest and bicubic, each
// padding mode on both align_corners conventions, with samples inside, on and outside the map; NPU
// vs CPU in f32 and f16; dgrid against a finite difference of GridSample (bicubic with
// bicubic_padding = taps); non-finite positions; bad inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "emulator/ext_op_test_util.h"
#include "npuscope/emulator/dispatch.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

using GridSampler2DGradTest = OpTest;

constexpr char kOp[] = "GridSampler2DGrad";

// X = [[1, 2, 3], [4, 5, 6]] (H 2, W 3) sampled at 5 points: two inside, one just left of the map,
// one beyond its bottom-right corner, one far outside (exact in f32).
const Tensor kX = floats({1, 2, 3, 4, 5, 6}, {1, 1, 2, 3});
const Tensor kGrid =
    floats({-0.375f, 0.375f, 0.8125f, -0.875f, -1.25f, 0.125f, 1.3125f, 1.625f, 2.875f, -3.75f}, {1, 1, 5, 2});
const Tensor kDy = floats({1, -0.5f, 2, 0.75f, 1.5f}, {1, 1, 1, 5});

Attrs mode(const char* m, const char* pad, std::int64_t align) {
  return {{"interpolation_mode", std::string(m)}, {"padding_mode", std::string(pad)}, {"align_corners", align}};
}

struct Expected {
  const char* mode;
  const char* pad;
  std::int64_t align;
  Doubles dx, dgrid;
};

// torch.nn.functional.grid_sample(x, grid, mode, padding_mode, align_corners).backward(dy), in f64
// (f32 gives the same values).
const Expected kTorch[] = {
    {"bilinear",
     "zeros",
     0,
     {0.1640625, 0.0546875, -0.244140625, 0.6484375, 0.3828125, 0},
     {1.5, 3, 1.40625, -1.171875, 8.625, 0.75, 0, 0, 0, 0}},
    {"bilinear",
     "zeros",
     1,
     {0.7734375, 0.107421875, -0.380859375, 1.1015625, 0.423828125, 0.3291015625},
     {1, 1.5, -0.5, -0.75, 5.375, 2.25, -3.09375, -1.546875, 0, 0}},
    {"bilinear", "border", 0, {0.8203125, 0.0546875, 1, 1.7421875, 0.3828125, 0.75}, {1.5, 3, 0, 0, 0, 6, 0, 0, 0, 0}},
    {"bilinear",
     "border",
     1,
     {0.9921875, 0.107421875, 1.119140625, 1.3828125, 0.423828125, 0.724609375},
     {1, 1.5, -0.5, -0.75, 0, 3, 0, 0, 0, 0}},
    {"bilinear",
     "reflection",
     0,
     {1.1953125, 0.0546875, -0.40625, 2.8671875, 0.3828125, 0.65625},
     {1.5, 3, 0, 0, 0, 6, 0, -2.25, 0, 4.5}},
    {"bilinear",
     "reflection",
     1,
     {1.265625, 0.4697265625, -0.2197265625, 1.921875, 0.9833984375, 0.3291015625},
     {1, 1.5, -0.5, -0.75, -2, 3, -0.75, -1.125, -1.5, 2.25}},
    {"nearest", "zeros", 0, {0, 0, -0.5, 1, 0, 0}, {}},
    {"nearest", "zeros", 1, {0, 0, -0.5, 2, 1, 0.75}, {}},
    {"nearest", "border", 0, {0, 0, 1, 3, 0, 0.75}, {}},
    {"nearest", "border", 1, {0, 0, 1, 2, 1, 0.75}, {}},
    {"nearest", "reflection", 0, {0, 0, -0.5, 4.5, 0, 0.75}, {}},
    {"nearest", "reflection", 1, {0, 0, -0.5, 3.5, 1, 0.75}, {}},
    // Bicubic pads each of its 16 taps (values to 12 digits).
    {"bicubic",
     "zeros",
     0,
     {0.175165683031, 0.0873692836612, -0.348576540127, 0.823968142271, 0.473022948019, -0.0297102006152},
     {0.662451982498, 0.851421117783, 1.10295653343, -1.31497979164, 8.85274887085, 0.692024230957, 0.388981595635,
      -0.0448006018996, 0, 0}},
    {"bicubic",
     "zeros",
     1,
     {1.05417578481, 0.0666003162041, -0.564587186091, 1.53421465494, 0.398390878923, 0.388087638654},
     {0.321053266525, 1.43849873543, 0.0332002937794, -1.27093081176, 6.94678115845, 2.84003448486, -3.66466999054,
      -1.72614312172, -0.0753164291382, 0.00135183334351}},
    {"bicubic",
     "border",
     0,
     {0.787673592567, 0.101527938619, 0.881062140688, 1.80302464962, 0.438059082255, 0.73865259625},
     {1.34033203125, 2.7421875, -0.151062011719, 0.087890625, -0.45703125, 6.609375, -0.0502624511719, 0, 0, 0}},
    {"bicubic",
     "border",
     1,
     {1.06581338868, 0.0497058471665, 0.978215505369, 1.51618734375, 0.313224450685, 0.826853464358},
     {1.04296875, 1.6083984375, -0.38818359375, -0.62841796875, 0.28125, 3.357421875, 0.024169921875, 0.0362548828125,
      0, 0}},
    {"bicubic",
     "reflection",
     0,
     {1.23400747776, 0.0130420923233, -0.591531991959, 3.24194467068, 0.138813376427, 0.713724374771},
     {1.34033203125, 2.7421875, -0.31640625, -0.28125, -1.6875, 6.609375, -0.791015625, -2.056640625, -0.6328125,
      4.640625}},
    {"bicubic",
     "reflection",
     1,
     {1.27475074679, 0.300767958164, -0.375933744013, 2.33320518583, 0.887586534023, 0.329623319209},
     {1.2890625, 1.93359375, -0.2548828125, -0.263671875, -1.3125, 4.4296875, -0.59326171875, -1.4501953125,
      -0.52734375, 3.1640625}},
};

}  // namespace

TEST_F(GridSampler2DGradTest, EachModePaddingAndAlignCornersMatchesPyTorch) {
  for (const Expected& e : kTorch) {
    const Doubles dgrid = e.dgrid.empty() ? Doubles(10, 0.0) : e.dgrid;  // nearest: no grid gradient
    const BothBackends r = run_both(kOp, {kDy, kX, kGrid}, mode(e.mode, e.pad, e.align));
    ASSERT_EQ(r.npu.size(), 2u);
    EXPECT_EQ(r.npu[0].shape(), (Shape{1, 1, 2, 3}));
    EXPECT_EQ(r.npu[1].shape(), (Shape{1, 1, 5, 2}));
    for (const auto* out : {&r.cpu, &r.npu}) {
      const char* backend = out == &r.cpu ? "cpu" : "npu";
      // Bicubic's 16 taps in f32 (npu) and its 12-digit table need a little more room.
      const double atol = std::string(e.mode) == "bicubic" ? 1e-6 : 1e-7;
      EXPECT_TRUE(all_close(to_vec((*out)[0]), e.dx, 1e-6, atol))
          << e.mode << " " << e.pad << " " << e.align << " dx " << backend;
      EXPECT_TRUE(all_close(to_vec((*out)[1]), dgrid, 1e-6, atol))
          << e.mode << " " << e.pad << " " << e.align << " dgrid " << backend;
    }
  }
}

TEST_F(GridSampler2DGradTest, NpuMatchesCpuInF32AndF16) {
  std::vector<float> xv(2 * 3 * 5 * 4), gv(2 * 3 * 4 * 2), dyv(2 * 3 * 3 * 4);
  for (std::size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>((i * 37) % 11) - 5;
  for (std::size_t i = 0; i < gv.size(); ++i) gv[i] = static_cast<float>((i * 13) % 19) / 7 - 1.3f;
  for (std::size_t i = 0; i < dyv.size(); ++i) dyv[i] = static_cast<float>((i * 7) % 5) / 2 - 1;
  for (DType t : {DType::kF32, DType::kF16}) {
    const Tensor x = floats(xv, {2, 3, 5, 4}, t), g = floats(gv, {2, 3, 4, 2}, t), dy = floats(dyv, {2, 3, 3, 4}, t);
    const Tolerance tol = default_tolerance(t);
    for (const char* m : {"bilinear", "nearest", "bicubic"}) {
      for (const char* pad : {"zeros", "border", "reflection"}) {
        for (std::int64_t align : {0, 1}) {
          const BothBackends r = run_both(kOp, {dy, x, g}, mode(m, pad, align));
          for (int i = 0; i < 2; ++i) {
            EXPECT_EQ(r.npu[i].dtype(), t);
            EXPECT_TRUE(all_close(to_vec(r.npu[i]), to_vec(r.cpu[i]), tol.rtol * 8, t == DType::kF16 ? 2e-2 : 1e-5))
                << m << " " << pad << " " << align << " output " << i << " " << dtype_name(t);
          }
        }
      }
    }
  }
}

namespace {

Tensor f64(const std::vector<double>& v, Shape shape) {
  return Tensor::from_bytes(v.data(), std::move(shape), DType::kF64);
}

// Σ dy · GridSample(X, grid) in f64 on the CPU.
double weighted_sample(const Tensor& x, const std::vector<double>& grid, const Tensor& dy, const Attrs& attrs) {
  const Doubles y = to_vec(call_op1("GridSample", {x, f64(grid, {1, 2, 2, 2})}, attrs));
  const Doubles w = to_vec(dy);
  double s = 0;
  for (std::size_t i = 0; i < y.size(); ++i) s += y[i] * w[i];
  return s;
}

}  // namespace

TEST_F(GridSampler2DGradTest, GridGradientIsTheSlopeOfGridSample) {
  // Points off the pixel lines and away from the borders, where the sample is differentiable: the
  // central difference of GridSample by each grid value agrees with dgrid.
  const Tensor x = f64({0.5, -1, 2, 3, 0.25, 4, -2, 1.5, 1, 0, 2.5, -0.5, 3, 1, -1, 2, 0.75, 1.25, -3, 2, 1, 0.5, 0, 1},
                       {1, 2, 3, 4});
  const std::vector<double> grid{-0.41, 0.23, 0.67, -0.58, 0.12, 0.91, -0.83, -0.27};
  const Tensor dy = f64({1, -0.5, 2, 0.75, -1.25, 0.5, 1.5, -2}, {1, 2, 2, 2});
  for (const char* m : {"bilinear", "bicubic"}) {
    for (const char* pad : {"zeros", "border", "reflection"}) {
      for (std::int64_t align : {0, 1}) {
        const Attrs fwd{{"mode", std::string(m)},
                        {"padding_mode", std::string(pad)},
                        {"align_corners", align},
                        {"bicubic_padding", std::string("taps")}};
        const Doubles dgrid = to_vec(call_op(kOp, {dy, x, f64(grid, {1, 2, 2, 2})}, mode(m, pad, align))[1]);
        for (std::size_t i = 0; i < grid.size(); ++i) {
          constexpr double h = 1e-6;
          std::vector<double> up = grid, down = grid;
          up[i] += h;
          down[i] -= h;
          const double slope = (weighted_sample(x, up, dy, fwd) - weighted_sample(x, down, dy, fwd)) / (2 * h);
          EXPECT_NEAR(dgrid[i], slope, 1e-6) << m << " " << pad << " " << align << " grid value " << i;
        }
      }
    }
  }
}

TEST_F(GridSampler2DGradTest, NonFinitePositionsTouchNothing) {
  // PyTorch's own CPU kernel gives NaN here, or crashes with border padding: a NaN or infinite
  // position adds nothing to dx and has no grid gradient.
  const Tensor g = floats({NAN, 0, INFINITY, 0, 0, -INFINITY}, {1, 1, 3, 2}), dy = floats({1, 1, 1}, {1, 1, 1, 3});
  for (const char* m : {"bilinear", "nearest", "bicubic"}) {
    for (const char* pad : {"zeros", "border", "reflection"}) {
      const BothBackends r = run_both(kOp, {dy, kX, g}, mode(m, pad, 0));
      EXPECT_EQ(to_vec(r.npu[0]), Doubles(6, 0.0)) << m << " " << pad;
      EXPECT_EQ(to_vec(r.npu[1]), Doubles(6, 0.0)) << m << " " << pad;
      EXPECT_EQ(to_vec(r.cpu[1]), Doubles(6, 0.0)) << m << " " << pad;
    }
  }
}

TEST_F(GridSampler2DGradTest, BadInputsNameTheProblem) {
  const Attrs bilinear = mode("bilinear", "zeros", 0);
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op(kOp, {kDy, kX, kGrid}, mode("area", "zeros", 0));
                       }),
                       {"unknown interpolation_mode 'area'"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op(kOp, {kDy, kX, kGrid}, mode("bilinear", "wrap", 0));
                       }),
                       {"padding_mode 'wrap'"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op(kOp, {kDy, floats({1, 2}, {1, 2}), kGrid}, bilinear);
                       }),
                       {kOp, "X must be 4-D", "[1, 2]"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op(kOp, {kDy, kX, floats({0, 0, 0}, {1, 1, 1, 3})}, bilinear);
                       }),
                       {"grid", "[1, 1, 1, 3]"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op(kOp, {floats({1, 2, 3, 4}, {1, 1, 1, 4}), kX, kGrid}, bilinear);
                       }),
                       {"dy must be", "[1, 1, 1, 5]", "[1, 1, 1, 4]"}));
  EXPECT_TRUE(
      mentions(error_of([&] {
                 call_op(kOp, {floats({1, -0.5f, 2, 0.75f, 1.5f}, {1, 1, 1, 5}, DType::kF16), kX, kGrid}, bilinear);
               }),
               {"dy and X must share a dtype"}));
  EXPECT_THROW(call_op(kOp, {kDy, kX}, bilinear), InvalidArgument);  // three inputs
}

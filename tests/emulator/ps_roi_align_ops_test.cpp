// PSROIPoolingV2 and PSROIPoolingGradV2D: values from torchvision 0.14's CPU ps_roi_align and
// _ps_roi_align_backward (adaptive and fixed sampling, spatial_scale, rois partly outside the map,
// empty and reversed rois whose adaptive grids give NaN or 0), channel_mapping, the gradient as the
// adjoint of the forward, NPU vs CPU in f32 and f16, and the errors for bad inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "emulator/ext_op_test_util.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

using PsRoiAlignTest = OpTest;

constexpr char kFwd[] = "PSROIPoolingV2";
constexpr char kGrad[] = "PSROIPoolingGradV2D";
const double kNaN = std::nan("");

Attrs params(double scale, std::int64_t ratio) {
  return {{"output_height", std::int64_t{2}},
          {"output_width", std::int64_t{2}},
          {"spatial_scale", scale},
          {"sampling_ratio", ratio}};
}
Attrs grad_params(double scale, std::int64_t ratio, const I64s& xdiff_shape) {
  Attrs a{{"spatial_scale", scale}, {"sampling_ratio", ratio}};
  a.set("xdiff_shape", xdiff_shape);
  return a;
}

std::vector<float> pattern(std::size_t n, std::size_t mul, std::size_t mod, float div, float shift) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * mul) % mod) / div - shift;
  return v;
}

// x [2, 8, 3, 4] (2 output channels of 2 x 2 bins); rois: inside, partly outside, empty, reversed.
Tensor x_of(DType t = DType::kF32) { return floats(pattern(192, 37, 101, 8, 6), {2, 8, 3, 4}, t); }
Tensor rois_of(DType t = DType::kF32) {
  return floats({0.5f, 0.5f, 3, 2.5f, -2, -1, 5, 4, 1, 1, 1, 1, 3, 2, 1, 0}, {4, 4}, t);
}
Tensor batch_of() { return ints({1, 0, 0, 1}, {4}); }

struct Case {
  double scale;
  std::int64_t ratio;
  Doubles y;
};

// torchvision.ops.ps_roi_align(x, rois, 2, scale, ratio), computed once in float64.
const Case kCases[] = {
    {1.0,
     0,
     {-1.9921875,
      0.8984375,
      1.2578125,
      -1.572265625,
      -0.9296875,
      1.9609375,
      -0.046875,
      -0.509765625,
      -0.9952256944444443,
      0.08577473958333341,
      0.06570095486111112,
      0.14013671875,
      0.23567708333333318,
      -0.5172526041666666,
      0.03629557291666663,
      0.5069986979166666,
      kNaN,
      kNaN,
      kNaN,
      kNaN,
      kNaN,
      kNaN,
      kNaN,
      kNaN,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      0}},
    {0.5,
     2,
     {-3.0882568359375,
      3.8828125,
      2.5654296875,
      0.27734375,
      2.2894287109375,
      -0.578125,
      -1.994140625,
      1.33984375,
      -3.0,
      0.65234375,
      -0.361328125,
      -1.788330078125,
      0.6875,
      0.92578125,
      1.353515625,
      0.901611328125,
      -6.0,
      -1.0,
      4.0,
      -3.625,
      1.375,
      6.375,
      -1.25,
      3.75,
      -1.3046875,
      0.59375,
      0.125,
      -0.34375,
      -1.8203125,
      -1.5,
      4.34375,
      3.875}},
    {0.75, 1, {-1.9013671875, 2.7001953125, 0.96484375, -2.32421875, 0.1474609375, 2.3818359375, -4.28515625, 1.5,
               -6.0,          -3.875,       0.5546875,  1.890625,    1.375,        2.7109375,    0.828125,    2.1640625,
               -3.375,        0.8359375,    1.1015625,  -1.7890625,  0.84375,      3.4765625,    0.5859375,   0.8515625,
               -1.734375,     -0.203125,    -0.140625,  1.390625,    0.90625,      2.4375,       2.5,         0.875}},
};

// channel_mapping for 4 rois of 2 output channels: the X channel of each bin, 0 .. 7.
I64s mapping_of(std::int64_t rois) {
  I64s m;
  for (std::int64_t r = 0; r < rois; ++r)
    for (std::int64_t k = 0; k < 8; ++k) m.push_back(k);
  return m;
}

// The gradient's case: x [1, 4, 3, 3] (one output channel), two rois of image 0, dy = 1 .. 8.
struct GradCase {
  double scale;
  std::int64_t ratio;
  Doubles dx;
};
const GradCase kGradCases[] = {
    {1.0,
     0,
     {2.6736111111111107,
      1.2847222222222223,
      0,
      0.1875,
      0.1875,
      0,
      0,
      0,
      0,
      0,
      1.7916666666666665,
      3.4583333333333335,
      0,
      0.375,
      0.375,
      0,
      0,
      0,
      3.3055555555555554,
      1.3611111111111114,
      0,
      1.3125,
      1.3125,
      0,
      0.1875,
      0.1875,
      0,
      0,
      1.5555555555555554,
      3.7777777777777777,
      0,
      1.75,
      1.75,
      0,
      0.25,
      0.25}},
    {0.5, 2, {5.9228515625, 0.0615234375, 0,      0.0146484375, 0.0009765625, 0, 0, 0, 0,
              2.296875,     5.109375,     0.5625, 0.015625,     0.015625,     0, 0, 0, 0,
              8.93359375,   0.12890625,   0,      0.87890625,   0.05859375,   0, 0, 0, 0,
              3.125,        6.875,        0.75,   0.625,        0.625,        0, 0, 0, 0}},
};

}  // namespace

TEST_F(PsRoiAlignTest, MatchesTorchvision) {
  for (const Case& c : kCases) {
    const BothBackends r = run_both(kFwd, {x_of(), rois_of(), batch_of()}, params(c.scale, c.ratio));
    EXPECT_EQ(r.cpu[0].shape(), (Shape{4, 2, 2, 2}));
    EXPECT_EQ(r.npu[1].dtype(), DType::kI32);
    EXPECT_TRUE(all_close(to_vec(r.cpu[0]), c.y, 1e-7, 1e-7)) << "cpu, scale " << c.scale << ", ratio " << c.ratio;
    EXPECT_TRUE(all_close(to_vec(r.npu[0]), c.y, 1e-6, 1e-6)) << "npu, scale " << c.scale << ", ratio " << c.ratio;
    const I64s m = mapping_of(4);
    EXPECT_TRUE(all_close(to_vec(r.cpu[1]), Doubles(m.begin(), m.end()), 0, 0));
    EXPECT_TRUE(all_close(to_vec(r.npu[1]), Doubles(m.begin(), m.end()), 0, 0));
  }
}

TEST_F(PsRoiAlignTest, GradientMatchesTorchvision) {
  std::vector<float> dy(8);
  for (std::size_t i = 0; i < dy.size(); ++i) dy[i] = static_cast<float>(i + 1);
  const Tensor rois = floats({0.5f, 0.5f, 2.5f, 2, -1, -1, 4, 1}, {2, 4});
  const Tensor mapping = ints({0, 1, 2, 3, 0, 1, 2, 3}, {2, 1, 2, 2}, DType::kI32);
  for (const GradCase& c : kGradCases) {
    const BothBackends r = run_both(kGrad, {floats(dy, {2, 1, 2, 2}), rois, ints({0, 0}, {2}), mapping},
                                    grad_params(c.scale, c.ratio, {1, 4, 3, 3}));
    EXPECT_TRUE(all_close(to_vec(r.cpu[0]), c.dx, 1e-7, 1e-7)) << "cpu, scale " << c.scale;
    EXPECT_TRUE(all_close(to_vec(r.npu[0]), c.dx, 1e-6, 1e-6)) << "npu, scale " << c.scale;
  }
}

// <PSROIPoolingV2(x), dy> = <x, PSROIPoolingGradV2D(dy)> where the forward is finite: the gradient
// spreads over exactly the forward's taps, in the channels channel_mapping names.
TEST_F(PsRoiAlignTest, GradientIsTheAdjointOfTheForward) {
  const std::vector<float> xv = pattern(192, 37, 101, 8, 6), dyv = pattern(32, 7, 11, 1, 5);
  const Tensor x = floats(xv, {2, 8, 3, 4}, DType::kF64), dy = floats(dyv, {4, 2, 2, 2}, DType::kF64);
  const Tensor rois = floats({0.5f, 0.5f, 3, 2.5f, -2, -1, 5, 4, 1.5f, 0, 2.5f, 3, 3, 2, 1, 0}, {4, 4}, DType::kF64);
  for (const Case& c : kCases) {
    const std::vector<Tensor> fwd = call_op(kFwd, {x, rois, batch_of()}, params(c.scale, c.ratio));
    const std::vector<double> y = to_vec(fwd[0]);
    const std::vector<double> dx =
        to_vec(call_op1(kGrad, {dy, rois, batch_of(), fwd[1]}, grad_params(c.scale, c.ratio, {2, 8, 3, 4})));
    double lhs = 0, rhs = 0;
    for (std::size_t i = 0; i < y.size(); ++i) lhs += std::isnan(y[i]) ? 0 : y[i] * static_cast<double>(dyv[i]);
    for (std::size_t i = 0; i < dx.size(); ++i) rhs += dx[i] * static_cast<double>(xv[i]);
    EXPECT_NEAR(lhs, rhs, 1e-9) << "scale " << c.scale << ", ratio " << c.ratio;
  }
}

TEST_F(PsRoiAlignTest, NpuMatchesCpuInF32AndF16) {
  for (DType t : {DType::kF32, DType::kF16}) {
    const double tol = t == DType::kF16 ? 1e-2 : 1e-6;
    for (const Case& c : kCases) {
      const BothBackends r = run_both(kFwd, {x_of(t), rois_of(t), batch_of()}, params(c.scale, c.ratio));
      EXPECT_EQ(r.npu[0].dtype(), t);
      EXPECT_TRUE(all_close(to_vec(r.npu[0]), to_vec(r.cpu[0]), tol, tol)) << dtype_name(t);
      EXPECT_TRUE(all_close(to_vec(r.npu[0]), c.y, tol, tol)) << dtype_name(t);  // exact rois in f16 too
      EXPECT_TRUE(npu_close_to_cpu(kGrad,
                                   {floats(pattern(32, 7, 11, 1, 5), {4, 2, 2, 2}, t), rois_of(t), batch_of(),
                                    ints(mapping_of(4), {4, 2, 2, 2}, DType::kI32)},
                                   grad_params(c.scale, c.ratio, {2, 8, 3, 4}), tol, tol))
          << dtype_name(t);
    }
  }
}

TEST_F(PsRoiAlignTest, EmptyInputs) {
  const std::vector<Tensor> y =
      call_op(kFwd, {x_of(), floats(std::vector<float>{}, {0, 4}), ints({}, {0})}, params(1, 0));
  EXPECT_EQ(y[0].shape(), (Shape{0, 2, 2, 2}));
  const Tensor dx = call_op1(kGrad,
                             {floats(std::vector<float>{}, {0, 2, 2, 2}), floats(std::vector<float>{}, {0, 4}),
                              ints({}, {0}), ints({}, {0, 2, 2, 2}, DType::kI32)},
                             grad_params(1, 0, {2, 8, 3, 4}));
  EXPECT_TRUE(all_close(to_vec(dx), Doubles(192, 0.0), 0, 0));
}

TEST_F(PsRoiAlignTest, BadInputsNameTheProblem) {
  const Tensor x = x_of(), rois = rois_of(), batch = batch_of();
  Attrs three = params(1, 0);
  three.set("output_height", std::int64_t{3});
  EXPECT_TRUE(mentions(error_of([&] { call_op(kFwd, {x, rois, batch}, three); }), {kFwd, "multiple", "6"}));
  Attrs zero = params(1, 0);
  zero.set("output_width", std::int64_t{0});
  EXPECT_TRUE(mentions(error_of([&] { call_op(kFwd, {x, rois, batch}, zero); }), {kFwd, "output_width"}));
  EXPECT_TRUE(mentions(error_of([&] { call_op(kFwd, {x, rois, batch}, params(1, -2)); }), {"sampling_ratio"}));
  Attrs unaligned = params(1, 0);
  unaligned.set("coordinate_transformation_mode", std::string("output_half_pixel"));
  EXPECT_TRUE(mentions(error_of([&] { call_op(kFwd, {x, rois, batch}, unaligned); }), {kFwd, "half_pixel"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op(kFwd, {floats({1}, {1, 1, 1}), rois, batch}, params(1, 0));
                       }),
                       {kFwd, "4-D"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op(kFwd, {x, rois, ints({0, 1}, {2})}, params(1, 0));
                       }),
                       {"batch_indices", "[4]"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op(kFwd, {x, rois, ints({0, 0, 5, 0}, {4})}, params(1, 0));
                       }),
                       {kFwd, "batch_indices[2] = 5"}));
  // The gradient: channel_mapping of dy's shape and inside X's channels, xdiff_shape's C.
  const Tensor dy = floats(pattern(32, 7, 11, 1, 5), {4, 2, 2, 2});
  const Tensor mapping = ints(mapping_of(4), {4, 2, 2, 2}, DType::kI32);
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op(kGrad, {dy, rois, batch, mapping}, grad_params(1, 0, {2, 6, 3, 4}));
                       }),
                       {kGrad, "xdiff_shape", "C"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op(kGrad, {dy, rois, batch, mapping}, {{"sampling_ratio", std::int64_t{0}}});
                       }),
                       {kGrad, "xdiff_shape"}));
  EXPECT_TRUE(
      mentions(error_of([&] {
                 call_op(kGrad, {dy, rois, batch, ints(I64s(16, 0), {4, 2, 2})}, grad_params(1, 0, {2, 8, 3, 4}));
               }),
               {"channel_mapping", "dy's shape"}));
  EXPECT_TRUE(
      mentions(error_of([&] {
                 call_op(kGrad, {dy, rois, batch, ints(I64s(32, 8), {4, 2, 2, 2})}, grad_params(1, 0, {2, 8, 3, 4}));
               }),
               {kGrad, "channel_mapping 8", "[0, 8)"}));
}

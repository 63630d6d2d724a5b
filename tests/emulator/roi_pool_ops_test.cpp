// RoiPoolingWithArgMax and RoiPoolingGradWithArgMax: values and argmax from torchvision 0.14's CPU
// roi_pool and _roi_pool_backward (rounded corners, malformed rois, bins outside the map, spatial_scale
// with halves rounding away from zero, ties, NaN), NPU vs CPU in f32 and f16, and the errors for bad
// inputs.
#include <gtest/gtest.h>

#include <cfloat>
#include <limits>
#include <string>
#include <vector>

#include "emulator/ext_op_test_util.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

using RoiPoolingTest = OpTest;

constexpr char kFwd[] = "RoiPoolingWithArgMax";
constexpr char kGrad[] = "RoiPoolingGradWithArgMax";

Attrs pooled(std::int64_t h, std::int64_t w, double scale) {
  return {{"pooled_h", h}, {"pooled_w", w}, {"spatial_scale", scale}};
}

// x [2, 2, 4, 5] with distinct integer values; six rois of both images: inside, fractional, partly and
// wholly outside the map, malformed (x2 < x1), and one row tall.
std::vector<float> x_values() {
  std::vector<float> v(80);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>((i * 37) % 83) - 41);
  return v;
}
Tensor x_of(DType t = DType::kF32) { return floats(x_values(), {2, 2, 4, 5}, t); }
Tensor rois_of(DType t = DType::kF32) {
  return floats({0, 0, 4, 3, 1.4f, 0.6f, 2.5f, 3.5f, -3, -2, 1, 1, 3, 2, 1, 0, 6, 5, 9, 9, -1, 3, 9, 3}, {6, 4}, t);
}
Tensor batch_of() { return ints({1, 0, 0, 1, 0, 1}, {6}); }

struct Case {
  double scale;
  Doubles y, argmax, dx;  // dx for dy = 1, 2, ... over y
};

// torchvision.ops.roi_pool(x, rois, (2, 3), scale) and its _roi_pool_backward, computed once.
const Case kCases[] = {
    {1.0,
     {28, 38, 29, 39, 39,  30, 40, 31, 22, 32, 32, 41, 34, -12, 25, -30, 7,  -39, 27, -19, 18, -37, 0,  37,
      0,  0,  0,  0,  -22, 15, 0,  0,  0,  0,  35, 35, 11, 11,  11, 11,  11, 11,  4,  4,   4,  4,   4,  4,
      0,  0,  0,  0,  0,   0,  0,  0,  0,  0,  0,  0,  39, 30,  0,  39,  30, 0,   32, 23,  0,  32,  23, 0},
     {0,  7,  9,  16, 16, 18, 5,  7,  9,  16, 16, 14, 11, 12, 13, 16, 17, 18, 11, 12, 13, 16, 17, 18,
      -1, -1, -1, -1, 5,  6,  -1, -1, -1, -1, 0,  0,  13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13,
      -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 16, 18, -1, 16, 18, -1, 16, 18, -1, 16, 18, -1},
     {0, 0, 0,   0, 0,   29, 30, 0, 0, 0,  0,  13, 14, 15, 0, 0, 16, 17, 18, 0,   71, 0, 0,   0, 0,   0, 0,
      0, 0, 0,   0, 19,  20, 21, 0, 0, 22, 23, 24, 0,  1,  0, 0, 0,  0,  0,  0,   2,  0, 3,   0, 0,   0, 237,
      0, 0, 134, 0, 133, 0,  0,  0, 0, 0,  0,  7,  0,  8,  0, 9, 0,  0,  0,  273, 12, 0, 158, 0, 139, 0}},
    {0.5,
     {28,  1,   38, -17, 20,  38, 40, -6, 31, 40, 13, 31, 15, 15, 15, 34, 34, 34, 8,  8,  8,  27, 27, 27,
      0,   -41, -4, 0,   -22, 15, 0,  35, 35, 0,  35, 35, 38, 38, 38, 38, 38, 38, 31, 31, 31, 31, 31, 31,
      -39, -2,  0,  0,   0,   0,  37, -9, 0,  0,  0,  0,  20, 20, 11, 20, 20, 11, 13, 13, 41, 13, 13, 41},
     {0,  6,  7,  10, 11, 7,  5,  6,  7,  5,  11, 7,  6,  6,  6,  11, 11, 11, 6,  6,  6,  11, 11, 11,
      -1, 0,  1,  -1, 5,  6,  -1, 0,  0,  -1, 0,  0,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,
      18, 19, -1, -1, -1, -1, 18, 19, -1, -1, -1, -1, 11, 11, 13, 11, 11, 13, 11, 11, 14, 11, 11, 14},
     {26, 27, 0, 0, 0,  29, 72, 0, 0, 0, 0, 51, 0,  0,   0, 0, 0, 0,   49, 50, 136, 0, 0, 0, 0,   0, 60,
      0,  0,  0, 0, 69, 0,  0,  0, 0, 0, 0, 55, 56, 1,   0, 0, 0, 0,   0,  2,  246, 0, 0, 4, 257, 0, 129,
      0,  0,  0, 0, 0,  0,  0,  0, 0, 0, 0, 17, 8,  294, 0, 0, 0, 287, 0,  0,  141, 0, 0, 0, 0,   0}},
};

Attrs grad_attrs(double scale) {
  Attrs a = pooled(2, 3, scale);
  a.set("xdiff_shape", I64s{2, 2, 4, 5});
  return a;
}

Tensor dy_of(std::size_t n, DType t = DType::kF32) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i + 1);
  return floats(v, {6, 2, 2, 3}, t);
}

}  // namespace

TEST_F(RoiPoolingTest, MatchesTorchvision) {
  for (const Case& c : kCases) {
    const BothBackends r = run_both(kFwd, {x_of(), rois_of(), batch_of()}, pooled(2, 3, c.scale));
    for (const auto& out : {r.cpu, r.npu}) {
      ASSERT_EQ(out.size(), 2u);
      EXPECT_EQ(out[0].shape(), (Shape{6, 2, 2, 3}));
      EXPECT_EQ(out[1].dtype(), DType::kI32);
      EXPECT_TRUE(all_close(to_vec(out[0]), c.y, 0, 0)) << "scale " << c.scale;
      EXPECT_TRUE(all_close(to_vec(out[1]), c.argmax, 0, 0)) << "scale " << c.scale;
    }
  }
}

TEST_F(RoiPoolingTest, GradientMatchesTorchvision) {
  for (const Case& c : kCases) {
    const Tensor argmax = ints(I64s(c.argmax.begin(), c.argmax.end()), {6, 2, 2, 3}, DType::kI32);
    const BothBackends r = run_both(kGrad, {dy_of(c.y.size()), rois_of(), batch_of(), argmax}, grad_attrs(c.scale));
    EXPECT_TRUE(all_close(to_vec(r.cpu[0]), c.dx, 0, 0)) << "cpu, scale " << c.scale;
    EXPECT_TRUE(all_close(to_vec(r.npu[0]), c.dx, 0, 0)) << "npu, scale " << c.scale;
  }
}

TEST_F(RoiPoolingTest, TiesTakeTheFirstAndAllNaNGivesMinusFltMax) {
  // torchvision: a later equal value does not replace the maximum; NaN and -inf never beat -FLT_MAX.
  const BothBackends ties =
      run_both(kFwd, {floats(std::vector<float>(9, 1), {1, 1, 3, 3}), floats({0, 0, 2, 2}, {1, 4}), ints({0}, {1})},
               pooled(2, 2, 1));
  EXPECT_TRUE(all_close(to_vec(ties.npu[0]), {1, 1, 1, 1}, 0, 0));
  EXPECT_TRUE(all_close(to_vec(ties.npu[1]), {0, 1, 3, 4}, 0, 0));
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const BothBackends all_nan =
      run_both(kFwd, {floats({nan, nan, nan, -inf}, {1, 1, 2, 2}), floats({0, 0, 1, 1}, {1, 4}), ints({0}, {1})},
               pooled(1, 1, 1));
  for (const auto& out : {all_nan.cpu, all_nan.npu}) {
    EXPECT_EQ(to_vec(out[0])[0], -static_cast<double>(FLT_MAX));
    EXPECT_EQ(to_vec(out[1])[0], -1);
  }
}

TEST_F(RoiPoolingTest, NpuMatchesCpuInF32AndF16) {
  for (DType t : {DType::kF32, DType::kF16}) {
    for (const Case& c : kCases) {
      const BothBackends r = run_both(kFwd, {x_of(t), rois_of(t), batch_of()}, pooled(2, 3, c.scale));
      EXPECT_EQ(r.npu[0].dtype(), t);
      EXPECT_TRUE(all_close(to_vec(r.npu[0]), to_vec(r.cpu[0]), 0, 0)) << dtype_name(t);
      EXPECT_TRUE(all_close(to_vec(r.npu[1]), to_vec(r.cpu[1]), 0, 0)) << dtype_name(t);
      EXPECT_TRUE(all_close(to_vec(r.npu[0]), c.y, 0, 0)) << dtype_name(t);  // maxima are exact in f16
      const Tensor argmax = ints(I64s(c.argmax.begin(), c.argmax.end()), {6, 2, 2, 3}, DType::kI32);
      EXPECT_TRUE(
          npu_close_to_cpu(kGrad, {dy_of(c.y.size(), t), rois_of(t), batch_of(), argmax}, grad_attrs(c.scale), 1e-3, 0))
          << dtype_name(t);
    }
  }
}

TEST_F(RoiPoolingTest, EmptyInputs) {
  const std::vector<Tensor> y =
      call_op(kFwd, {x_of(), floats(std::vector<float>{}, {0, 4}), ints({}, {0})}, pooled(2, 3, 1));
  EXPECT_EQ(y[0].shape(), (Shape{0, 2, 2, 3}));
  EXPECT_EQ(y[1].shape(), (Shape{0, 2, 2, 3}));
  const Tensor dx = call_op1(kGrad,
                             {floats(std::vector<float>{}, {0, 2, 2, 3}), floats(std::vector<float>{}, {0, 4}),
                              ints({}, {0}), ints({}, {0, 2, 2, 3}, DType::kI32)},
                             grad_attrs(1));
  EXPECT_TRUE(all_close(to_vec(dx), Doubles(80, 0.0), 0, 0));
}

TEST_F(RoiPoolingTest, BadInputsNameTheProblem) {
  const Tensor x = x_of(), rois = rois_of(), batch = batch_of();
  EXPECT_TRUE(mentions(error_of([&] { call_op(kFwd, {x, rois, batch}, pooled(0, 3, 1)); }), {kFwd, "pooled_h"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op(kFwd, {floats({1, 2}, {1, 2}), rois, batch}, pooled(2, 2, 1));
                       }),
                       {kFwd, "4-D"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op(kFwd, {x, floats({0, 0, 1}, {1, 3}), ints({0}, {1})}, pooled(2, 2, 1));
                       }),
                       {"rois", "[1, 3]"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op(kFwd, {x, rois, floats({0, 0, 0, 0, 0, 0}, {6})}, pooled(2, 2, 1));
                       }),
                       {"batch_indices", "i32 or i64"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op(kFwd, {ints({1}, {1, 1, 1, 1}), rois, batch}, pooled(2, 2, 1));
                       }),
                       {kFwd}));
  // Bad data: kernel faults naming it.
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op(kFwd, {x, rois, ints({0, 0, 0, 2, 0, 0}, {6})}, pooled(2, 2, 1));
                       }),
                       {kFwd, "batch_indices[3] = 2"}));
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op(kFwd, {x, floats({0, 0, inf, 1}, {1, 4}), ints({0}, {1})}, pooled(2, 2, 1));
                       }),
                       {kFwd, "roi 0", "not finite"}));
  // The gradient: argmax of dy's shape and an index dtype, xdiff_shape, and argmax inside the plane.
  const Tensor dy = dy_of(72);
  const Tensor argmax = ints(I64s(72, 0), {6, 2, 2, 3}, DType::kI32);
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op(kGrad, {dy, rois, batch, argmax}, pooled(2, 3, 1));
                       }),
                       {kGrad, "xdiff_shape"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op(kGrad, {dy, rois, batch, ints(I64s(36, 0), {6, 2, 3})}, grad_attrs(1));
                       }),
                       {"argmax", "dy's shape"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op(kGrad, {dy, rois, batch, floats(std::vector<float>(72), {6, 2, 2, 3})}, grad_attrs(1));
                       }),
                       {"argmax", "i32 or i64"}));
  Attrs other_c = grad_attrs(1);
  other_c.set("xdiff_shape", I64s{2, 3, 4, 5});
  EXPECT_TRUE(mentions(error_of([&] { call_op(kGrad, {dy, rois, batch, argmax}, other_c); }), {"xdiff_shape", "C"}));
  EXPECT_TRUE(
      mentions(error_of([&] {
                 call_op(kGrad, {dy, rois, batch, ints(I64s(72, 20), {6, 2, 2, 3}, DType::kI32)}, grad_attrs(1));
               }),
               {kGrad, "argmax 20", "[-1, 20)"}));
}

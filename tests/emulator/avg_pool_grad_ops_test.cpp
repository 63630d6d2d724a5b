// AvgPoolGrad (AvgPool's gradient) as AvgPool's adjoint, <AvgPool(x), dy> = <x, AvgPoolGrad(dy)>, over 2-D and
// 3-D pools with strides, pads, count_include_pad, ceil_mode and divisor_override; hand-computed values; NPU vs
// CPU golden; bad shapes.
#include <gtest/gtest.h>

#include "emulator/op_test_util.h"
#include "npuscope/emulator/errors.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

using AvgPoolGradTest = OpTest;
using Ints = std::vector<std::int64_t>;

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

void check_adjoint(const Shape& x_shape, Attrs attrs, std::uint64_t seed) {
  const Tensor x = Tensor::uniform(x_shape, DType::kF32, DeviceRef::cpu(), seed, -1, 1);
  const Tensor y = call_op1("AvgPool", {x}, attrs);
  const Tensor dy = Tensor::uniform(y.shape(), DType::kF32, DeviceRef::cpu(), seed + 1, -1, 1);
  attrs.set("input_size", Ints(x_shape.begin(), x_shape.end()));
  const Tensor dx = call_op1("AvgPoolGrad", {dy}, attrs);
  ASSERT_EQ(dx.shape(), x_shape);
  EXPECT_NEAR(dot(to_vec(y), to_vec(dy)), dot(to_vec(x), to_vec(dx)), 1e-6) << shape_str(x_shape);  // f32 outputs
  EXPECT_TRUE(all_close(to_vec(call_op1("AvgPoolGrad", on_npu({dy}), attrs)), to_vec(dx), 1e-5, 1e-6));
}

}  // namespace

TEST_F(AvgPoolGradTest, IsTheAdjointOfAvgPool) {
  check_adjoint({2, 3, 7, 8}, {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}}, 1);
  check_adjoint({1, 2, 9, 9}, {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}, 3);
  check_adjoint({1, 2, 9, 9},
                {{"kernel_shape", Ints{3, 3}},
                 {"strides", Ints{2, 2}},
                 {"pads", Ints{1, 1, 1, 1}},
                 {"count_include_pad", std::int64_t{1}}},
                5);
  check_adjoint({1, 2, 8, 7}, {{"kernel_shape", Ints{3, 2}}, {"strides", Ints{2, 3}}, {"ceil_mode", std::int64_t{1}}},
                7);
  check_adjoint({1, 1, 6, 6}, {{"kernel_shape", Ints{2, 2}}, {"divisor_override", std::int64_t{3}}}, 9);
  check_adjoint({2, 2, 5, 6, 7},
                {{"kernel_shape", Ints{3, 3, 3}}, {"strides", Ints{2, 2, 2}}, {"pads", Ints{1, 1, 1, 1, 1, 1}}}, 11);
}

TEST_F(AvgPoolGradTest, HandComputed) {
  // A 2x2 window, stride 2, over 4x4: each input gets a quarter of its window's gradient.
  const Tensor dy = floats({4, 8, 12, 16}, {1, 1, 2, 2});
  const auto dx = to_vec(call_op1(
      "AvgPoolGrad", {dy}, {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"input_size", Ints{1, 1, 4, 4}}}));
  EXPECT_EQ(dx, (std::vector<double>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
  // divisor_override 1: every tap gets the whole gradient; the forward sums.
  const Tensor x = floats({1, 2, 3, 4}, {1, 1, 2, 2});
  EXPECT_EQ(to_vec(call_op1("AvgPool", {x}, {{"kernel_shape", Ints{2, 2}}, {"divisor_override", std::int64_t{1}}})),
            (std::vector<double>{10}));
}

TEST_F(AvgPoolGradTest, BadShapesNameTheOp) {
  const Tensor dy = Tensor::zeros({1, 1, 2, 2}, DType::kF32);
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("AvgPoolGrad", {dy}, {{"kernel_shape", Ints{2, 2}}});
                       }),
                       {"AvgPoolGrad", "input_size"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1(
                             "AvgPoolGrad", {dy},
                             {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"input_size", Ints{1, 1, 6, 6}}});
                       }),
                       {"AvgPoolGrad", "dy has shape [1, 1, 2, 2]", "[1, 1, 3, 3]"}));
}

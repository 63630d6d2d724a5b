// ResizeGrad as Resize's adjoint, <Resize(x), dy> = <x, ResizeGrad(dy)>, for the maps PyTorch's upsampling uses
// (nearest asymmetric/floor, linear pytorch_half_pixel and align_corners; by sizes and by scales, up and down),
// hand-computed values, NPU vs CPU golden, bad shapes.
#include <gtest/gtest.h>

#include "emulator/op_test_util.h"
#include "npuscope/emulator/errors.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

using ResizeGradTest = OpTest;
using Ints = std::vector<std::int64_t>;
using Floats = std::vector<double>;

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

Attrs map_attrs(const char* mode, const char* ctm) {
  return {{"mode", std::string(mode)},
          {"coordinate_transformation_mode", std::string(ctm)},
          {"nearest_mode", std::string("floor")}};
}

void check_adjoint(const Shape& x_shape, Attrs attrs, std::uint64_t seed) {
  const Tensor x = Tensor::uniform(x_shape, DType::kF32, DeviceRef::cpu(), seed, -1, 1);
  const Tensor y = call_op1("Resize", {x}, attrs);
  const Tensor dy = Tensor::uniform(y.shape(), DType::kF32, DeviceRef::cpu(), seed + 1, -1, 1);
  attrs.set("input_size", Ints(x_shape.begin(), x_shape.end()));
  const Tensor dx = call_op1("ResizeGrad", {dy}, attrs);
  ASSERT_EQ(dx.shape(), x_shape);
  EXPECT_NEAR(dot(to_vec(y), to_vec(dy)), dot(to_vec(x), to_vec(dx)), 1e-5) << shape_str(x_shape);
  EXPECT_TRUE(all_close(to_vec(call_op1("ResizeGrad", on_npu({dy}), attrs)), to_vec(dx), 1e-5, 1e-6));
}

}  // namespace

TEST_F(ResizeGradTest, IsTheAdjointOfResize) {
  for (const char* ctm : {"pytorch_half_pixel", "align_corners"}) {
    Attrs up = map_attrs("linear", ctm);
    up.set("sizes", Ints{2, 3, 9, 7});
    check_adjoint({2, 3, 5, 6}, up, 1);
    Attrs down = map_attrs("linear", ctm);
    down.set("sizes", Ints{1, 2, 3, 4});
    check_adjoint({1, 2, 7, 9}, down, 3);
  }
  Attrs nearest = map_attrs("nearest", "asymmetric");
  nearest.set("sizes", Ints{2, 2, 7, 9});
  check_adjoint({2, 2, 5, 6}, nearest, 5);
  Attrs scaled = map_attrs("linear", "pytorch_half_pixel");
  scaled.set("sizes", Ints{1, 1, 10, 12});
  scaled.set("scales", Floats{1, 1, 2, 2});
  check_adjoint({1, 1, 5, 6}, scaled, 7);
}

TEST_F(ResizeGradTest, NearestDoublingSumsEachBlock) {
  Attrs a = map_attrs("nearest", "asymmetric");
  a.set("sizes", Ints{1, 1, 4, 4});
  a.set("input_size", Ints{1, 1, 2, 2});
  const Tensor dy = floats({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, {1, 1, 4, 4});
  EXPECT_EQ(to_vec(call_op1("ResizeGrad", {dy}, a)), (std::vector<double>{14, 22, 46, 54}));
}

TEST_F(ResizeGradTest, BadShapesNameTheOp) {
  Attrs a = map_attrs("nearest", "asymmetric");
  a.set("sizes", Ints{1, 1, 4, 4});
  const Tensor dy = Tensor::zeros({1, 1, 4, 4}, DType::kF32);
  EXPECT_TRUE(mentions(error_of([&] { call_op1("ResizeGrad", {dy}, a); }), {"ResizeGrad", "input_size"}));
  a.set("input_size", Ints{1, 1, 2, 2});
  a.set("sizes", Ints{1, 1, 6, 6});
  EXPECT_TRUE(mentions(error_of([&] { call_op1("ResizeGrad", {dy}, a); }), {"ResizeGrad", "dy has shape"}));
}

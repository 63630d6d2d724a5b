// Conv2DBackpropInput / Conv2DBackpropFilter: CPU golden vs the adjoint of the convolution's
// definition (strides, pads, dilations, groups, 1x1), vs PyTorch's convolution_backward on one case,
// NPU vs CPU in f32 and f16, and bad shapes.
#include <gtest/gtest.h>

#include "emulator/conv_reference.h"
#include "emulator/train_op_test_util.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

using ConvBackwardTest = OpTest;
using Ints = std::vector<std::int64_t>;

// The attributes of Conv2DBackpropInput / Conv2DBackpropFilter for `p`, with the size they rebuild.
Attrs backward_attrs(const Conv2dCase& p, const char* size_name, const Shape& size) {
  return {{"strides", p.strides}, {"pads", p.pads}, {"dilations", p.dilations}, {"groups", p.group}, {size_name, size}};
}

// dx and dw by the definition: each of its products x · w adds dy·w to dx and dy·x to dw.
void reference(const Conv2dCase& p, const std::vector<double>& x, const std::vector<double>& w,
               const std::vector<double>& dy, const Shape& out, std::vector<double>& dx, std::vector<double>& dw) {
  dx.assign(x.size(), 0.0);
  dw.assign(w.size(), 0.0);
  for_each_conv2d_product(p, out, [&](std::size_t yi, std::size_t xi, std::size_t wi) {
    dx[xi] += dy[yi] * w[wi];
    dw[wi] += dy[yi] * x[xi];
  });
}

void check(const Conv2dCase& p, double phase) {
  const Tensor x = seq(p.x, phase), w = seq(p.w, phase + 0.6);
  const Tensor y = ops::conv2d(x, w, Tensor(), p.strides, p.pads, p.dilations, p.group);
  const Tensor dy = seq(y.shape(), phase + 1.2);
  std::vector<double> dx, dw;
  reference(p, to_vec(x), to_vec(w), to_vec(dy), y.shape(), dx, dw);
  const Tensor gx = call_op1("Conv2DBackpropInput", {dy, w}, backward_attrs(p, "input_size", p.x));
  const Tensor gw = call_op1("Conv2DBackpropFilter", {x, dy}, backward_attrs(p, "filter_size", p.w));
  EXPECT_EQ(gx.shape(), p.x);
  EXPECT_EQ(gw.shape(), p.w);
  EXPECT_TRUE(all_close(to_vec(gx), dx, 1e-5, 1e-5)) << shape_str(p.x) << " " << shape_str(p.w);
  EXPECT_TRUE(all_close(to_vec(gw), dw, 1e-5, 1e-5)) << shape_str(p.x) << " " << shape_str(p.w);
  // NPU (f32 cube under must_keep_origin_dtype) agrees with the golden.
  const Tensor nx = call_op1("Conv2DBackpropInput", on_npu({dy, w}), backward_attrs(p, "input_size", p.x));
  const Tensor nw = call_op1("Conv2DBackpropFilter", on_npu({x, dy}), backward_attrs(p, "filter_size", p.w));
  EXPECT_TRUE(all_close(to_vec(nx), dx, 1e-5, 1e-5));
  EXPECT_TRUE(all_close(to_vec(nw), dw, 1e-5, 1e-5));
}

}  // namespace

TEST_F(ConvBackwardTest, MatchesTheDefinition) {
  check({.x = {2, 3, 6, 5}, .w = {4, 3, 3, 3}, .pads = {1, 1, 1, 1}}, 0.1);                     // ResNet 3x3
  check({.x = {2, 4, 9, 9}, .w = {6, 4, 7, 7}, .strides = {2, 2}, .pads = {3, 3, 3, 3}}, 0.2);  // stem
  check({.x = {2, 4, 7, 7}, .w = {8, 4, 1, 1}, .strides = {2, 2}}, 0.3);                        // downsample
  check({.x = {3, 8, 4, 5}, .w = {4, 8, 1, 1}}, 0.4);                                           // 1x1 direct
  check(
      {.x = {2, 4, 8, 7}, .w = {6, 2, 3, 2}, .strides = {2, 1}, .pads = {1, 2, 0, 1}, .dilations = {2, 2}, .group = 2},
      0.5);
  check({.x = {1, 6, 5, 5}, .w = {6, 1, 3, 3}, .pads = {1, 1, 1, 1}, .group = 6}, 0.6);  // depthwise
  // A stride that skips the last input row and column: their gradient is zero.
  check({.x = {1, 2, 6, 6}, .w = {3, 2, 3, 3}, .strides = {2, 2}}, 0.7);
}

TEST_F(ConvBackwardTest, MatchesPytorch) {
  // torch.ops.aten.convolution_backward(dy, x, w, None, [2,1], [1,2], [1,2], False, [0,0], 2, ...)
  // with x = seq([2,4,5,6], 0.1), w = seq([6,2,3,3], 0.7), dy = seq([2,6,3,6], 1.3); first values.
  const Tensor x = seq({2, 4, 5, 6}, 0.1), w = seq({6, 2, 3, 3}, 0.7), dy = seq({2, 6, 3, 6}, 1.3);
  const Attrs a{{"strides", Ints{2, 1}}, {"pads", Ints{1, 2, 1, 2}}, {"dilations", Ints{1, 2}}, {"group", 2}};
  Attrs ax = a, aw = a;
  ax.set("input_size", Ints{2, 4, 5, 6});
  aw.set("filter_size", Ints{6, 2, 3, 3});
  const auto dx = to_vec(call_op1("Conv2DBackpropInput", {dy, w}, ax));
  const auto dw = to_vec(call_op1("Conv2DBackpropFilter", {x, dy}, aw));
  EXPECT_TRUE(all_close({dx.begin(), dx.begin() + 6},
                        {3.1159220964426115, 2.363065916004932, 1.896788433242524, 0.6812944346348356,
                         0.7865383645044767, 0.09328953779626942},
                        1e-5, 1e-6));
  EXPECT_TRUE(all_close({dw.begin(), dw.begin() + 6},
                        {0.8281536609915983, 2.6830651570784285, 3.286593426844351, -0.8586621751133916,
                         -1.117600352351511, -0.7916644464150489},
                        1e-5, 1e-6));
  EXPECT_NEAR(dw.back(), -0.5102442574385477, 1e-5);
}

TEST_F(ConvBackwardTest, NpuF16MatchesCpu) {
  const Conv2dCase p{.x = {2, 4, 6, 6}, .w = {8, 4, 3, 3}, .pads = {1, 1, 1, 1}};
  const Tensor x = seq(p.x, 0.3, DType::kF16), w = seq(p.w, 0.9, DType::kF16), dy = seq({2, 8, 6, 6}, 1.5, DType::kF16);
  const auto gx = to_vec(call_op1("Conv2DBackpropInput", {dy, w}, backward_attrs(p, "input_size", p.x)));
  const auto gw = to_vec(call_op1("Conv2DBackpropFilter", {x, dy}, backward_attrs(p, "filter_size", p.w)));
  EXPECT_TRUE(all_close(to_vec(call_op1("Conv2DBackpropInput", on_npu({dy, w}), backward_attrs(p, "input_size", p.x))),
                        gx, 1e-3, 1e-3));
  EXPECT_TRUE(
      all_close(to_vec(call_op1("Conv2DBackpropFilter", on_npu({x, dy}), backward_attrs(p, "filter_size", p.w))), gw,
                1e-3, 1e-3));
}

TEST_F(ConvBackwardTest, BadShapesNameTheOpAndTheInput) {
  const Tensor w = seq({4, 3, 3, 3}, 0), dy = seq({2, 4, 4, 4}, 0), x = seq({2, 3, 6, 6}, 0);
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("Conv2DBackpropInput", {dy, w}, {});
                       }),
                       {"Conv2DBackpropInput", "input_size"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("Conv2DBackpropInput", {dy, w}, {{"input_size", Ints{2, 3, 7, 7}}});
                       }),
                       {"Conv2DBackpropInput", "dy has shape [2, 4, 4, 4]", "[2, 4, 5, 5]"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("Conv2DBackpropFilter", {x, dy}, {{"filter_size", Ints{4, 2, 3, 3}}});
                       }),
                       {"Conv2DBackpropFilter", "group"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("Conv2DBackpropFilter", {x, dy}, {{"filter_size", Ints{4, 3, 3}}});
                       }),
                       {"Conv2DBackpropFilter", "filter_size must be 4 sizes"}));
  EXPECT_TRUE(mentions(
      error_of([&] {
        call_op1("Conv2DBackpropFilter", {x, dy}, {{"filter_size", Ints{4, 3, 3, 3}}, {"group", 1}, {"groups", 3}});
      }),
      {"group 1 and groups 3 disagree"}));
}

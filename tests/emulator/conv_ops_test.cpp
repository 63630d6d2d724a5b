// Conv2d: CPU golden vs hand-computed values and a direct-loop reference (strides, pads,
// dilations, groups, bias, depthwise, 1x1), NPU vs CPU golden, bad shapes and attributes.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "emulator/conv_reference.h"
#include "emulator/op_test_util.h"
#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/op_registry.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

using ConvTest = OpTest;
using Ints = std::vector<std::int64_t>;

// The definition, one output element at a time, in double.
std::vector<double> ref_conv(const Conv2dCase& p, const std::vector<double>& x, const std::vector<double>& w,
                             const std::vector<double>& b, const Shape& out) {
  const auto plane = static_cast<std::size_t>(out[2] * out[3]), channels = static_cast<std::size_t>(out[1]);
  std::vector<double> y(static_cast<std::size_t>(shape_numel(out)));
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = p.bias ? b[i / plane % channels] : 0.0;
  for_each_conv2d_product(p, out, [&](std::size_t yi, std::size_t xi, std::size_t wi) { y[yi] += x[xi] * w[wi]; });
  return y;
}

Tensor run(const Conv2dCase& p, const Tensor& x, const Tensor& w, const Tensor& b) {
  return ops::conv2d(x, w, p.bias ? b : Tensor(), p.strides, p.pads, p.dilations, p.group);
}

void check_against_reference(const Conv2dCase& p, std::uint64_t seed) {
  auto x = Tensor::uniform(p.x, DType::kF32, DeviceRef::cpu(), seed, -1, 1);
  auto w = Tensor::uniform(p.w, DType::kF32, DeviceRef::cpu(), seed + 1, -1, 1);
  auto b = Tensor::uniform({p.w[0]}, DType::kF32, DeviceRef::cpu(), seed + 2, -1, 1);
  auto y = run(p, x, w, b);
  const auto expect = ref_conv(p, to_vec(x), to_vec(w), to_vec(b), y.shape());
  EXPECT_TRUE(all_close(to_vec(y), expect, 1e-5, 1e-5)) << "x " << shape_str(p.x) << " w " << shape_str(p.w);
}

}  // namespace

TEST_F(ConvTest, CpuMatchesHandComputed) {
  // x = 1..9 as 3x3, w = [[1, 0], [0, -1]]: y[r][s] = x[r][s] - x[r+1][s+1] = -4 everywhere.
  auto x = floats({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 1, 3, 3});
  auto w = floats({1, 0, 0, -1}, {1, 1, 2, 2});
  auto y = ops::conv2d(x, w, Tensor());
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  EXPECT_EQ(to_vec(y), (std::vector<double>{-4, -4, -4, -4}));
  // Padding 1 all round, 3x3 ones on a 2x2 input: every output sees the whole input (sum 10).
  auto x2 = floats({1, 2, 3, 4}, {1, 1, 2, 2});
  auto ones = floats(std::vector<float>(9, 1.0f), {1, 1, 3, 3});
  EXPECT_EQ(to_vec(ops::conv2d(x2, ones, Tensor(), {1, 1}, {1, 1, 1, 1})), std::vector<double>(4, 10.0));
  // Stride 2, pad 1 bottom/right, bias 0.5: windows at rows/cols 0 and 2; x[r][s] - (x[r+1][s+1] or 0).
  auto y3 = ops::conv2d(x, w, floats({0.5f}, {1}), {2, 2}, {0, 0, 1, 1});
  EXPECT_EQ(y3.shape(), (Shape{1, 1, 2, 2}));
  EXPECT_EQ(to_vec(y3), (std::vector<double>{-3.5, 3.5, 7.5, 9.5}));
  // Dilation 2: the 2x2 kernel spans the 3x3 input corners: 1 - 9 = -8.
  EXPECT_EQ(to_vec(ops::conv2d(x, w, Tensor(), {1, 1}, {0, 0, 0, 0}, {2, 2})), (std::vector<double>{-8}));
}

TEST_F(ConvTest, DepthwiseHandComputed) {
  // Two channels, group 2: channel 0 scaled by 2, channel 1 by -1 (1x1 kernels), bias [1, 0].
  auto x = floats({1, 2, 3, 4, 5, 6, 7, 8}, {1, 2, 2, 2});
  auto w = floats({2, -1}, {2, 1, 1, 1});
  auto y = ops::conv2d(x, w, floats({1, 0}, {2}), {1, 1}, {0, 0, 0, 0}, {1, 1}, 2);
  EXPECT_EQ(to_vec(y), (std::vector<double>{3, 5, 7, 9, -5, -6, -7, -8}));
}

TEST_F(ConvTest, CpuMatchesReferenceOnAttributeMix) {
  const std::vector<Conv2dCase> cases{
      {.x = {2, 3, 7, 6}, .w = {4, 3, 3, 3}},
      {.x = {1, 3, 9, 8}, .w = {5, 3, 3, 2}, .strides = {2, 3}, .pads = {1, 0, 2, 1}, .bias = true},
      {.x = {2, 4, 8, 8}, .w = {6, 2, 3, 3}, .pads = {2, 2, 2, 2}, .dilations = {2, 1}, .group = 2, .bias = true},
      {.x = {1, 6, 5, 5}, .w = {6, 1, 3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}, .group = 6},  // depthwise
      {.x = {1, 4, 5, 5}, .w = {8, 4, 1, 1}, .bias = true},                                         // 1x1 direct
      {.x = {1, 4, 5, 5}, .w = {8, 4, 1, 1}, .strides = {2, 2}},                                    // 1x1 strided
      {.x = {1, 2, 4, 4}, .w = {2, 2, 5, 5}, .pads = {3, 3, 3, 3}},  // taps entirely in the padding
  };
  std::uint64_t seed = 100;
  for (const auto& c : cases) check_against_reference(c, seed += 10);
}

// Depthwise convolutions run the direct kernel (Note [Direct grouped convolution]): every edge of its
// per-tap column ranges, kernel widths 3, 5, 7 (fused rows) and others, strides 1, 2 and 3, channel
// multipliers; two input channels per group stay on im2col + GEMM.
TEST_F(ConvTest, DepthwiseDirectMatchesReference) {
  const std::vector<Conv2dCase> cases{
      {.x = {2, 8, 9, 11}, .w = {8, 1, 3, 3}, .pads = {1, 1, 1, 1}, .group = 8, .bias = true},
      {.x = {1, 4, 12, 13}, .w = {8, 1, 5, 5}, .strides = {2, 2}, .pads = {2, 1, 2, 3}, .group = 4},  // multiplier 2
      {.x = {1, 3, 10, 10}, .w = {3, 1, 3, 3}, .strides = {3, 3}, .pads = {1, 1, 1, 1}, .group = 3, .bias = true},
      {.x = {1, 6, 11, 9}, .w = {6, 1, 3, 3}, .pads = {2, 2, 2, 2}, .dilations = {2, 2}, .group = 6},
      {.x = {1, 4, 1, 40}, .w = {4, 1, 1, 29}, .pads = {0, 28, 0, 28}, .dilations = {1, 2}, .group = 4},  // 1-D
      {.x = {1, 4, 3, 3}, .w = {4, 1, 7, 7}, .pads = {3, 3, 3, 3}, .group = 4},  // taps wider than the input
      {.x = {2, 5, 6, 9}, .w = {5, 1, 7, 7}, .strides = {2, 2}, .pads = {3, 3, 3, 3}, .group = 5, .bias = true},
      {.x = {1, 8, 6, 7}, .w = {8, 2, 3, 3}, .strides = {2, 1}, .pads = {1, 1, 1, 1}, .group = 4},  // GEMM
  };
  std::uint64_t seed = 300;
  for (const auto& c : cases) check_against_reference(c, seed += 10);
}

TEST_F(ConvTest, DepthwiseDirectF64AndNpuF16) {
  const Conv2dCase p{
      .x = {2, 12, 9, 9}, .w = {24, 1, 3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}, .group = 12, .bias = true};
  auto x = Tensor::uniform(p.x, DType::kF64, DeviceRef::cpu(), 21, -1, 1);
  auto w = Tensor::uniform(p.w, DType::kF64, DeviceRef::cpu(), 22, -1, 1);
  auto b = Tensor::uniform({p.w[0]}, DType::kF64, DeviceRef::cpu(), 23, -1, 1);
  auto y = run(p, x, w, b);
  EXPECT_EQ(y.dtype(), DType::kF64);
  EXPECT_TRUE(all_close(to_vec(y), ref_conv(p, to_vec(x), to_vec(w), to_vec(b), y.shape()), 1e-12, 1e-12));
  // NPU f16: f16 operands, f32 accumulation, one rounding of the output (Note [Cube numerics]).
  auto xh = ops::cast(x, DType::kF16), wh = ops::cast(w, DType::kF16), bh = ops::cast(b, DType::kF16);
  auto golden = run(p, xh, wh, bh);
  auto npu = on_npu({xh, wh, bh});
  auto out = run(p, npu[0], npu[1], npu[2]);
  EXPECT_EQ(out.dtype(), DType::kF16);
  EXPECT_TRUE(all_close(to_vec(out), to_vec(golden), 1e-3, 1e-5 * 9));
}

TEST_F(ConvTest, NpuMatchesCpuF32AndF16) {
  const Conv2dCase p{
      .x = {2, 8, 10, 10}, .w = {12, 4, 3, 3}, .strides = {1, 2}, .pads = {1, 1, 1, 1}, .group = 2, .bias = true};
  for (DType t : {DType::kF32, DType::kF16}) {
    auto x = Tensor::uniform(p.x, t, DeviceRef::cpu(), 7, -1, 1);
    auto w = Tensor::uniform(p.w, t, DeviceRef::cpu(), 8, -1, 1);
    auto b = Tensor::uniform({p.w[0]}, t, DeviceRef::cpu(), 9, -1, 1);
    auto npu = on_npu({x, w, b});
    EXPECT_TRUE(cube_close_to_golden(run(p, npu[0], npu[1], npu[2]), run(p, x, w, b), 4 * 3 * 3));
  }
}

TEST_F(ConvTest, BadShapesAndAttributesAreInvalidArgument) {
  auto x = Tensor::zeros({1, 4, 5, 5}, DType::kF32);
  auto w = Tensor::zeros({6, 4, 3, 3}, DType::kF32);
  EXPECT_THROW(ops::conv2d(Tensor::zeros({4, 5, 5}, DType::kF32), w, Tensor()), InvalidArgument);
  EXPECT_THROW(ops::conv2d(x, Tensor::zeros({6, 3, 3, 3}, DType::kF32), Tensor()), InvalidArgument);
  EXPECT_THROW(ops::conv2d(x, w, Tensor(), {1, 1}, {0, 0, 0, 0}, {1, 1}, 2), InvalidArgument);
  EXPECT_THROW(ops::conv2d(x, w, Tensor::zeros({5}, DType::kF32)), InvalidArgument);
  EXPECT_THROW(ops::conv2d(x, Tensor::zeros({6, 4, 7, 7}, DType::kF32), Tensor()), InvalidArgument);
  EXPECT_THROW(ops::conv2d(x, w, Tensor(), {1, 1}, {0, 0, 0}), InvalidArgument);
  EXPECT_THROW(ops::conv2d(x, w, Tensor(), {0, 1}), InvalidArgument);
  EXPECT_THROW(ops::conv2d(x, Tensor::zeros({6, 4, 3, 3}, DType::kF16), Tensor()), InvalidArgument);
}

TEST_F(ConvTest, CostDescribesTheIm2colGemm) {
  const OpSchema& schema = OpRegistry::instance().schema("Conv2d");
  const std::vector<TensorMeta> in{{{2, 8, 10, 10}, DType::kF16}, {{12, 4, 3, 3}, DType::kF16}};
  const Attrs attrs{{"pads", Ints{1, 1, 1, 1}}, {"group", std::int64_t{2}}};
  const auto out = schema.infer(in, attrs);
  ASSERT_EQ(out[0].shape, (Shape{2, 12, 10, 10}));
  const KernelCost c = schema.cost(in, out, attrs);
  EXPECT_EQ(c.unit, ComputeUnit::kCube);
  EXPECT_EQ(c.m, 2 * 10 * 10);
  EXPECT_EQ(c.n, 6);
  EXPECT_EQ(c.k, 4 * 3 * 3);
  EXPECT_EQ(c.batch, 2);
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 2 * 200 * 6 * 36);
}

// Pads, strides and dilations come from the model. INT64_MAX pads used to wrap the output size
// (pads {MAX, 0, MAX, 0} gave a small all-zeros output); now they are errors naming the attribute,
// its value and the valid range, and in-range values whose sizes overflow are errors too.
TEST_F(ConvTest, HugePadsStridesAndDilationsAreErrors) {
  const auto x = Tensor::zeros({1, 1, 4, 4}, DType::kF32), w = Tensor::zeros({1, 1, 3, 3}, DType::kF32);
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  for (const Ints& pads : {Ints{max, 0, 0, 0}, Ints{max, 0, max, 0}, Ints{0, max, 0, max}}) {
    EXPECT_TRUE(mentions(error_of([&] {
                           ops::conv2d(x, w, Tensor(), {1, 1}, pads);
                         }),
                         {"Conv2d", "pads", "9223372036854775807", "[0, 1099511627776]"}));
  }
  EXPECT_TRUE(mentions(error_of([&] { ops::conv2d(x, w, Tensor(), {max, 1}); }), {"Conv2d", "strides", "[1, "}));
  EXPECT_TRUE(mentions(error_of([&] {
                         ops::conv2d(x, w, Tensor(), {1, 1}, {0, 0, 0, 0}, {max, 1});
                       }),
                       {"Conv2d", "dilations", "[1, "}));
  // Within the caps: a dilated kernel larger than the input is the usual error; huge pads give a
  // tensor beyond the size limit, refused before allocating.
  const std::int64_t p40 = std::int64_t{1} << 40;
  EXPECT_TRUE(mentions(error_of([&] {
                         ops::conv2d(x, w, Tensor(), {1, 1}, {0, 0, 0, 0}, {p40, 1});
                       }),
                       {"Conv2d", "does not fit"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         ops::conv2d(x, w, Tensor(), {1, 1}, {p40, p40, p40, p40});
                       }),
                       {"Conv2d", "too large"}));
  // Huge pads with a huge stride are still well defined: one output per dim, all padding.
  const auto y = ops::conv2d(x, w, Tensor(), {p40, p40}, {p40, p40, p40, p40});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 3, 3}));  // (4 + 2^41 - 3) / 2^40 + 1
}

// Conv3d: CPU golden vs hand-computed values and a direct-loop reference (strides, pads,
// dilations, groups, bias, depthwise, 1x1x1, depth chunks, several images per GEMM), NPU vs CPU golden (f32 and f16
// kept, f32 under force_fp16), cost, bad shapes and attributes.
#include <gtest/gtest.h>

#include <string>

#include "emulator/op_test_util.h"
#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/op_registry.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

using Conv3dTest = OpTest;
using Ints = std::vector<std::int64_t>;

struct Case {
  Shape x, w;
  Ints strides{1, 1, 1}, pads{0, 0, 0, 0, 0, 0}, dilations{1, 1, 1};
  std::int64_t group = 1;
  bool bias = false;
};

Tensor conv3d(const Tensor& x, const Tensor& w, const Tensor& b, const Case& p) {
  const Attrs attrs{{"strides", p.strides}, {"pads", p.pads}, {"dilations", p.dilations}, {"group", p.group}};
  return call_op1("Conv3d", {x, w, p.bias ? b : Tensor()}, attrs);
}

// The definition, one output element at a time, in double.
std::vector<double> ref_conv3d(const Case& p, const std::vector<double>& x, const std::vector<double>& w,
                               const std::vector<double>& b, const Shape& out) {
  const std::int64_t c = p.x[1], cg = p.w[1], per_group = out[1] / p.group;
  const std::int64_t in[3] = {p.x[2], p.x[3], p.x[4]}, k[3] = {p.w[2], p.w[3], p.w[4]};
  std::vector<double> y;
  for (std::int64_t i = 0; i < out[0]; ++i)
    for (std::int64_t o = 0; o < out[1]; ++o)
      for (std::int64_t z = 0; z < out[2]; ++z)
        for (std::int64_t r = 0; r < out[3]; ++r)
          for (std::int64_t s = 0; s < out[4]; ++s) {
            double acc = p.bias ? b[static_cast<std::size_t>(o)] : 0.0;
            for (std::int64_t ci = 0; ci < cg; ++ci)
              for (std::int64_t t = 0; t < k[0]; ++t)
                for (std::int64_t u = 0; u < k[1]; ++u)
                  for (std::int64_t v = 0; v < k[2]; ++v) {
                    const std::int64_t iz = z * p.strides[0] - p.pads[0] + t * p.dilations[0];
                    const std::int64_t ih = r * p.strides[1] - p.pads[1] + u * p.dilations[1];
                    const std::int64_t iw = s * p.strides[2] - p.pads[2] + v * p.dilations[2];
                    if (iz < 0 || iz >= in[0] || ih < 0 || ih >= in[1] || iw < 0 || iw >= in[2]) continue;
                    const std::int64_t cin = (o / per_group) * cg + ci;
                    acc += x[static_cast<std::size_t>((((i * c + cin) * in[0] + iz) * in[1] + ih) * in[2] + iw)] *
                           w[static_cast<std::size_t>((((o * cg + ci) * k[0] + t) * k[1] + u) * k[2] + v)];
                  }
            y.push_back(acc);
          }
  return y;
}

void check_against_reference(const Case& p, std::uint64_t seed) {
  auto x = Tensor::uniform(p.x, DType::kF32, DeviceRef::cpu(), seed, -1, 1);
  auto w = Tensor::uniform(p.w, DType::kF32, DeviceRef::cpu(), seed + 1, -1, 1);
  auto b = Tensor::uniform({p.w[0]}, DType::kF32, DeviceRef::cpu(), seed + 2, -1, 1);
  auto y = conv3d(x, w, b, p);
  const auto expect = ref_conv3d(p, to_vec(x), to_vec(w), to_vec(b), y.shape());
  EXPECT_TRUE(all_close(to_vec(y), expect, 1e-5, 1e-5)) << "x " << shape_str(p.x) << " w " << shape_str(p.w);
}

std::vector<float> iota(int n) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i + 1);
  return v;
}

}  // namespace

TEST_F(Conv3dTest, CpuMatchesHandComputed) {
  // x = 1..8 as 2x2x2, a 2x2x2 kernel of ones: the sum 36.
  const auto x = floats(iota(8), {1, 1, 2, 2, 2});
  const auto ones = floats(std::vector<float>(8, 1.0f), {1, 1, 2, 2, 2});
  auto y = call_op1("Conv3d", {x, ones});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 1, 1, 1}));
  EXPECT_EQ(to_vec(y), (std::vector<double>{36}));
  // Pads 1 all round with a 3x3x3 kernel of ones: every output sees the whole input.
  const auto ones3 = floats(std::vector<float>(27, 1.0f), {1, 1, 3, 3, 3});
  y = call_op1("Conv3d", {x, ones3}, {{"pads", Ints{1, 1, 1, 1, 1, 1}}});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2, 2}));
  EXPECT_EQ(to_vec(y), std::vector<double>(8, 36.0));
  // x = 1..27 as 3x3x3, kernel x[z][y][x] - x[z+1][y+1][x+1] (a 2x2x2 kernel with 1 and -1 at the
  // corners): 1 - 14 = -13 everywhere; bias 0.5.
  const auto x27 = floats(iota(27), {1, 1, 3, 3, 3});
  auto w = floats({1, 0, 0, 0, 0, 0, 0, -1}, {1, 1, 2, 2, 2});
  y = call_op1("Conv3d", {x27, w, floats({0.5f}, {1})});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2, 2}));
  EXPECT_EQ(to_vec(y), std::vector<double>(8, -12.5));
  // Stride 2 along depth only: output depths 0 only (3 - 2) / 2 + 1 = 1.
  y = call_op1("Conv3d", {x27, w}, {{"strides", Ints{2, 1, 1}}});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 1, 2, 2}));
  // Dilation 2: the kernel spans the corners of the cube, 1 - 27.
  y = call_op1("Conv3d", {x27, w}, {{"dilations", Ints{2, 2, 2}}});
  EXPECT_EQ(to_vec(y), (std::vector<double>{-26}));
  // Asymmetric pads {front, top, left, back, bottom, right}: one in front only adds a depth slice
  // whose upper taps are padding (0 - 5 = -5 ... -14 + 1 = -13 below it).
  y = call_op1("Conv3d", {x27, w}, {{"pads", Ints{1, 0, 0, 0, 0, 0}}});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 3, 2, 2}));
  EXPECT_EQ(to_vec(y)[0], -5);
  EXPECT_EQ(to_vec(y)[4], -13);
}

TEST_F(Conv3dTest, GroupsHandComputed) {
  // Two channels, group 2 (depthwise): channel 0 scaled by 2, channel 1 by -1, bias [1, 0].
  const auto x = floats(iota(4), {1, 2, 1, 1, 2});
  const auto y =
      call_op1("Conv3d", {x, floats({2, -1}, {2, 1, 1, 1, 1}), floats({1, 0}, {2})}, {{"group", std::int64_t{2}}});
  EXPECT_EQ(to_vec(y), (std::vector<double>{3, 5, -3, -4}));
}

TEST_F(Conv3dTest, CpuMatchesReferenceOnAttributeMix) {
  const std::vector<Case> cases{
      {.x = {2, 3, 5, 6, 4}, .w = {4, 3, 3, 3, 2}},
      {.x = {1, 3, 7, 6, 5}, .w = {5, 3, 2, 3, 2}, .strides = {2, 1, 3}, .pads = {1, 0, 2, 0, 1, 1}, .bias = true},
      {.x = {2, 4, 6, 6, 6},
       .w = {6, 2, 3, 3, 3},
       .pads = {2, 2, 2, 2, 2, 2},
       .dilations = {2, 1, 2},
       .group = 2,
       .bias = true},
      {.x = {1, 4, 5, 5, 5}, .w = {4, 1, 3, 3, 3}, .strides = {2, 2, 2}, .pads = {1, 1, 1, 1, 1, 1}, .group = 4},
      {.x = {2, 4, 3, 4, 5}, .w = {6, 4, 1, 1, 1}, .bias = true},                // 1x1x1 direct
      {.x = {1, 4, 3, 4, 5}, .w = {6, 4, 1, 1, 1}, .strides = {1, 2, 2}},        // 1x1x1 strided
      {.x = {1, 2, 2, 3, 3}, .w = {2, 2, 3, 4, 4}, .pads = {2, 3, 3, 2, 3, 3}},  // taps wholly in the padding
      // K = 64·27 = 1728 rows of 32x32 columns: two output depth slices per vol2col chunk, three slices.
      {.x = {1, 64, 5, 34, 34}, .w = {2, 64, 3, 3, 3}, .bias = true},
      // (1728 + 8) x 1024 values per image: two images per GEMM, then the third alone.
      {.x = {3, 64, 4, 16, 16}, .w = {8, 64, 3, 3, 3}, .pads = {1, 1, 1, 1, 1, 1}, .bias = true},
  };
  std::uint64_t seed = 300;
  for (const auto& c : cases) check_against_reference(c, seed += 10);
}

TEST_F(Conv3dTest, NpuMatchesCpuKeptAndForceFp16) {
  const Case p{.x = {2, 4, 5, 6, 6},
               .w = {6, 2, 3, 3, 3},
               .strides = {1, 2, 1},
               .pads = {1, 1, 1, 1, 1, 1},
               .group = 2,
               .bias = true};
  // f16 and force_fp16: one rounding of the output plus an atol scaled by the accumulation length.
  const Tolerance f16_tol{1e-3, 1e-5 * 2 * 27};
  for (DType t : {DType::kF32, DType::kF16}) {
    auto x = Tensor::uniform(p.x, t, DeviceRef::cpu(), 7, -1, 1);
    auto w = Tensor::uniform(p.w, t, DeviceRef::cpu(), 8, -1, 1);
    auto b = Tensor::uniform({p.w[0]}, t, DeviceRef::cpu(), 9, -1, 1);
    const auto golden = conv3d(x, w, b, p);
    const auto npu = on_npu({x, w, b});
    const auto out = conv3d(npu[0], npu[1], npu[2], p);
    EXPECT_EQ(out.dtype(), t);
    ASSERT_EQ(out.shape(), golden.shape());
    if (t == DType::kF32) {
      EXPECT_EQ(bytes_of(out), bytes_of(golden)) << "must_keep_origin_dtype: the same sgemm";
    } else {
      EXPECT_TRUE(all_close(to_vec(out), to_vec(golden), f16_tol.rtol, f16_tol.atol));
    }
  }
  // force_fp16: the f32 operands reach the cube rounded to f16; still f32 out, near the f32 golden.
  auto x = Tensor::uniform(p.x, DType::kF32, DeviceRef::cpu(), 7, -1, 1);
  auto w = Tensor::uniform(p.w, DType::kF32, DeviceRef::cpu(), 8, -1, 1);
  auto b = Tensor::uniform({p.w[0]}, DType::kF32, DeviceRef::cpu(), 9, -1, 1);
  const auto golden = to_vec(conv3d(x, w, b, p));
  Runtime::configure({.precision_mode = PrecisionMode::kForceFp16});
  const auto npu = on_npu({x, w, b});
  const auto out = conv3d(npu[0], npu[1], npu[2], p);
  EXPECT_EQ(out.dtype(), DType::kF32);
  EXPECT_TRUE(all_close(to_vec(out), golden, 2e-3, 4e-3));
  EXPECT_FALSE(all_close(to_vec(out), golden, 0, 0)) << "the inputs were rounded to f16";
}

TEST_F(Conv3dTest, CostDescribesTheVol2colGemm) {
  const OpSchema& schema = OpRegistry::instance().schema("Conv3d");
  const std::vector<TensorMeta> in{{{2, 8, 4, 10, 10}, DType::kF16}, {{12, 4, 3, 3, 3}, DType::kF16}};
  const Attrs attrs{{"pads", Ints{1, 1, 1, 1, 1, 1}}, {"group", std::int64_t{2}}};
  const auto out = schema.infer(in, attrs);
  ASSERT_EQ(out[0].shape, (Shape{2, 12, 4, 10, 10}));
  const KernelCost c = schema.cost(in, out, attrs);
  EXPECT_EQ(c.unit, ComputeUnit::kCube);
  EXPECT_EQ(c.m, 2 * 4 * 10 * 10);
  EXPECT_EQ(c.n, 6);
  EXPECT_EQ(c.k, 4 * 27);
  EXPECT_EQ(c.batch, 2);
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 2 * 800 * 6 * 108);
}

TEST_F(Conv3dTest, BadShapesAndAttributesAreInvalidArgument) {
  const auto x = Tensor::zeros({1, 4, 5, 5, 5}, DType::kF32);
  const auto w = Tensor::zeros({6, 4, 3, 3, 3}, DType::kF32);
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("Conv3d", {Tensor::zeros({1, 4, 5, 5}, DType::kF32), w});
                       }),
                       {"Conv3d", "NCDHW", "[1, 4, 5, 5]"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("Conv3d", {x, Tensor::zeros({6, 3, 3, 3, 3}, DType::kF32)});
                       }),
                       {"Conv3d", "group 1 does not fit"}));
  EXPECT_THROW(call_op1("Conv3d", {x, w}, {{"group", std::int64_t{2}}}), InvalidArgument);
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("Conv3d", {x, w, Tensor::zeros({5}, DType::kF32)});
                       }),
                       {"Conv3d", "bias must be [6]"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("Conv3d", {x, Tensor::zeros({6, 4, 7, 3, 3}, DType::kF32)});
                       }),
                       {"Conv3d", "does not fit input"}));
  EXPECT_THROW(call_op1("Conv3d", {x, w}, {{"pads", Ints{0, 0, 0, 0}}}), InvalidArgument);
  EXPECT_THROW(call_op1("Conv3d", {x, w}, {{"strides", Ints{1, 0, 1}}}), InvalidArgument);
  EXPECT_THROW(call_op1("Conv3d", {x, w}, {{"kernel_shape", Ints{3, 3}}}), InvalidArgument);
  EXPECT_THROW(call_op1("Conv3d", {x, Tensor::zeros({6, 4, 3, 3, 3}, DType::kF16)}), InvalidArgument);
  EXPECT_THROW(
      call_op1("Conv3d", {Tensor::zeros({1, 4, 5, 5, 5}, DType::kI32), Tensor::zeros({6, 4, 3, 3, 3}, DType::kI32)}),
      InvalidArgument);
}

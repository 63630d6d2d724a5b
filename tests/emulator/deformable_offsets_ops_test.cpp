// DeformableOffsets and DeformableOffsetsGrad: values from torchvision 0.14's CPU deform_conv2d and its
// backward (the samples read out through a one-hot weight with groups = C; with and without a mask,
// deformable groups, stride, padding, dilation, offsets pointing off the map, integer offsets landing
// on pixels and on -1 / H), the adjoint of the sampling, an absent mask, NPU vs CPU in f32 and f16,
// and the errors for bad inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "emulator/ext_op_test_util.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

using DeformableOffsetsTest = OpTest;

// ((i * mul) % mod) * scale + shift: inputs exact in f32 (and f16) that the pasted values were made from.
std::vector<float> pattern(std::int64_t n, std::int64_t mul, std::int64_t mod, float scale, float shift) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    v[static_cast<std::size_t>(i)] = static_cast<float>((i * mul) % mod) * scale + shift;
  return v;
}

Attrs deform_attrs(const I64s& ksize, const I64s& strides, const I64s& pads, const I64s& dilations,
                   std::int64_t groups) {
  return {
      {"ksize", ksize}, {"strides", strides}, {"pads", pads}, {"dilations", dilations}, {"deformable_groups", groups}};
}

// Generated once with /usr/bin/python3 (torch 1.13, torchvision 0.14, float64) from the pattern
// inputs below: x = pattern(5, 9, 1, -4), offsets = pattern(37, 23, 0.1875, -2.03125) (OnPixels:
// pattern(37, 5, 1, -2)), mask = pattern(7, 5, 0.1875, 0.25), dy = pattern(11, 7, 1, -3); Y is
// deform_conv2d's columns, the others torchvision's gradients for that dy.
// clang-format off
// Modulated: N=1 C=2 H=3 W=4 k=2x2 stride=(2, 1) pad=(1, 1) dil=(1, 1) dg=2 mask=True out=2x5
const Doubles kModulatedY = {
    0, 0, 0.3131103515625, 0.80078125, 0, 0, 0.1256103515625, 0, 0, 0, 0, -0.1484375, 0, 0, -1.3125, 1.3623046875, 0,
    0.24993896484375, 0, 0.276123046875, 0, -0.2548828125, -1.2469482421875, -0.76904296875, -1.46875, -0.21875, 0,
    -0.076904296875, 1.82415771484375, 0, -0.00537109375, -0.4638671875, 0, -1.30859375, 0.3427734375, 0, 0.73828125,
    -0.25164794921875, 0, -1.00848388671875, 0.1513671875, -0.449951171875, 0, 0.0006103515625, 0, 0, 0.059814453125,
    0, 0, 0, 0, 0, -0.4718017578125, 0.99609375, 0.01171875, 1.79296875, 0, 0, -0.4522705078125, 0, -0.072509765625,
    0, 1.549072265625, -1.2109375, 0, -0.86328125, 0.314453125, 0, 1.532958984375, -0.0079345703125, 0,
    0.391845703125, 0.01220703125, 0, 1.0673828125, 0.0302734375, 0, 0.02520751953125, 0.77362060546875, 0
};
const Doubles kModulatedDx = {
    1.1470947265625, -0.29608154296875, -1.723876953125, 0.63092041015625, 1.2933349609375, 0.31549072265625,
    -1.35760498046875, -1.17364501953125, 0.0546875, 0.6439208984375, 1.88519287109375, -0.714111328125,
    0.526611328125, -0.58123779296875, 0.98040771484375, -0.8272705078125, -0.140869140625, -0.36968994140625,
    -0.95526123046875, 0.1102294921875, -0.1845703125, -0.4888916015625, 1.5152587890625, 1.41534423828125
};
const Doubles kModulatedDoff = {
    0, -1.0546875, 0, 0, 0, 0, -3.49609375, 4, 0, 10.130859375, 0, -3.7109375, 0, 0, 0, 0, 1.89453125, 10, 0,
    9.216796875, 0, 2.5, 0, 0, 0, 0.84375, -3.28125, -2, 0, 0, 0, 6.25, 0, 0, 0, 2.71875, 2.34375, -5, 0, 0, 0, 0, -6,
    0, 0, -0.03125, 0, 0, 0.875, 0, 0, 0, 12, 0, 0, 0.34375, 0, 0, -1.75, 0, -0.5, 0, -3.28125, 1.06640625,
    -0.9140625, 1.5625, 3.75, 0, 5.93359375, 1.041015625, -1.25, 0, -2.90625, 2.05078125, -8.8359375, -1.1875, 9.375,
    0, -0.51953125, -3.935546875, 0.46875, 0, 0, -0.2734375, 0, -0.0859375, 0, 0, 1.75, 6.3984375, -2.90625, 0, 0,
    0.3828125, 0, -1.0546875, 0, 0, 4.375, -7.0078125, 0, 0.01953125, 0, 0, 0, 0, -3.75, 3.25, 0, 0, 0, 0.09765625, 0,
    0, 0, 0, 7.5, 4.25, 0, 0, 0, 0.7421875, 0.375, 0, -1.9296875, 0, 0.78125, 1.09375, 0, -0.990234375, 0, -2.5390625,
    -1.125, 0, -1.5234375, 0, 0.15625, 1.46875, 0, -1.904296875, 0, -1.25, 0, 0, 0, -0.8203125, 0, -0.09375,
    5.865234375, 0, 0, -3.125, 0, 0, 0, 0.8359375, 0, 14.53125, -2.501953125, 0
};
const Doubles kModulatedDmask = {
    0, -1.001953125, 0, 0, 0, 0, -1.9951171875, -2.9375, 0, -6.7353515625, 0, 2.5625, 0, 0, 0, 3.05859375, 2.4609375,
    0.21875, 0, 0, 0, 0, 3.9375, 0, 0, 0.04296875, 0, 0, 1.6875, 0, 0.59375, 0, 1.3623046875, 1.142578125, 1.01953125,
    -3.7109375, -6.28125, 0, 1.150390625, 1.2412109375, 1.81640625, 0, 0, -0.13671875, 0, 0.2900390625, 0, 0, 1.4375,
    5.66015625, 0, 0.0009765625, 0, 0, 0, 0, 5.8125, 1.7265625, 0, 0, 0, -1.509765625, 0.03515625, 0, 1.11328125, 0,
    -0.0390625, -1.0673828125, 0, 0.9521484375, 0, -1.59375, 0, 0, 0, 1.5673828125, 0, 0.0908203125, -0.1728515625, 0
};
// Plain: N=2 C=1 H=4 W=4 k=2x2 stride=(1, 1) pad=(0, 0) dil=(2, 1) dg=1 mask=False out=2x3
const Doubles kPlainY = {
    0, 0.509765625, -2.34375, -0.4697265625, 0, -1.4375, 0.111328125, 0.0029296875, 2.40625, -2.4375, 1.34765625, 0,
    0.9375, -0.6806640625, -0.794921875, -0.40625, 0.2880859375, 1.78125, 0, 0, -0.6064453125, 0.908203125,
    -0.1298828125, 0, 0, 1.7744140625, 2.9375, 0, 2.21484375, 0.6708984375, 0.41015625, -1.21875, -0.451171875,
    0.2373046875, 1.15625, 2.78125, 0.01953125, 0, -0.03125, -0.33984375, 0.111328125, -0.8125, 0.0615234375, 0,
    -3.4375, -1.55859375, 0, 0
};
const Doubles kPlainDx = {
    -0.8642578125, 1.6123046875, 1.701171875, 0.01953125, -1.9169921875, 0.9814453125, 0.837890625, 0.7275390625,
    -0.62109375, -0.7890625, 1.6298828125, 0.736328125, 0.05859375, -0.220703125, 0.9580078125, 0.029296875,
    -2.2177734375, -0.71875, 0.615234375, 0.5771484375, 0.0537109375, -0.05859375, 1.03125, 0.9453125, 0.7890625,
    0.62109375, -0.06640625, -1.5400390625, -0.9814453125, 1.9169921875, 1.275390625, -0.7080078125
};
const Doubles kPlainDoff = {
    0, -4, 0, 6, -2.0625, -3.6875, 0, -10, 0, -12, 6.9375, -1.5625, 1.8125, -3.3125, 6, 0, 2, 4, -0.5625, -6.3125,
    -12, 0, 5, 10, 0, 2, -5.75, 0, 0, 0.59375, 0, 5, -3.75, 0, 0, 1.09375, 0.09375, -4, 0, 0, -5.8125, 0, -1.40625, 8,
    0, 0, -2.8125, 0, 0, 6, -7.875, 0.125, 4, 0.5625, 0, -12, 10.125, -0.625, 10, -3.5625, 5.03125, 0, -3.90625, 0,
    -0.375, 0, -2.46875, 0, 3.59375, 0, 3.625, 0, 1.75, -0.6875, 0, 0.84375, -4, 0, 3.75, 1.3125, 0, -0.65625, 8, 0,
    4, -0.84375, -6, 0, 5.25, 0, 10, 12.65625, -15, 0, -4.75, 0
};
// OnPixels: integer offsets; N=1 C=1 H=3 W=3 k=2x2 stride=1 pad=1 dil=1 dg=1 mask=True out=4x4
const Doubles kOnPixelsY = {
    0, 0, 0, 0, 2, -1.75, 0, 0, 0, -1.3125, 0, -0.8125, 0, 0, 1, -1.25, 0, -0.75, 0, -0.625, 0, 0, 4, -0.875, -2.5, 0,
    0, 0, 0, 0, 0, 0, -1.75, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1.25, 1, 0, 0, -1.3125, 0, 0, 0, -0.875, 0.8125, 0, 0, -0.75,
    0, 0, 1, 0, 0, 0, 3, 0, 0
};
const Doubles kOnPixelsDx = {
    2.125, -0.625, -0.0625, -1, -1.6875, 3, 1.0625, 0.5, -0.625
};
const Doubles kOnPixelsDoff = {
    0, 3.75, 3, 0, 0, 0, 0, -4, -2.625, 0, 0.25, 0, 0, 2.625, 0, 4.5, 0, 0, 4, 0, 0, 0, 0, -4, -2.1875, 0, 0, 0, 0,
    2.1875, 0, 2.25, 0, 0, 7.875, 0, 3, 1.875, 0, -5.25, -9.75, 0, 0, 0, 0, 4.875, 0, 0, 1.25, 0, 6.5625, 0, 1.5,
    9.375, 0, -4.375, 0, 0, 0, 0, 0, 6.5, 0, 0, 0, 0, 0, 3, 7.5, 0, -1.3125, 0, 0, -11.25, 0, -2.625, 0, 0, 0, 0, 0,
    0, 0, 3, 6.25, 0, 0, 0, 0, -9.375, 0, -1.3125, 0, 0, 0, 0, -5.25, -0.8125, 0, 3.75, 4, 0, 0, 0, 0, -3, 0, 0, -1,
    0, -9, 0, -2.625, -4.0625, 0, 3.125, 0, 0, 0, 0, 0, -4, 0, 0, -1, 0, -9, 0
};
const Doubles kOnPixelsDmask = {
    0, 0, -2, 0, 0, 0, 0, 4, 4, 0, 0, 0, 0, -2, 0, -9, 0, 0, -12, 0, -6, -3, 0, 4, 0, 0, 0, 0, 0, -2, 0, 0, 0, 0, 0,
    -12, -8, 0, 0, 0, 0, 6, 0, 3, 0, 0, 0, 0, 6, 1, 0, -2, 0, 0, 0, 0, 0, 1, 0, 0, 4, 0, 9, 0
};
// clang-format on

struct Case {
  Tensor x, off, mask, dy;
  Attrs attrs;
};

// The inputs of one pasted case (mask left undefined when `modulated` is false).
Case make_case(I64s x_shape, I64s off_shape, I64s y_shape, const Attrs& attrs, bool modulated, bool on_pixels,
               DType t = DType::kF32) {
  auto numel = [](const I64s& s) {
    std::int64_t n = 1;
    for (auto d : s) n *= d;
    return n;
  };
  Case c;
  c.attrs = attrs;
  c.x = floats(pattern(numel(x_shape), 5, 9, 1, -4), x_shape, t);
  c.off = floats(
      on_pixels ? pattern(numel(off_shape), 37, 5, 1, -2) : pattern(numel(off_shape), 37, 23, 0.1875f, -2.03125f),
      off_shape, t);
  if (modulated) {
    I64s mask_shape = off_shape;
    mask_shape[1] /= 2;
    c.mask = floats(pattern(numel(mask_shape), 7, 5, 0.1875f, 0.25f), mask_shape, t);
  }
  c.dy = floats(pattern(numel(y_shape), 11, 7, 1, -3), y_shape, t);
  return c;
}

std::vector<Tensor> fwd_inputs(const Case& c) {
  return c.mask.defined() ? std::vector<Tensor>{c.x, c.off, c.mask} : std::vector<Tensor>{c.x, c.off};
}
std::vector<Tensor> grad_inputs(const Case& c) {
  return c.mask.defined() ? std::vector<Tensor>{c.dy, c.x, c.off, c.mask} : std::vector<Tensor>{c.dy, c.x, c.off};
}

void expect_both(const std::vector<Tensor>& cpu, const std::vector<Tensor>& npu, std::size_t i, const Doubles& want,
                 const char* what) {
  ASSERT_GT(cpu.size(), i) << what;
  EXPECT_TRUE(all_close(to_vec(cpu[i]), want, 1e-12, 1e-12)) << what << " cpu";
  EXPECT_TRUE(all_close(to_vec(npu[i]), want, 1e-5, 1e-5)) << what << " npu";
}

void expect_case(const Case& c, const Doubles& y, const Doubles& dx, const Doubles& doff, const Doubles* dmask) {
  const BothBackends f = run_both("DeformableOffsets", fwd_inputs(c), c.attrs);
  expect_both(f.cpu, f.npu, 0, y, "y");
  const BothBackends g = run_both("DeformableOffsetsGrad", grad_inputs(c), c.attrs);
  ASSERT_EQ(g.cpu.size(), dmask != nullptr ? 3u : 2u);
  expect_both(g.cpu, g.npu, 0, dx, "dx");
  expect_both(g.cpu, g.npu, 1, doff, "doffsets");
  if (dmask != nullptr) expect_both(g.cpu, g.npu, 2, *dmask, "dmask");
}

}  // namespace

TEST_F(DeformableOffsetsTest, MatchesTorchvisionWithMaskAndDeformableGroups) {
  const Case c = make_case({1, 2, 3, 4}, {1, 16, 2, 5}, {1, 2, 4, 10},
                           deform_attrs({2, 2}, {2, 1}, {1, 1, 1, 1}, {1, 1}, 2), true, false);
  expect_case(c, kModulatedY, kModulatedDx, kModulatedDoff, &kModulatedDmask);
}

TEST_F(DeformableOffsetsTest, MatchesTorchvisionWithoutMaskAndDilation) {
  const Case c = make_case({2, 1, 4, 4}, {2, 8, 2, 3}, {2, 1, 4, 6},
                           deform_attrs({2, 2}, {1, 1}, {0, 0, 0, 0}, {2, 1}, 1), false, false);
  expect_case(c, kPlainY, kPlainDx, kPlainDoff, nullptr);
}

TEST_F(DeformableOffsetsTest, MatchesTorchvisionOnPixelsAndMapEdges) {
  const Case c = make_case({1, 1, 3, 3}, {1, 8, 4, 4}, {1, 1, 8, 8},
                           deform_attrs({2, 2}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1), true, true);
  expect_case(c, kOnPixelsY, kOnPixelsDx, kOnPixelsDoff, &kOnPixelsDmask);
}

// A mask given as an absent tensor is no mask (DCN v1), and a mask of ones gives the same samples.
TEST_F(DeformableOffsetsTest, AbsentMaskIsNoMask) {
  const Case c = make_case({2, 1, 4, 4}, {2, 8, 2, 3}, {2, 1, 4, 6},
                           deform_attrs({2, 2}, {1, 1}, {0, 0, 0, 0}, {2, 1}, 1), false, false);
  const Tensor ones = floats(std::vector<float>(2 * 4 * 2 * 3, 1.0f), {2, 4, 2, 3});
  const std::vector<double> plain = op_values("DeformableOffsets", {c.x, c.off}, c.attrs);
  EXPECT_EQ(op_values("DeformableOffsets", {c.x, c.off, Tensor()}, c.attrs), plain);
  EXPECT_EQ(op_values("DeformableOffsets", {c.x, c.off, ones}, c.attrs), plain);
  const std::vector<Tensor> g = call_op("DeformableOffsetsGrad", {c.dy, c.x, c.off, Tensor()}, c.attrs);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_TRUE(all_close(to_vec(g[0]), kPlainDx, 1e-12, 1e-12));
  EXPECT_TRUE(all_close(to_vec(g[1]), kPlainDoff, 1e-12, 1e-12));
}

// <DeformableOffsets(x), dy> = <x, dx>: the sampling is linear in x and dx spreads over exactly its taps.
TEST_F(DeformableOffsetsTest, InputGradientIsTheAdjoint) {
  const Attrs a = deform_attrs({3, 2}, {2, 1}, {1, 0, 2, 1}, {1, 2}, 2);
  // x [2, 4, 5, 6]: out_h = (5 + 3 - 2 - 1) / 2 + 1 = 3, out_w = (6 + 1 - 2 - 1) / 1 + 1 = 5.
  const Tensor x = floats(pattern(240, 29, 13, 0.5f, -3), {2, 4, 5, 6}, DType::kF64);
  const Tensor off = floats(pattern(2 * 24 * 15, 37, 23, 0.3f, -3.1f), {2, 24, 3, 5}, DType::kF64);
  const Tensor mask = floats(pattern(2 * 12 * 15, 7, 5, 0.2f, 0.1f), {2, 12, 3, 5}, DType::kF64);
  const std::vector<float> dyv = pattern(2 * 4 * 9 * 10, 7, 11, 1, -5);
  const Tensor dy = floats(dyv, {2, 4, 9, 10}, DType::kF64);
  const std::vector<double> y = op_values("DeformableOffsets", {x, off, mask}, a);
  const std::vector<Tensor> g = call_op("DeformableOffsetsGrad", {dy, x, off, mask}, a);
  const std::vector<double> xv = to_vec(x), dx = to_vec(g[0]);
  double lhs = 0, rhs = 0;
  for (std::size_t i = 0; i < y.size(); ++i) lhs += y[i] * static_cast<double>(dyv[i]);
  for (std::size_t i = 0; i < dx.size(); ++i) rhs += dx[i] * xv[i];
  EXPECT_NEAR(lhs, rhs, 1e-9);
}

TEST_F(DeformableOffsetsTest, NpuMatchesCpu) {
  const Attrs a = deform_attrs({3, 3}, {1, 2}, {1, 1, 1, 1}, {2, 1}, 2);
  // x [2, 4, 7, 6]: out_h = (7 + 2 - 4 - 1) + 1 = 5, out_w = (6 + 2 - 2 - 1) / 2 + 1 = 3.
  for (DType t : {DType::kF32, DType::kF16}) {
    const Tensor x = floats(pattern(336, 29, 13, 0.5f, -3), {2, 4, 7, 6}, t);
    const Tensor off = floats(pattern(2 * 36 * 15, 37, 23, 0.3f, -3.1f), {2, 36, 5, 3}, t);
    const Tensor mask = floats(pattern(2 * 18 * 15, 7, 5, 0.2f, 0.1f), {2, 18, 5, 3}, t);
    const Tensor dy = floats(pattern(2 * 4 * 15 * 9, 7, 11, 0.25f, -1), {2, 4, 15, 9}, t);
    const double tol = t == DType::kF16 ? 1e-2 : 1e-5;
    EXPECT_TRUE(npu_close_to_cpu("DeformableOffsets", {x, off, mask}, a, tol, tol)) << dtype_name(t);
    EXPECT_TRUE(npu_close_to_cpu("DeformableOffsets", {x, off}, a, tol, tol)) << dtype_name(t);
    for (bool modulated : {true, false}) {
      const BothBackends r =
          run_both("DeformableOffsetsGrad",
                   modulated ? std::vector<Tensor>{dy, x, off, mask} : std::vector<Tensor>{dy, x, off}, a);
      ASSERT_EQ(r.npu.size(), modulated ? 3u : 2u);
      for (std::size_t i = 0; i < r.npu.size(); ++i) {
        EXPECT_EQ(r.npu[i].dtype(), t);
        EXPECT_TRUE(all_close(to_vec(r.npu[i]), to_vec(r.cpu[i]), tol, 4 * tol))
            << dtype_name(t) << " output " << i << " modulated " << modulated;
      }
    }
  }
}

// NaN offsets sample nothing (0) and add nothing; inf offsets are off the map.
TEST_F(DeformableOffsetsTest, NonFiniteOffsetsAreOffTheMap) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const Attrs a = deform_attrs({1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1);
  const Tensor x = floats({1, 2, 3, 4}, {1, 1, 2, 2}), off = floats({nan, 0, inf, 0, 0, -inf, 0.5f, 0}, {1, 2, 2, 2});
  for (const auto& out :
       {run_both("DeformableOffsets", {x, off}, a).cpu, run_both("DeformableOffsets", {x, off}, a).npu}) {
    EXPECT_TRUE(all_close(to_vec(out[0]), {0, 0, 0, 4}, 0, 0));
  }
  const BothBackends g = run_both("DeformableOffsetsGrad", {floats({1, 1, 1, 1}, {1, 1, 2, 2}), x, off}, a);
  for (const auto& out : {g.cpu, g.npu}) {
    EXPECT_TRUE(all_close(to_vec(out[0]), {0, 0, 0, 1}, 0, 0));
    // The last pixel's neighbours below and right are off the map (0): torchvision's coordinate weight.
    EXPECT_TRUE(all_close(to_vec(out[1]), {0, 0, 0, -4, 0, 0, 0, -4}, 0, 0));
  }
}

TEST_F(DeformableOffsetsTest, EmptyBatch) {
  const Attrs a = deform_attrs({2, 2}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1);
  const Tensor y = call_op1("DeformableOffsets", {floats({}, {0, 2, 3, 3}), floats({}, {0, 8, 2, 2})}, a);
  EXPECT_EQ(y.shape(), (Shape{0, 2, 4, 4}));
  const std::vector<Tensor> g = call_op(
      "DeformableOffsetsGrad", {floats({}, {0, 2, 4, 4}), floats({}, {0, 2, 3, 3}), floats({}, {0, 8, 2, 2})}, a);
  EXPECT_EQ(g[0].shape(), (Shape{0, 2, 3, 3}));
  EXPECT_EQ(g[1].shape(), (Shape{0, 8, 2, 2}));
}

TEST_F(DeformableOffsetsTest, BadInputsNameTheProblem) {
  const Attrs a = deform_attrs({2, 2}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1);
  const Tensor x = floats(pattern(18, 1, 18, 1, 0), {1, 2, 3, 3}), off = floats(pattern(32, 1, 7, 1, 0), {1, 8, 2, 2});
  auto fwd = [&](std::vector<Tensor> in, const Attrs& at) {
    return error_of([&] { call_op1("DeformableOffsets", in, at); });
  };
  EXPECT_TRUE(mentions(fwd({x, off}, {}), {"DeformableOffsets", "ksize"}));
  EXPECT_TRUE(mentions(fwd({x, floats(pattern(24, 1, 7, 1, 0), {1, 6, 2, 2})}, a),
                       {"offsets", "[1, 8, 2, 2]", "[1, 6, 2, 2]"}));
  EXPECT_TRUE(mentions(fwd({x, floats(pattern(32, 1, 7, 1, 0), {1, 8, 1, 4})}, a), {"offsets", "[1, 8, 2, 2]"}));
  EXPECT_TRUE(mentions(fwd({x, off, floats(pattern(8, 1, 7, 1, 0), {1, 2, 2, 2})}, a), {"mask", "[1, 4, 2, 2]"}));
  EXPECT_TRUE(
      mentions(fwd({x, off, floats(pattern(16, 1, 7, 1, 0), {1, 4, 2, 2}, DType::kF16)}, a), {"mask", "dtype"}));
  EXPECT_TRUE(mentions(fwd({x, floats(pattern(32, 1, 7, 1, 0), {1, 8, 2, 2}, DType::kF16)}, a), {"offsets", "dtype"}));
  EXPECT_TRUE(mentions(fwd({ints(I64s(18, 1), {1, 2, 3, 3}), off}, a), {"DeformableOffsets"}));
  EXPECT_TRUE(mentions(fwd({floats(pattern(18, 1, 9, 1, 0), {2, 3, 3}), off}, a), {"x", "4-D"}));
  EXPECT_TRUE(mentions(fwd({x, off}, deform_attrs({2, 2}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 4)),
                       {"deformable_groups", "multiple"}));
  EXPECT_TRUE(mentions(fwd({x, off}, deform_attrs({2, 2}, {0, 1}, {0, 0, 0, 0}, {1, 1}, 1)), {"strides"}));
  EXPECT_TRUE(mentions(fwd({x, off}, deform_attrs({2}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1)), {"ksize", "2 values"}));
  EXPECT_TRUE(
      mentions(fwd({x, off}, deform_attrs({2, 2}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 0)), {"deformable_groups", ">= 1"}));
  // The gradient checks dy against the forward's output shape.
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op("DeformableOffsetsGrad", {floats(pattern(18, 1, 7, 1, 0), {1, 2, 3, 3}), x, off}, a);
                       }),
                       {"DeformableOffsetsGrad", "dy", "[1, 2, 4, 4]"}));
  EXPECT_TRUE(mentions(
      error_of([&] {
        call_op("DeformableOffsetsGrad", {floats(pattern(32, 1, 7, 1, 0), {1, 2, 4, 4}, DType::kF16), x, off}, a);
      }),
      {"dy", "dtype"}));
}

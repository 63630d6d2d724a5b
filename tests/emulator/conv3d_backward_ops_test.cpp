// Conv3DBackpropInput / Conv3DBackpropFilter: CPU golden vs the adjoint of the 3-D convolution's definition
// (strides, pads, dilations, groups, 1x1x1, several depth chunks), NPU vs CPU in f32 and f16, and bad shapes.
#include <gtest/gtest.h>

#include "emulator/op_test_util.h"
#include "npuscope/emulator/errors.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

using Conv3dBackwardTest = OpTest;
using Ints = std::vector<std::int64_t>;

struct Case {
  Shape x, w;
  Ints strides{1, 1, 1}, pads{0, 0, 0, 0, 0, 0}, dilations{1, 1, 1};
  std::int64_t group = 1;
};

Attrs attrs_of(const Case& p) {
  return {{"strides", p.strides}, {"pads", p.pads}, {"dilations", p.dilations}, {"group", p.group}};
}

Attrs backward_attrs(const Case& p, const char* size_name, const Shape& size) {
  Attrs a = attrs_of(p);
  a.set(size_name, size);
  return a;
}

// dx and dw by the definition: each product x · w of the convolution adds dy·w to dx and dy·x to dw.
void reference(const Case& p, const std::vector<double>& x, const std::vector<double>& w, const std::vector<double>& dy,
               const Shape& out, std::vector<double>& dx, std::vector<double>& dw) {
  dx.assign(x.size(), 0.0);
  dw.assign(w.size(), 0.0);
  const std::int64_t c = p.x[1], cg = p.w[1], per_group = out[1] / p.group;
  const std::int64_t in[3] = {p.x[2], p.x[3], p.x[4]}, k[3] = {p.w[2], p.w[3], p.w[4]};
  std::size_t yi = 0;
  for (std::int64_t i = 0; i < out[0]; ++i)
    for (std::int64_t o = 0; o < out[1]; ++o)
      for (std::int64_t z = 0; z < out[2]; ++z)
        for (std::int64_t r = 0; r < out[3]; ++r)
          for (std::int64_t s = 0; s < out[4]; ++s, ++yi)
            for (std::int64_t ci = 0; ci < cg; ++ci)
              for (std::int64_t t = 0; t < k[0]; ++t)
                for (std::int64_t u = 0; u < k[1]; ++u)
                  for (std::int64_t v = 0; v < k[2]; ++v) {
                    const std::int64_t iz = z * p.strides[0] - p.pads[0] + t * p.dilations[0];
                    const std::int64_t ih = r * p.strides[1] - p.pads[1] + u * p.dilations[1];
                    const std::int64_t iw = s * p.strides[2] - p.pads[2] + v * p.dilations[2];
                    if (iz < 0 || iz >= in[0] || ih < 0 || ih >= in[1] || iw < 0 || iw >= in[2]) continue;
                    const std::int64_t cin = (o / per_group) * cg + ci;
                    const auto xi = static_cast<std::size_t>((((i * c + cin) * in[0] + iz) * in[1] + ih) * in[2] + iw);
                    const auto wi = static_cast<std::size_t>((((o * cg + ci) * k[0] + t) * k[1] + u) * k[2] + v);
                    dx[xi] += dy[yi] * w[wi];
                    dw[wi] += dy[yi] * x[xi];
                  }
}

void check(const Case& p, std::uint64_t seed) {
  const Tensor x = Tensor::uniform(p.x, DType::kF32, DeviceRef::cpu(), seed, -1, 1);
  const Tensor w = Tensor::uniform(p.w, DType::kF32, DeviceRef::cpu(), seed + 1, -1, 1);
  const Tensor y = call_op1("Conv3d", {x, w}, attrs_of(p));
  const Tensor dy = Tensor::uniform(y.shape(), DType::kF32, DeviceRef::cpu(), seed + 2, -1, 1);
  std::vector<double> dx, dw;
  reference(p, to_vec(x), to_vec(w), to_vec(dy), y.shape(), dx, dw);
  const Tensor gx = call_op1("Conv3DBackpropInput", {dy, w}, backward_attrs(p, "input_size", p.x));
  const Tensor gw = call_op1("Conv3DBackpropFilter", {x, dy}, backward_attrs(p, "filter_size", p.w));
  EXPECT_EQ(gx.shape(), p.x);
  EXPECT_EQ(gw.shape(), p.w);
  EXPECT_TRUE(all_close(to_vec(gx), dx, 1e-5, 1e-5)) << shape_str(p.x) << " " << shape_str(p.w);
  EXPECT_TRUE(all_close(to_vec(gw), dw, 1e-5, 1e-4)) << shape_str(p.x) << " " << shape_str(p.w);
  // NPU (f32 cube under must_keep_origin_dtype) agrees with the definition too.
  const Tensor nx = call_op1("Conv3DBackpropInput", on_npu({dy, w}), backward_attrs(p, "input_size", p.x));
  const Tensor nw = call_op1("Conv3DBackpropFilter", on_npu({x, dy}), backward_attrs(p, "filter_size", p.w));
  EXPECT_TRUE(all_close(to_vec(nx), dx, 1e-5, 1e-5));
  EXPECT_TRUE(all_close(to_vec(nw), dw, 1e-5, 1e-4));
}

}  // namespace

TEST_F(Conv3dBackwardTest, MatchesTheDefinition) {
  check({.x = {2, 3, 4, 5, 6}, .w = {4, 3, 3, 3, 3}, .pads = {1, 1, 1, 1, 1, 1}}, 10);  // R3D's 3x3x3
  check({.x = {1, 3, 4, 9, 9}, .w = {4, 3, 3, 7, 7}, .strides = {1, 2, 2}, .pads = {1, 3, 3, 1, 3, 3}}, 20);  // stem
  check({.x = {2, 4, 5, 6, 6},
         .w = {6, 2, 3, 3, 2},
         .strides = {2, 1, 2},
         .pads = {1, 0, 1, 0, 1, 1},
         .dilations = {1, 2, 1},
         .group = 2},
        30);
  check({.x = {2, 4, 3, 4, 5}, .w = {6, 4, 1, 1, 1}}, 40);                                    // 1x1x1 direct
  check({.x = {1, 4, 5, 6, 6}, .w = {4, 1, 3, 3, 3}, .strides = {2, 2, 2}, .group = 4}, 50);  // depthwise, strided
  // K = 64·27 = 1728 rows of 32x32 columns: two output depth slices per vol2col chunk, three slices.
  check({.x = {1, 64, 5, 34, 34}, .w = {2, 64, 3, 3, 3}}, 60);
}

TEST_F(Conv3dBackwardTest, NpuF16MatchesCpu) {
  const Case p{.x = {2, 4, 3, 6, 6}, .w = {8, 4, 3, 3, 3}, .pads = {1, 1, 1, 1, 1, 1}};
  const Tensor x = Tensor::uniform(p.x, DType::kF16, DeviceRef::cpu(), 1, -1, 1);
  const Tensor w = Tensor::uniform(p.w, DType::kF16, DeviceRef::cpu(), 2, -1, 1);
  const Tensor dy = Tensor::uniform({2, 8, 3, 6, 6}, DType::kF16, DeviceRef::cpu(), 3, -1, 1);
  const auto gx = to_vec(call_op1("Conv3DBackpropInput", {dy, w}, backward_attrs(p, "input_size", p.x)));
  const auto gw = to_vec(call_op1("Conv3DBackpropFilter", {x, dy}, backward_attrs(p, "filter_size", p.w)));
  EXPECT_TRUE(all_close(to_vec(call_op1("Conv3DBackpropInput", on_npu({dy, w}), backward_attrs(p, "input_size", p.x))),
                        gx, 1e-3, 1e-3 * 8 * 27));
  EXPECT_TRUE(
      all_close(to_vec(call_op1("Conv3DBackpropFilter", on_npu({x, dy}), backward_attrs(p, "filter_size", p.w))), gw,
                1e-3, 1e-3 * 2 * 108));
}

TEST_F(Conv3dBackwardTest, BadShapesNameTheOpAndTheInput) {
  const Tensor w = Tensor::zeros({4, 3, 3, 3, 3}, DType::kF32), dy = Tensor::zeros({2, 4, 2, 2, 2}, DType::kF32);
  const Tensor x = Tensor::zeros({2, 3, 4, 4, 4}, DType::kF32);
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("Conv3DBackpropInput", {dy, w}, {});
                       }),
                       {"Conv3DBackpropInput", "input_size"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("Conv3DBackpropInput", {dy, w}, {{"input_size", Ints{2, 3, 5, 5, 5}}});
                       }),
                       {"Conv3DBackpropInput", "dy has shape [2, 4, 2, 2, 2]", "[2, 4, 3, 3, 3]"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("Conv3DBackpropFilter", {x, dy}, {{"filter_size", Ints{4, 3, 3, 3}}});
                       }),
                       {"Conv3DBackpropFilter", "filter_size must be 5 sizes"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("Conv3DBackpropFilter", {x, dy}, {{"filter_size", Ints{4, 2, 3, 3, 3}}});
                       }),
                       {"Conv3DBackpropFilter", "group"}));
}

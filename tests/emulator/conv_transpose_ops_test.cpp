// ConvTranspose: CPU golden vs hand-computed values (ONNX's documented examples) and a direct
// scatter reference (1-D, 2-D, 3-D; strides, pads, dilations, groups, output_padding, output_shape,
// auto_pad, bias), NPU vs CPU golden in f32 and f16, bad shapes and attributes, cost.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "emulator/op_test_util.h"
#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/op_registry.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

using ConvTransposeTest = OpTest;
using Ints = std::vector<std::int64_t>;

Tensor conv_t(const Tensor& x, const Tensor& w, const Tensor& b, const Attrs& attrs = {}) {
  return call_op1("ConvTranspose", {x, w, b}, attrs);
}

struct CtCase {
  Shape x, w;
  Attrs attrs;
  Ints pad_begin;  // what the attributes resolve to (the reference needs it)
  std::int64_t group = 1;
  bool bias = false;
};

// The definition: every input pixel scatters its weights, in double.
std::vector<double> ref_conv_t(const CtCase& p, const std::vector<double>& x, const std::vector<double>& w,
                               const std::vector<double>& b, const Shape& out) {
  const std::size_t r = p.x.size() - 2;
  const Ints s = p.attrs.get_ints("strides", Ints(r, 1)), d = p.attrs.get_ints("dilations", Ints(r, 1));
  const std::int64_t c = p.x[1], mg = p.w[1], m = out[1], cg = c / p.group;
  const Shape in_sp(p.x.begin() + 2, p.x.end()), k_sp(p.w.begin() + 2, p.w.end()), out_sp(out.begin() + 2, out.end());
  const std::int64_t in_n = shape_numel(in_sp), k_n = shape_numel(k_sp), out_n = shape_numel(out_sp);
  std::vector<double> y(static_cast<std::size_t>(shape_numel(out)), 0.0);
  for (std::int64_t n = 0; n < out[0]; ++n)
    for (std::int64_t co = 0; co < m; ++co)
      for (std::int64_t j = 0; j < out_n; ++j) y[(n * m + co) * out_n + j] = p.bias ? b[co] : 0.0;
  for (std::int64_t n = 0; n < p.x[0]; ++n)
    for (std::int64_t ci = 0; ci < c; ++ci)
      for (std::int64_t ip = 0; ip < in_n; ++ip)
        for (std::int64_t kp = 0; kp < k_n; ++kp) {
          std::int64_t rem_i = ip, rem_k = kp, op = 0;
          bool inside = true;
          std::vector<std::int64_t> o(r);
          for (std::size_t dd = r; dd-- > 0;) {
            const std::int64_t ii = rem_i % in_sp[dd], kk = rem_k % k_sp[dd];
            rem_i /= in_sp[dd], rem_k /= k_sp[dd];
            o[dd] = ii * s[dd] + kk * d[dd] - p.pad_begin[dd];
            inside = inside && o[dd] >= 0 && o[dd] < out_sp[dd];
          }
          if (!inside) continue;
          for (std::size_t dd = 0; dd < r; ++dd) op = op * out_sp[dd] + o[dd];
          const std::int64_t g = ci / cg;
          for (std::int64_t mo = 0; mo < mg; ++mo) {
            y[(n * m + g * mg + mo) * out_n + op] += x[(n * c + ci) * in_n + ip] * w[(ci * mg + mo) * k_n + kp];
          }
        }
  return y;
}

void check_against_reference(const CtCase& p, const Shape& want_shape, std::uint64_t seed) {
  auto x = Tensor::uniform(p.x, DType::kF64, DeviceRef::cpu(), seed, -1, 1);
  auto w = Tensor::uniform(p.w, DType::kF64, DeviceRef::cpu(), seed + 1, -1, 1);
  auto b = Tensor::uniform({p.w[1] * p.group}, DType::kF64, DeviceRef::cpu(), seed + 2, -1, 1);
  auto y = conv_t(x, w, p.bias ? b : Tensor(), p.attrs);
  ASSERT_EQ(y.shape(), want_shape) << "x " << shape_str(p.x) << " w " << shape_str(p.w);
  const auto expect = ref_conv_t(p, to_vec(x), to_vec(w), to_vec(b), y.shape());
  EXPECT_TRUE(all_close(to_vec(y), expect, 1e-12, 1e-12)) << "x " << shape_str(p.x) << " w " << shape_str(p.w);
}

}  // namespace

TEST_F(ConvTransposeTest, CpuMatchesHandComputed) {
  // 1-D, ones kernel: y[o] = x[o-2] + x[o-1] + x[o] (ONNX's convtranspose_1d example).
  auto y1 = conv_t(floats({0, 1, 2}, {1, 1, 3}), floats({1, 1, 1, 1, 1, 1}, {1, 2, 3}), Tensor());
  EXPECT_EQ(y1.shape(), (Shape{1, 2, 5}));
  EXPECT_EQ(to_vec(y1), (std::vector<double>{0, 1, 3, 3, 2, 0, 1, 3, 3, 2}));
  // 2-D, diagonal kernel [[1, 0], [0, 1]]: x placed at (i, j) and at (i+1, j+1).
  auto x = floats({1, 2, 3, 4}, {1, 1, 2, 2});
  auto w = floats({1, 0, 0, 1}, {1, 1, 2, 2});
  EXPECT_EQ(to_vec(conv_t(x, w, Tensor())), (std::vector<double>{1, 2, 0, 3, 5, 2, 0, 3, 4}));
  // Stride 2: the copies no longer overlap; bias 0.5 everywhere.
  auto y2 = conv_t(x, w, floats({0.5f}, {1}), {{"strides", Ints{2, 2}}});
  EXPECT_EQ(to_vec(y2), (std::vector<double>{1.5, 0.5, 2.5, 0.5, 0.5, 1.5, 0.5, 2.5,  //
                                             3.5, 0.5, 4.5, 0.5, 0.5, 3.5, 0.5, 4.5}));
}

TEST_F(ConvTransposeTest, PadsOutputPaddingAndOutputShape) {
  // ONNX's convtranspose_pads example: x = 0..8 (3x3), ones [1, 2, 3, 3], strides [3, 2], pads [1, 2, 1, 2].
  std::vector<float> xs(9);
  for (int i = 0; i < 9; ++i) xs[static_cast<std::size_t>(i)] = static_cast<float>(i);
  auto x = floats(xs, {1, 1, 3, 3});
  auto w = floats(std::vector<float>(18, 1.0f), {1, 2, 3, 3});
  auto y = conv_t(x, w, Tensor(), {{"strides", Ints{3, 2}}, {"pads", Ints{1, 2, 1, 2}}});
  ASSERT_EQ(y.shape(), (Shape{1, 2, 7, 3}));
  const std::vector<double> plane{1, 1, 3, 1, 1, 3, 7, 4, 9, 7, 4, 9, 7, 4, 9, 13, 7, 15, 13, 7, 15};
  std::vector<double> both(plane);
  both.insert(both.end(), plane.begin(), plane.end());
  EXPECT_EQ(to_vec(y), both);
  // output_shape [10, 8] with strides [3, 2]: the full scatter is 9x7, so total padding is -1 and the
  // extra last row and column are zeros (ONNX's convtranspose_output_shape).
  auto big = conv_t(x, w, Tensor(), {{"strides", Ints{3, 2}}, {"output_shape", Ints{10, 8}}});
  ASSERT_EQ(big.shape(), (Shape{1, 2, 10, 8}));
  const auto v = to_vec(big);
  for (int j = 0; j < 8; ++j) EXPECT_EQ(v[static_cast<std::size_t>(9 * 8 + j)], 0.0);
  EXPECT_EQ(v[0], 0.0);
  EXPECT_EQ(v[static_cast<std::size_t>(8 * 8 + 6)], 8.0);  // last full-scatter pixel: x[2][2] only
  // output_padding [1, 1] gives the same 10x8 shape.
  auto padded = conv_t(x, w, Tensor(), {{"strides", Ints{3, 2}}, {"output_padding", Ints{1, 1}}});
  EXPECT_EQ(to_vec(padded), v);
}

TEST_F(ConvTransposeTest, CpuMatchesReferenceOnAttributeMix) {
  struct Want {
    CtCase c;
    Shape out;
  };
  const std::vector<Want> cases{
      {{.x = {2, 3, 5}, .w = {3, 2, 3}, .attrs = {{"strides", Ints{2}}}, .pad_begin = {0}}, {2, 2, 11}},
      {{.x = {1, 4, 4, 5},
        .w = {4, 3, 3, 2},
        .attrs = {{"strides", Ints{2, 3}}, {"pads", Ints{1, 0, 2, 1}}, {"dilations", Ints{2, 1}}},
        .pad_begin = {1, 0},
        .bias = true},
       {1, 3, 8, 13}},
      {{.x = {2, 4, 3, 3},
        .w = {4, 2, 3, 3},
        .attrs = {{"group", std::int64_t{2}}, {"output_padding", Ints{1, 0}}, {"strides", Ints{2, 2}}},
        .pad_begin = {0, 0},
        .group = 2,
        .bias = true},
       {2, 4, 8, 7}},
      {{.x = {1, 2, 3, 4, 2}, .w = {2, 2, 2, 3, 2}, .attrs = {{"strides", Ints{1, 2, 2}}}, .pad_begin = {0, 0, 0}},
       {1, 2, 4, 9, 4}},
      // SAME_UPPER: output in·stride = 6, total padding 1 -> 0 at the start; SAME_LOWER -> 1.
      {{.x = {1, 1, 3, 3},
        .w = {1, 2, 3, 3},
        .attrs = {{"strides", Ints{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}},
        .pad_begin = {0, 0}},
       {1, 2, 6, 6}},
      {{.x = {1, 1, 3, 3},
        .w = {1, 2, 3, 3},
        .attrs = {{"strides", Ints{2, 2}}, {"auto_pad", std::string("SAME_LOWER")}},
        .pad_begin = {1, 1}},
       {1, 2, 6, 6}},
      // output_shape smaller than the full scatter: total 3 -> begin 2 (NOTSET), end 1.
      {{.x = {1, 2, 4, 4},
        .w = {2, 1, 3, 3},
        .attrs = {{"strides", Ints{2, 2}}, {"output_shape", Ints{6, 7}}},
        .pad_begin = {2, 1}},
       {1, 1, 6, 7}},
  };
  std::uint64_t seed = 40;
  for (const auto& c : cases) check_against_reference(c.c, c.out, seed += 10);
}

TEST_F(ConvTransposeTest, NpuMatchesCpuF32AndF16) {
  const Attrs attrs{{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 0, 0}}, {"group", std::int64_t{2}}};
  for (DType t : {DType::kF32, DType::kF16}) {
    auto x = Tensor::uniform({2, 6, 7, 5}, t, DeviceRef::cpu(), 7, -1, 1);
    auto w = Tensor::uniform({6, 4, 3, 3}, t, DeviceRef::cpu(), 8, -1, 1);
    auto b = Tensor::uniform({8}, t, DeviceRef::cpu(), 9, -1, 1);
    auto npu = on_npu({x, w, b});
    EXPECT_TRUE(cube_close_to_golden(conv_t(npu[0], npu[1], npu[2], attrs), conv_t(x, w, b, attrs), 3 * 3 * 3));
  }
}

TEST_F(ConvTransposeTest, BadShapesAndAttributesAreInvalidArgument) {
  auto x = Tensor::zeros({1, 4, 5, 5}, DType::kF32);
  auto w = Tensor::zeros({4, 2, 3, 3}, DType::kF32);
  EXPECT_NO_THROW(conv_t(x, w, Tensor()));
  EXPECT_THROW(conv_t(Tensor::zeros({4, 5}, DType::kF32), Tensor::zeros({4, 2}, DType::kF32), Tensor()),
               InvalidArgument);                                                                 // no spatial dim
  EXPECT_THROW(conv_t(x, Tensor::zeros({4, 2, 3}, DType::kF32), Tensor()), InvalidArgument);     // rank mismatch
  EXPECT_THROW(conv_t(x, Tensor::zeros({3, 2, 3, 3}, DType::kF32), Tensor()), InvalidArgument);  // W[0] != C
  EXPECT_THROW(conv_t(x, w, Tensor(), {{"group", std::int64_t{3}}}), InvalidArgument);           // 4 % 3
  EXPECT_THROW(conv_t(x, w, Tensor::zeros({3}, DType::kF32)), InvalidArgument);                  // bias != [M]
  EXPECT_THROW(conv_t(x, w, Tensor(), {{"kernel_shape", Ints{2, 2}}}), InvalidArgument);
  EXPECT_THROW(conv_t(x, w, Tensor(), {{"strides", Ints{1}}}), InvalidArgument);
  EXPECT_THROW(conv_t(x, w, Tensor(), {{"strides", Ints{0, 1}}}), InvalidArgument);
  EXPECT_THROW(conv_t(x, w, Tensor(), {{"pads", Ints{1, 1}}}), InvalidArgument);
  EXPECT_THROW(conv_t(x, w, Tensor(), {{"pads", Ints{4, 0, 4, 0}}}), InvalidArgument);  // output <= 0
  EXPECT_THROW(conv_t(x, w, Tensor(), {{"auto_pad", std::string("SAME")}}), InvalidArgument);
  EXPECT_THROW(conv_t(x, w, Tensor(), {{"output_shape", Ints{9}}}), InvalidArgument);
  EXPECT_THROW(conv_t(x, Tensor::zeros({4, 2, 3, 3}, DType::kF16), Tensor()), InvalidArgument);  // dtypes differ
  auto xi = Tensor::zeros({1, 4, 5, 5}, DType::kI32), wi = Tensor::zeros({4, 2, 3, 3}, DType::kI32);
  EXPECT_THROW(conv_t(xi, wi, Tensor()), InvalidArgument);
}

TEST_F(ConvTransposeTest, CostDescribesTheGemm) {
  const OpSchema& schema = OpRegistry::instance().schema("ConvTranspose");
  const std::vector<TensorMeta> in{{{2, 8, 10, 10}, DType::kF16}, {{8, 3, 3, 3}, DType::kF16}};
  const Attrs attrs{{"strides", Ints{2, 2}}, {"group", std::int64_t{2}}};
  const auto out = schema.infer(in, attrs);
  ASSERT_EQ(out[0].shape, (Shape{2, 6, 21, 21}));
  const KernelCost c = schema.cost(in, out, attrs);
  EXPECT_EQ(c.unit, ComputeUnit::kCube);
  EXPECT_EQ(c.m, 2 * 10 * 10);
  EXPECT_EQ(c.n, 3 * 3 * 3);
  EXPECT_EQ(c.k, 4);
  EXPECT_EQ(c.batch, 2);
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 2 * 200 * 27 * 4);
}

// INT64_MAX pads were accepted and gave a negative or wrapped output size; strides and dilations
// times the input overflowed. Now each is an error naming the attribute and the valid range.
TEST_F(ConvTransposeTest, HugePadsStridesAndDilationsAreErrors) {
  auto x = Tensor::zeros({1, 4, 5, 5}, DType::kF32);
  auto w = Tensor::zeros({4, 2, 3, 3}, DType::kF32);
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  for (const char* attr : {"pads", "strides", "dilations", "output_padding"}) {
    const Ints v = std::string(attr) == "pads" ? Ints{max, 0, 0, 0} : Ints{max, 1};
    EXPECT_TRUE(mentions(error_of([&] {
                           conv_t(x, w, Tensor(), {{attr, v}});
                         }),
                         {"ConvTranspose", attr, "9223372036854775807", "1099511627776]"}))
        << attr;
  }
  // In range, but stride * (input - 1) makes a tensor beyond the limit: refused before allocating.
  const std::int64_t p40 = std::int64_t{1} << 40;
  EXPECT_TRUE(mentions(error_of([&] {
                         conv_t(x, w, Tensor(), {{"strides", Ints{p40, p40}}});
                       }),
                       {"ConvTranspose", "overflows int64"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         conv_t(x, w, Tensor(), {{"strides", Ints{std::int64_t{1} << 30, std::int64_t{1} << 30}}});
                       }),
                       {"ConvTranspose", "too large"}));
}

// 3-D (NCDHW), as video and volumetric models use it.
TEST_F(ConvTransposeTest, ThreeDHandComputed) {
  // x = [1, 2] along depth, a 2x1x1 kernel [1, 10]: y = [1, 12, 20] along depth, plus bias 0.5.
  auto y = conv_t(floats({1, 2}, {1, 1, 2, 1, 1}), floats({1, 10}, {1, 1, 2, 1, 1}), floats({0.5f}, {1}));
  EXPECT_EQ(y.shape(), (Shape{1, 1, 3, 1, 1}));
  EXPECT_EQ(to_vec(y), (std::vector<double>{1.5, 12.5, 20.5}));
  // One voxel of 3 with a 2x2x2 kernel of ones, stride 2 and output_padding 1 along W: the copy
  // plus a zero column, 2x2x3.
  y = conv_t(floats({3}, {1, 1, 1, 1, 1}), floats(std::vector<float>(8, 1.0f), {1, 1, 2, 2, 2}), Tensor(),
             {{"strides", Ints{2, 2, 2}}, {"output_padding", Ints{0, 0, 1}}});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2, 3}));
  EXPECT_EQ(to_vec(y), (std::vector<double>{3, 3, 0, 3, 3, 0, 3, 3, 0, 3, 3, 0}));
  // Pads {front, top, left, back, bottom, right} crop the full scatter: 1 in front leaves the back slice.
  y = conv_t(floats({3}, {1, 1, 1, 1, 1}), floats({1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 2, 2, 2}), Tensor(),
             {{"pads", Ints{1, 0, 0, 0, 0, 0}}});
  EXPECT_EQ(to_vec(y), (std::vector<double>{15, 18, 21, 24}));
}

TEST_F(ConvTransposeTest, ThreeDMatchesReferenceOnAttributeMix) {
  struct Want {
    CtCase c;
    Shape out;
  };
  const std::vector<Want> cases{
      {{.x = {2, 4, 3, 2, 3},
        .w = {4, 3, 2, 3, 2},
        .attrs = {{"group", std::int64_t{2}},
                  {"strides", Ints{2, 1, 2}},
                  {"dilations", Ints{1, 2, 1}},
                  {"pads", Ints{1, 0, 1, 0, 2, 1}},
                  {"output_padding", Ints{1, 0, 1}}},
        .pad_begin = {1, 0, 1},
        .group = 2,
        .bias = true},
       {2, 6, 6, 4, 5}},
      // output_shape [5, 5, 4]: full scatter 5x5x5 -> total 0, 0, 1 -> begin 0, 0, 1 (NOTSET).
      {{.x = {1, 2, 2, 2, 2},
        .w = {2, 1, 3, 3, 3},
        .attrs = {{"strides", Ints{2, 2, 2}}, {"output_shape", Ints{5, 5, 4}}},
        .pad_begin = {0, 0, 1}},
       {1, 1, 5, 5, 4}},
      {{.x = {1, 1, 2, 3, 2},
        .w = {1, 2, 3, 2, 3},
        .attrs = {{"strides", Ints{2, 2, 3}}, {"auto_pad", std::string("SAME_LOWER")}},
        .pad_begin = {1, 0, 0}},
       {1, 2, 4, 6, 6}},
  };
  std::uint64_t seed = 90;
  for (const auto& c : cases) check_against_reference(c.c, c.out, seed += 10);
}

TEST_F(ConvTransposeTest, ThreeDNpuMatchesCpuKeptAndForceFp16) {
  const Attrs attrs{{"strides", Ints{2, 1, 2}}, {"pads", Ints{1, 0, 1, 0, 1, 0}}, {"group", std::int64_t{2}}};
  auto x = Tensor::uniform({2, 4, 3, 4, 3}, DType::kF32, DeviceRef::cpu(), 17, -1, 1);
  auto w = Tensor::uniform({4, 3, 3, 2, 3}, DType::kF32, DeviceRef::cpu(), 18, -1, 1);
  auto b = Tensor::uniform({6}, DType::kF32, DeviceRef::cpu(), 19, -1, 1);
  const auto golden = conv_t(x, w, b, attrs);
  auto npu = on_npu({x, w, b});
  EXPECT_EQ(bytes_of(conv_t(npu[0], npu[1], npu[2], attrs)), bytes_of(golden)) << "must_keep_origin_dtype";
  Runtime::configure({.precision_mode = PrecisionMode::kForceFp16});
  npu = on_npu({x, w, b});
  const auto out = conv_t(npu[0], npu[1], npu[2], attrs);
  EXPECT_EQ(out.dtype(), DType::kF32);
  EXPECT_TRUE(all_close(to_vec(out), to_vec(golden), 2e-3, 2e-3));
}

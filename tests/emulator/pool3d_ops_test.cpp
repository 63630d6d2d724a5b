// MaxPool and AvgPool on NCDHW inputs, and MaxPoolWithIndices (ONNX MaxPool's Indices, 2-D and
// 3-D): CPU golden vs hand-computed values and a direct-loop reference (strides, pads, dilations,
// ceil_mode, count_include_pad, auto_pad, storage_order), NPU vs CPU (kept and force_fp16), cost and
// bad shapes.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "emulator/op_test_util.h"
#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/op_registry.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;
using Ints = std::vector<std::int64_t>;

namespace {

using Pool3dTest = OpTest;

// 1, 2, ... in a tensor of `shape`.
Tensor ramp(Shape shape, DType dtype = DType::kF32) {
  std::vector<float> v(static_cast<std::size_t>(shape_numel(shape)));
  std::iota(v.begin(), v.end(), 1.0f);
  return Tensor::from_floats(v, std::move(shape), dtype);
}

Tensor pool(const char* op, const Tensor& x, Attrs attrs) { return call_op1(op, {x}, attrs); }

void expect_values(const Tensor& y, const Shape& shape, const std::vector<double>& want) {
  EXPECT_EQ(y.shape(), shape);
  EXPECT_TRUE(all_close(to_vec(y), want, 1e-6, 1e-7));
}

struct PoolCase {
  Shape x;
  Ints k, s{1, 1, 1}, pads{0, 0, 0, 0, 0, 0}, d{1, 1, 1};
  bool ceil = false, include_pad = false;
  Attrs attrs() const {
    return {{"kernel_shape", k},
            {"strides", s},
            {"pads", pads},
            {"dilations", d},
            {"ceil_mode", std::int64_t{ceil}},
            {"count_include_pad", std::int64_t{include_pad}}};
  }
};

// The definition in double: max, average and the row-major index of the first maximum.
struct RefOut {
  std::vector<double> max, avg;
  std::vector<double> index;
};
RefOut ref_pool(const PoolCase& p, const std::vector<double>& x, const Shape& out) {
  RefOut r;
  const std::array<std::int64_t, 3> in{p.x[2], p.x[3], p.x[4]};
  const std::int64_t plane = in[0] * in[1] * in[2];
  for (std::int64_t pl = 0; pl < out[0] * out[1]; ++pl)
    for (std::int64_t oz = 0; oz < out[2]; ++oz)
      for (std::int64_t oy = 0; oy < out[3]; ++oy)
        for (std::int64_t ox = 0; ox < out[4]; ++ox) {
          const std::array<std::int64_t, 3> o{oz, oy, ox};
          double mx = -INFINITY, sum = 0, best = -1;
          std::int64_t inside = 1, padded = 1;
          std::array<std::int64_t, 3> n_in{}, n_pad{};
          for (int a = 0; a < 3; ++a) {
            for (std::int64_t t = 0; t < p.k[a]; ++t) {
              const std::int64_t i = o[a] * p.s[a] - p.pads[a] + t * p.d[a];
              n_in[a] += i >= 0 && i < in[a];
              n_pad[a] += i >= -p.pads[a] && i < in[a] + p.pads[a + 3];
            }
            inside *= n_in[a];
            padded *= n_pad[a];
          }
          for (std::int64_t tz = 0; tz < p.k[0]; ++tz)
            for (std::int64_t ty = 0; ty < p.k[1]; ++ty)
              for (std::int64_t tx = 0; tx < p.k[2]; ++tx) {
                const std::int64_t z = oz * p.s[0] - p.pads[0] + tz * p.d[0];
                const std::int64_t y = oy * p.s[1] - p.pads[1] + ty * p.d[1];
                const std::int64_t xx = ox * p.s[2] - p.pads[2] + tx * p.d[2];
                if (z < 0 || z >= in[0] || y < 0 || y >= in[1] || xx < 0 || xx >= in[2]) continue;
                const std::int64_t at = pl * plane + (z * in[1] + y) * in[2] + xx;
                const double v = x[static_cast<std::size_t>(at)];
                if (best < 0 || v > mx) mx = v, best = static_cast<double>(at);
                sum += v;
              }
          r.max.push_back(mx);
          r.index.push_back(best);
          r.avg.push_back(sum / static_cast<double>(p.include_pad ? padded : inside));
        }
  return r;
}

}  // namespace

TEST_F(Pool3dTest, MaxAndAvgHandComputed) {
  const Tensor x = ramp({1, 1, 3, 3, 3});  // x[z][y][x] = 9z + 3y + x + 1
  const Attrs k2{{"kernel_shape", Ints{2, 2, 2}}};
  expect_values(pool("MaxPool", x, k2), {1, 1, 2, 2, 2}, {14, 15, 17, 18, 23, 24, 26, 27});
  expect_values(pool("AvgPool", x, k2), {1, 1, 2, 2, 2}, {7.5, 8.5, 10.5, 11.5, 16.5, 17.5, 19.5, 20.5});
  // Stride 2 with ceil_mode: a second window per axis holding index 2 only.
  const Attrs ceil{{"kernel_shape", Ints{2, 2, 2}}, {"strides", Ints{2, 2, 2}}, {"ceil_mode", std::int64_t{1}}};
  expect_values(pool("MaxPool", x, ceil), {1, 1, 2, 2, 2}, {14, 15, 17, 18, 23, 24, 26, 27});
  EXPECT_EQ(to_vec(pool("AvgPool", x, ceil))[7], 27);
  EXPECT_EQ(pool("AvgPool", x, {{"kernel_shape", Ints{2, 2, 2}}, {"strides", Ints{2, 2, 2}}}).shape(),
            (Shape{1, 1, 1, 1, 1}));
  // Dilation 2: the corners of the cube.
  expect_values(pool("MaxPool", x, {{"kernel_shape", Ints{2, 2, 2}}, {"dilations", Ints{2, 2, 2}}}), {1, 1, 1, 1, 1},
                {27});
  // Pads 1 all round, kernel 2, stride 2 over 2x2x2: each window holds one input voxel.
  const Tensor x8 = ramp({1, 1, 2, 2, 2});
  const Attrs padded{{"kernel_shape", Ints{2, 2, 2}}, {"strides", Ints{2, 2, 2}}, {"pads", Ints{1, 1, 1, 1, 1, 1}}};
  expect_values(pool("AvgPool", x8, padded), {1, 1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  Attrs include = padded;
  include.set("count_include_pad", std::int64_t{1});
  expect_values(pool("AvgPool", x8, include), {1, 1, 2, 2, 2},
                {1 / 8., 2 / 8., 3 / 8., 4 / 8., 5 / 8., 6 / 8., 7 / 8., 1});
  // auto_pad: SAME_UPPER pads after (every window reaches voxel 8), SAME_LOWER before (each window
  // ends at its own voxel).
  expect_values(pool("MaxPool", x8, {{"kernel_shape", Ints{2, 2, 2}}, {"auto_pad", std::string("SAME_UPPER")}}),
                {1, 1, 2, 2, 2}, std::vector<double>(8, 8));
  expect_values(pool("MaxPool", x8, {{"kernel_shape", Ints{2, 2, 2}}, {"auto_pad", std::string("SAME_LOWER")}}),
                {1, 1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_EQ(
      pool("AvgPool", x,
           {{"kernel_shape", Ints{2, 2, 2}}, {"auto_pad", std::string("VALID")}, {"pads", Ints{1, 1, 1, 1, 1, 1}}})
          .shape(),
      (Shape{1, 1, 2, 2, 2}));
}

TEST_F(Pool3dTest, CpuMatchesReferenceOnAttributeMix) {
  const std::vector<PoolCase> cases{
      {.x = {2, 3, 5, 6, 7}, .k = {2, 3, 2}},
      {.x = {1, 2, 7, 6, 5}, .k = {3, 2, 3}, .s = {2, 1, 2}, .pads = {1, 0, 1, 1, 1, 0}},
      {.x = {1, 2, 6, 7, 6}, .k = {3, 3, 2}, .s = {2, 2, 3}, .pads = {1, 1, 0, 0, 1, 1}, .ceil = true},
      {.x = {1, 2, 6, 7, 6},
       .k = {3, 3, 2},
       .s = {2, 2, 3},
       .pads = {1, 1, 0, 0, 1, 1},
       .ceil = true,
       .include_pad = true},
      {.x = {1, 1, 7, 7, 7}, .k = {2, 3, 2}, .s = {1, 2, 1}, .pads = {1, 2, 0, 1, 1, 1}, .d = {2, 2, 3}},
  };
  std::uint64_t seed = 40;
  for (const PoolCase& p : cases) {
    const Tensor x = Tensor::uniform(p.x, DType::kF32, DeviceRef::cpu(), seed++, -1, 1);
    const Tensor mx = pool("MaxPool", x, p.attrs());
    const Tensor avg = pool("AvgPool", x, p.attrs());
    const auto both = call_op("MaxPoolWithIndices", {x}, p.attrs());
    const RefOut r = ref_pool(p, to_vec(x), mx.shape());
    EXPECT_TRUE(all_close(to_vec(mx), r.max, 0, 0)) << shape_str(p.x);
    EXPECT_TRUE(all_close(to_vec(avg), r.avg, 1e-6, 1e-7)) << shape_str(p.x);
    EXPECT_TRUE(all_close(to_vec(both[0]), r.max, 0, 0)) << shape_str(p.x);
    EXPECT_TRUE(all_close(to_vec(both[1]), r.index, 0, 0)) << shape_str(p.x);
  }
}

TEST_F(Pool3dTest, IndicesRowAndColumnMajor) {
  // ONNX test_maxpool_with_argmax_2d_precomputed_strides: 1..25 as 5x5, kernel 2, stride 2.
  const Tensor x = ramp({1, 1, 5, 5});
  Attrs attrs{{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}};
  auto out = call_op("MaxPoolWithIndices", {x}, attrs);
  expect_values(out[0], {1, 1, 2, 2}, {7, 9, 17, 19});
  EXPECT_EQ(out[1].dtype(), DType::kI64);
  EXPECT_EQ(out[1].to_ints(), (std::vector<std::int64_t>{6, 8, 16, 18}));
  attrs.set("storage_order", std::int64_t{1});  // column-major: h + w·H
  EXPECT_EQ(call_op("MaxPoolWithIndices", {x}, attrs)[1].to_ints(), (std::vector<std::int64_t>{6, 16, 8, 18}));
  // Two planes: the second plane's indices count from 25 (the flattened input tensor).
  const Tensor x2 = ramp({1, 2, 5, 5});
  attrs.set("storage_order", std::int64_t{0});
  EXPECT_EQ(call_op("MaxPoolWithIndices", {x2}, attrs)[1].to_ints(),
            (std::vector<std::int64_t>{6, 8, 16, 18, 31, 33, 41, 43}));
  // 3-D, x[z][y][x] = 9z + 3y + x + 1: the maximum sits at (z+1, y+1, x+1).
  const Tensor x3 = ramp({1, 1, 3, 3, 3});
  Attrs k3{{"kernel_shape", Ints{2, 2, 2}}};
  EXPECT_EQ(call_op("MaxPoolWithIndices", {x3}, k3)[1].to_ints(),
            (std::vector<std::int64_t>{13, 14, 16, 17, 22, 23, 25, 26}));
  k3.set("storage_order", std::int64_t{1});  // z + y·D + x·D·H
  EXPECT_EQ(call_op("MaxPoolWithIndices", {x3}, k3)[1].to_ints(),
            (std::vector<std::int64_t>{13, 22, 16, 25, 14, 23, 17, 26}));
}

TEST_F(Pool3dTest, IndicesTiesPaddingAndNaN) {
  // Equal values: the first tap inside the input wins (the padding never does).
  const Tensor ones = Tensor::from_floats(std::vector<float>(4, 1.0f), {1, 1, 2, 2}, DType::kF32);
  const Attrs padded{{"kernel_shape", Ints{2, 2}}, {"pads", Ints{1, 1, 0, 0}}};
  EXPECT_EQ(call_op("MaxPoolWithIndices", {ones}, padded)[1].to_ints(), (std::vector<std::int64_t>{0, 0, 0, 0}));
  // A NaN wins and propagates, on both backends.
  const Tensor x = Tensor::from_floats(std::vector<float>{1, std::nanf(""), 3, 4}, {1, 1, 1, 4}, DType::kF32);
  for (const Tensor& in : {x, on_npu({x})[0]}) {
    const auto out = call_op("MaxPoolWithIndices", {in}, {{"kernel_shape", Ints{1, 2}}, {"strides", Ints{1, 2}}});
    const auto y = to_vec(out[0]);
    EXPECT_TRUE(std::isnan(y[0]));
    EXPECT_EQ(y[1], 4);
    EXPECT_EQ(out[1].to_ints(), (std::vector<std::int64_t>{1, 3}));
  }
}

TEST_F(Pool3dTest, NpuMatchesCpuKeptAndForceFp16) {
  const PoolCase p{.x = {2, 3, 7, 9, 8}, .k = {3, 3, 2}, .s = {2, 2, 1}, .pads = {1, 1, 0, 1, 0, 1}, .ceil = true};
  for (DType dt : {DType::kF32, DType::kF16}) {
    const Tensor x = Tensor::randn(p.x, dt, DeviceRef::cpu(), 21, 2.0f);
    const Tensor xn = on_npu({x})[0];
    const auto tol = default_tolerance(dt);
    EXPECT_EQ(bytes_of(pool("MaxPool", xn, p.attrs())), bytes_of(pool("MaxPool", x, p.attrs()))) << "exact";
    const auto npu = call_op("MaxPoolWithIndices", {xn}, p.attrs()),
               cpu = call_op("MaxPoolWithIndices", {x}, p.attrs());
    EXPECT_EQ(bytes_of(npu[0]), bytes_of(cpu[0]));
    EXPECT_EQ(npu[1].to_ints(), cpu[1].to_ints());
    for (bool include : {false, true}) {
      PoolCase q = p;
      q.include_pad = include;
      EXPECT_TRUE(
          all_close(to_vec(pool("AvgPool", xn, q.attrs())), to_vec(pool("AvgPool", x, q.attrs())), tol.rtol, tol.atol))
          << dtype_name(dt);
    }
  }
  // force_fp16: AvgPool reads f16-rounded f32 values: within f16's tolerance of the f32 golden.
  const Tensor x = Tensor::randn(p.x, DType::kF32, DeviceRef::cpu(), 22, 2.0f);
  const auto golden = to_vec(pool("AvgPool", x, p.attrs()));
  Runtime::configure({.precision_mode = PrecisionMode::kForceFp16});
  const Tensor y = pool("AvgPool", on_npu({x})[0], p.attrs());
  EXPECT_EQ(y.dtype(), DType::kF32);
  EXPECT_TRUE(all_close(to_vec(y), golden, 2e-3, 2e-3));
}

TEST_F(Pool3dTest, CostCountsKernelTaps) {
  const OpSchema& s = OpRegistry::instance().schema("AvgPool");
  const Attrs attrs{{"kernel_shape", Ints{2, 3, 3}}};
  const std::vector<TensorMeta> in{{{1, 2, 4, 8, 8}, DType::kF16}};
  const auto out = s.infer(in, attrs);
  ASSERT_EQ(out[0].shape, (Shape{1, 2, 3, 6, 6}));
  EXPECT_EQ(s.cost(in, out, attrs).flops, 2 * 3 * 6 * 6 * 18);
  const auto both = OpRegistry::instance().schema("MaxPoolWithIndices").infer(in, attrs);
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[1].dtype, DType::kI64);
  EXPECT_EQ(both[1].shape, out[0].shape);
}

TEST_F(Pool3dTest, BadShapesAndAttributesAreInvalid) {
  const Tensor x = ramp({1, 1, 4, 4, 4});
  EXPECT_TRUE(mentions(error_of([&] {
                         pool("MaxPool", x, {{"kernel_shape", Ints{2, 2}}});
                       }),
                       {"MaxPool", "kernel_shape must be 3 values", "[1, 1, 4, 4, 4]"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         pool("AvgPool", ramp({1, 1, 2, 2, 2, 2}), {{"kernel_shape", Ints{1, 1, 1, 1}}});
                       }),
                       {"AvgPool", "NCDHW", "[1, 1, 2, 2, 2, 2]"}));
  EXPECT_THROW(pool("MaxPool", x, {{"kernel_shape", Ints{2, 2, 2}}, {"pads", Ints{1, 1, 1, 1}}}), InvalidArgument);
  EXPECT_THROW(pool("MaxPool", x, {{"kernel_shape", Ints{2, 2, 2}}, {"strides", Ints{1, 0, 1}}}), InvalidArgument);
  EXPECT_THROW(pool("AvgPool", x, {{"kernel_shape", Ints{5, 2, 2}}}), InvalidArgument);  // kernel > input
  EXPECT_THROW(pool("MaxPool", x, {{"kernel_shape", Ints{2, 2, 2}}, {"pads", Ints{2, 0, 0, 0, 0, 0}}}),
               InvalidArgument);  // pad >= kernel
  EXPECT_TRUE(mentions(
      error_of([&] {
        call_op("MaxPoolWithIndices", {x}, {{"kernel_shape", Ints{2, 2, 2}}, {"storage_order", std::int64_t{2}}});
      }),
      {"MaxPoolWithIndices", "storage_order", "2"}));
  EXPECT_THROW(call_op("MaxPoolWithIndices", {ramp({1, 4, 4})}, {{"kernel_shape", Ints{2}}}), InvalidArgument);
}

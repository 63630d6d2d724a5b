// InstanceNormalization, LpNormalization, MeanVarianceNormalization, LRN: CPU golden vs
// hand-computed values, NPU vs CPU in f32 and f16 (and f32 kept under allow_mix_precision), bad
// shapes and attributes.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "emulator/op_test_util.h"
#include "npuscope/emulator/errors.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

using NormExtTest = OpTest;
using Ints = std::vector<std::int64_t>;

Tensor instance_norm(const Tensor& x, const Tensor& s, const Tensor& b, double eps = 1e-5) {
  return call_op1("InstanceNormalization", {x, s, b}, {{"epsilon", eps}});
}

// Runs `f` on cpu inputs and on their npu copies; the npu result must match within the dtype tolerance.
template <class F>
void expect_npu_matches_cpu(const std::vector<Tensor>& inputs, F f, const char* what) {
  const auto tol = default_tolerance(inputs[0].dtype());
  const auto golden = to_vec(f(inputs));
  const Tensor out = f(on_npu(inputs));
  EXPECT_EQ(out.dtype(), inputs[0].dtype()) << what;
  EXPECT_TRUE(all_close(to_vec(out), golden, tol.rtol, tol.atol)) << what << " " << dtype_name(inputs[0].dtype());
}

}  // namespace

TEST_F(NormExtTest, InstanceNormHandComputed) {
  // ONNX's example: per (n, c) plane over the spatial dims; both planes have variance 2/3.
  auto y = instance_norm(floats({-1, 0, 1, 2, 3, 4}, {1, 2, 1, 3}), floats({1, 1.5f}, {2}), floats({0, 1}, {2}));
  const double r = 1 / std::sqrt(2.0 / 3 + 1e-5);
  EXPECT_TRUE(all_close(to_vec(y), {-r, 0, r, 1 - 1.5 * r, 1, 1 + 1.5 * r}, 1e-6, 1e-7));
  EXPECT_EQ(y.shape(), (Shape{1, 2, 1, 3}));
}

TEST_F(NormExtTest, LpNormHandComputed) {
  auto x = floats({3, 4, 6, 8}, {2, 2});
  EXPECT_TRUE(all_close(to_vec(call_op1("LpNormalization", {x}, {})), {0.6, 0.8, 0.6, 0.8}, 1e-6, 1e-7));
  auto l1 = call_op1("LpNormalization", {x}, {{"axis", std::int64_t{0}}, {"p", std::int64_t{1}}});
  EXPECT_TRUE(all_close(to_vec(l1), {1.0 / 3, 1.0 / 3, 2.0 / 3, 2.0 / 3}, 1e-6, 1e-7));
  // A zero vector has no direction: 0 / 0, as the ONNX reference gives.
  auto z = call_op1("LpNormalization", {floats({0, 0, 1, 0}, {2, 2})}, {});
  const auto zv = to_vec(z);
  EXPECT_TRUE(std::isnan(zv[0]) && std::isnan(zv[1]));
  EXPECT_EQ(zv[2], 1.0);
}

TEST_F(NormExtTest, MvnHandComputed) {
  // Default axes {0, 2, 3}: per channel over N. Channel 0 holds {1, 3}, channel 1 {2, 6}: both -> ±1.
  auto y = call_op1("MeanVarianceNormalization", {floats({1, 2, 3, 6}, {2, 2, 1, 1})}, {});
  EXPECT_TRUE(all_close(to_vec(y), {-1, -1, 1, 1}, 1e-6, 1e-7));
  // axes {-1}: per row; [0, 2] -> ±1, [5, 5] -> 0 (zero variance: 0 / 1e-9).
  auto rows = call_op1("MeanVarianceNormalization", {floats({0, 2, 5, 5}, {2, 2})}, {{"axes", Ints{-1}}});
  EXPECT_TRUE(all_close(to_vec(rows), {-1, 1, 0, 0}, 1e-6, 1e-7));
}

TEST_F(NormExtTest, LrnHandComputed) {
  // Channels {1, 2, 3}; size 3 sums channels c-1..c+1, size 2 sums c..c+1.
  auto x = floats({1, 2, 3}, {1, 3, 1, 1});
  const double alpha = 0.3, beta = 0.75, bias = 2;
  auto lrn = [&](std::int64_t size) {
    return to_vec(call_op1("LRN", {x}, {{"size", size}, {"alpha", alpha}, {"beta", beta}, {"bias", bias}}));
  };
  auto expect = [&](std::vector<double> sq, double size) {
    std::vector<double> y;
    for (int c = 0; c < 3; ++c) y.push_back((c + 1) / std::pow(bias + alpha / size * sq[c], beta));
    return y;
  };
  EXPECT_TRUE(all_close(lrn(3), expect({5, 14, 13}, 3), 1e-6, 1e-7));
  EXPECT_TRUE(all_close(lrn(2), expect({5, 13, 9}, 2), 1e-6, 1e-7));
}

TEST_F(NormExtTest, NpuMatchesCpuF32AndF16) {
  for (DType t : {DType::kF32, DType::kF16}) {
    const Tensor x = Tensor::randn({2, 3, 5, 7}, t, DeviceRef::cpu(), 21);
    const Tensor s = Tensor::randn({3}, t, DeviceRef::cpu(), 22), b = Tensor::randn({3}, t, DeviceRef::cpu(), 23);
    expect_npu_matches_cpu(
        {x, s, b}, [](const std::vector<Tensor>& v) { return instance_norm(v[0], v[1], v[2]); },
        "InstanceNormalization");
    expect_npu_matches_cpu(
        {x},
        [](const std::vector<Tensor>& v) {
          return call_op1("LpNormalization", {v[0]}, {{"axis", std::int64_t{1}}});
        },
        "LpNormalization p=2");
    expect_npu_matches_cpu(
        {x},
        [](const std::vector<Tensor>& v) {
          return call_op1("LpNormalization", {v[0]}, {{"p", std::int64_t{1}}});
        },
        "LpNormalization p=1");
    expect_npu_matches_cpu(
        {x}, [](const std::vector<Tensor>& v) { return call_op1("MeanVarianceNormalization", {v[0]}, {}); },
        "MeanVarianceNormalization");
    expect_npu_matches_cpu(
        {x},
        [](const std::vector<Tensor>& v) {
          return call_op1("LRN", {v[0]}, {{"size", std::int64_t{3}}, {"alpha", 0.01}, {"bias", 1.5}});
        },
        "LRN");
  }
}

TEST_F(NormExtTest, StaysF32UnderMixPrecision) {
  const Tensor x = Tensor::randn({2, 4, 6, 6}, DType::kF32, DeviceRef::cpu(), 31);
  const Tensor s = Tensor::randn({4}, DType::kF32, DeviceRef::cpu(), 32),
               b = Tensor::randn({4}, DType::kF32, DeviceRef::cpu(), 33);
  Runtime::get().device().set_precision_mode(PrecisionMode::kAllowMixPrecision);
  expect_npu_matches_cpu(
      {x, s, b}, [](const std::vector<Tensor>& v) { return instance_norm(v[0], v[1], v[2]); },
      "InstanceNormalization under allow_mix_precision");
  expect_npu_matches_cpu(
      {x},
      [](const std::vector<Tensor>& v) {
        return call_op1("LRN", {v[0]}, {{"size", std::int64_t{5}}});
      },
      "LRN under allow_mix_precision");
}

TEST_F(NormExtTest, BadShapesAndAttributesAreInvalidArgument) {
  const Tensor x = Tensor::zeros({2, 3, 4}, DType::kF32), c3 = Tensor::zeros({3}, DType::kF32);
  const Tensor c4 = Tensor::zeros({4}, DType::kF32);
  EXPECT_NO_THROW(instance_norm(x, c3, c3));
  EXPECT_THROW(instance_norm(x, c4, c3), InvalidArgument);                                   // scale != [C]
  EXPECT_THROW(instance_norm(x, c3, c4), InvalidArgument);                                   // B != [C]
  EXPECT_THROW(instance_norm(Tensor::zeros({2, 3}, DType::kF32), c3, c3), InvalidArgument);  // no spatial dim
  EXPECT_THROW(instance_norm(x, Tensor::zeros({3}, DType::kF16), c3), InvalidArgument);      // dtypes differ
  EXPECT_THROW(call_op1("LpNormalization", {x}, {{"p", std::int64_t{3}}}), InvalidArgument);
  EXPECT_THROW(call_op1("LpNormalization", {x}, {{"axis", std::int64_t{3}}}), InvalidArgument);
  EXPECT_THROW(call_op1("MeanVarianceNormalization", {x}, {{"axes", Ints{0, 5}}}), InvalidArgument);
  EXPECT_THROW(call_op1("MeanVarianceNormalization", {x}, {{"axes", Ints{1, -2}}}), InvalidArgument);  // repeated
  EXPECT_THROW(call_op1("MeanVarianceNormalization", {x}, {}), InvalidArgument);  // default axes need rank 4
  EXPECT_THROW(call_op1("LRN", {x}, {}), InvalidArgument);                        // size is required
  EXPECT_THROW(call_op1("LRN", {x}, {{"size", std::int64_t{0}}}), InvalidArgument);
  EXPECT_THROW(call_op1("LRN", {c3}, {{"size", std::int64_t{3}}}), InvalidArgument);  // no channel dim
  const std::vector<std::int64_t> ints(24, 1);
  EXPECT_THROW(call_op1("LpNormalization", {Tensor::from_ints(ints, {2, 3, 4}, DType::kI32)}, {}), InvalidArgument);
}

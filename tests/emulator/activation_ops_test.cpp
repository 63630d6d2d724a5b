// Gelu, FastGelu, Silu: CPU golden vs hand-computed values; the NPU Gelu (tanh form, Padé tanh) vs
// the erf golden (a bounded, documented difference) and vs an independent evaluation of its own
// formula; FastGelu and Silu NPU vs CPU; the ONNX approximate attribute; bad dtypes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "emulator/op_test_util.h"
#include "npuscope/emulator/errors.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

class ActivationOpsTest : public OpTest {};

const std::vector<float> kPoints{0, 1, -1, 2, -3, 0.5f};

// n evenly spaced points on [lo, hi].
std::vector<float> grid(float lo, float hi, int n) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = lo + (hi - lo) * static_cast<float>(i) / (n - 1);
  return v;
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

// The tanh form written out here, independently of the kernel, in f64, with either the exact tanh
// or the [7/6] Padé approximant (x(135135+17325x²+378x⁴+x⁶)/(135135+62370x²+3150x⁴+28x⁶) clamped
// to [-1, 1]).
double tanh_form(double x, bool pade) {
  const double u = std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x);
  double t = std::tanh(u);
  if (pade) {
    const double u2 = u * u;
    t = u * (135135 + 17325 * u2 + 378 * u2 * u2 + u2 * u2 * u2) /
        (135135 + 62370 * u2 + 3150 * u2 * u2 + 28 * u2 * u2 * u2);
    t = std::clamp(t, -1.0, 1.0);
  }
  return 0.5 * x * (1 + t);
}

}  // namespace

TEST_F(ActivationOpsTest, CpuMatchesHandComputedValues) {
  const Tensor x = floats_1d(kPoints);
  EXPECT_TRUE(all_close(
      to_vec(ops::gelu(x)),
      {0, 0.8413447460685429, -0.15865525393145707, 1.9544997361036416, -0.00404969409489031, 0.34573123063700656},
      1e-7, 0));
  EXPECT_TRUE(all_close(
      to_vec(ops::fast_gelu(x)),
      {0, 0.8457957659328212, -0.1542042340671787, 1.9356586231442083, -0.01807130970778597, 0.35038843660638014}, 1e-7,
      0));
  EXPECT_TRUE(all_close(
      to_vec(ops::silu(x)),
      {0, 0.7310585786300049, -0.2689414213699951, 1.7615941559557646, -0.14227761953270035, 0.3112296656009273}, 1e-7,
      0));
}

TEST_F(ActivationOpsTest, NpuGeluDiffersFromErfGoldenByABoundedAmount) {
  const Tensor x = floats_1d(grid(-6, 6, 12001));
  const std::vector<double> npu = to_vec(ops::gelu(on_npu({x})[0]));
  const std::vector<double> golden = to_vec(ops::gelu(x));
  const double err = max_abs_diff(npu, golden);
  // Measured: 4.74e-4, at x ≈ 2.69 (mostly the tanh form's own error; the Padé tanh adds at most
  // 1.8e-4, near |x| ≈ 3.8). A real difference, as on the NPU, but a small one.
  EXPECT_GT(err, 1e-4);
  EXPECT_LT(err, 5e-4) << "max |npu - golden| = " << err;
  // Far out the approximation is exact: gelu(x) = x for large x and 0 for very negative x.
  const std::vector<double> tails = to_vec(ops::gelu(on_npu({floats_1d({-20, 20, 100})})[0]));
  EXPECT_EQ(tails, (std::vector<double>{0, 20, 100}));
}

TEST_F(ActivationOpsTest, NpuGeluIsTheTanhFormWithPadeTanh) {
  const std::vector<float> xs = grid(-8, 8, 4001);
  const std::vector<double> npu = to_vec(ops::gelu(on_npu({floats_1d(xs)})[0]));
  std::vector<double> pade(xs.size()), exact_tanh(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) {
    pade[i] = tanh_form(xs[i], true);
    exact_tanh[i] = tanh_form(xs[i], false);
  }
  // Same formula: only f32 rounding separates them.
  EXPECT_TRUE(all_close(npu, pade, 1e-5, 1e-6));
  // The Padé tanh vs the exact tanh: measured max 1.82e-4 (where the Padé tanh is clamped to 1).
  EXPECT_LT(max_abs_diff(npu, exact_tanh), 2e-4);
}

TEST_F(ActivationOpsTest, NpuGeluInF16StaysWithinApproximationPlusRounding) {
  const Tensor x = Tensor::uniform({1024}, DType::kF16, DeviceRef::cpu(), 11, -6, 6);
  // The f16 tolerance plus the approximation's 5e-4 (see the f32 test above).
  EXPECT_TRUE(all_close(to_vec(ops::gelu(on_npu({x})[0])), to_vec(ops::gelu(x)), 1e-3, 5e-4));
}

TEST_F(ActivationOpsTest, FastGeluAndSiluNpuMatchCpu) {
  for (DType dt : {DType::kF32, DType::kF16, DType::kBF16}) {
    const auto tol = default_tolerance(dt);
    const Tensor x = Tensor::uniform({3, 341}, dt, DeviceRef::cpu(), 5, -10, 10);
    EXPECT_TRUE(all_close(to_vec(ops::fast_gelu(on_npu({x})[0])), to_vec(ops::fast_gelu(x)), tol.rtol, tol.atol))
        << dtype_name(dt);
    EXPECT_TRUE(all_close(to_vec(ops::silu(on_npu({x})[0])), to_vec(ops::silu(x)), tol.rtol, tol.atol))
        << dtype_name(dt);
  }
  // exp(-1.702x) and exp(-x) overflow for very negative x: the results go to 0, not NaN.
  const Tensor big = floats_1d({-1000, 1000});
  for (const Tensor& in : {big, on_npu({big})[0]}) {
    EXPECT_EQ(to_vec(ops::fast_gelu(in)), (std::vector<double>{0, 1000}));
    EXPECT_EQ(to_vec(ops::silu(in)), (std::vector<double>{0, 1000}));
  }
}

TEST_F(ActivationOpsTest, OnnxApproximateTanhSelectsTheTanhFormOnCpu) {
  const Tensor x = floats_1d(kPoints);
  const Tensor y = call_op1("Gelu", {x}, {{"approximate", std::string("tanh")}});
  EXPECT_TRUE(all_close(
      to_vec(y),
      {0, 0.8411919906082768, -0.15880800939172324, 1.954597694087775, -0.0036373920817729943, 0.34571400982514394},
      1e-7, 0));
  EXPECT_THROW(call_op1("Gelu", {x}, {{"approximate", std::string("erf")}}), InvalidArgument);
}

TEST_F(ActivationOpsTest, CategoriesCostsAndBadDtypes) {
  const OpRegistry& r = OpRegistry::instance();
  const std::vector<TensorMeta> meta_in{{{100}, DType::kF32}}, meta_out{{{100}, DType::kF32}};
  for (const char* t : {"Gelu", "FastGelu", "Silu"}) {
    EXPECT_EQ(r.schema(t).category, OpCategory::kVector) << t;
    const KernelCost c = r.schema(t).cost(meta_in, meta_out, {});
    EXPECT_EQ(c.unit, ComputeUnit::kVector) << t;
    EXPECT_GE(c.flops, 400) << t;
    EXPECT_LE(c.flops, 1000) << t;
  }
  const Tensor i32 = Tensor::from_ints(std::vector<std::int64_t>{1, 2}, {2}, DType::kI32);
  for (const Tensor& in : {i32, on_npu({i32})[0]}) {
    EXPECT_THROW(ops::gelu(in), InvalidArgument);
    EXPECT_THROW(ops::fast_gelu(in), InvalidArgument);
    EXPECT_THROW(ops::silu(in), InvalidArgument);
  }
}

TEST_F(ActivationOpsTest, SwiGluGatesTheSecondHalfWithSiluOfTheFirst) {
  // x = [a | b] along the last dim: out = a / (1 + e^-a) · b.
  const std::vector<float> values{1, -2, 3,  4,  //
                                  0, 5,  -1, 2};
  const Tensor x = Tensor::from_floats(values, {2, 4}, DType::kF32);
  const Tensor y = call_op1("SwiGlu", {x});
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  const auto silu = [](double a) { return a / (1 + std::exp(-a)); };
  EXPECT_TRUE(all_close(to_vec(y), {silu(1) * 3, silu(-2) * 4, silu(0) * -1, silu(5) * 2}, 1e-6, 1e-6));
  // dim = 0 splits the rows instead.
  const Tensor rows = call_op1("SwiGlu", {x}, {{"dim", std::int64_t{0}}});
  EXPECT_EQ(rows.shape(), (Shape{1, 4}));
  EXPECT_TRUE(all_close(to_vec(rows), {silu(1) * 0, silu(-2) * 5, silu(3) * -1, silu(4) * 2}, 1e-6, 1e-6));
  for (DType dt : {DType::kF32, DType::kF16, DType::kBF16}) {
    const auto tol = default_tolerance(dt);
    const Tensor r = Tensor::uniform({3, 2, 64}, dt, DeviceRef::cpu(), 7, -8, 8);
    EXPECT_TRUE(all_close(to_vec(call_op1("SwiGlu", on_npu({r}))), to_vec(call_op1("SwiGlu", {r})), tol.rtol, tol.atol))
        << dtype_name(dt);
  }
  EXPECT_THROW(call_op1("SwiGlu", {floats_1d({1, 2, 3})}), InvalidArgument);  // odd size
  const KernelCost c =
      OpRegistry::instance().schema("SwiGlu").cost({{{{4, 32}, DType::kF16}}}, {{{{4, 16}, DType::kF16}}}, {});
  EXPECT_EQ(c.unit, ComputeUnit::kVector);
  EXPECT_DOUBLE_EQ(c.bytes, (128 + 64) * 2);
}

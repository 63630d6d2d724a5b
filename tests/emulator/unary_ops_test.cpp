// Relu, Neg, Abs, Exp, Log, Sqrt, Rsqrt, Tanh, Sigmoid: CPU golden vs hand-computed values, NPU vs
// CPU in f32, f16 and bf16, IEEE special values, exact integer Relu/Neg/Abs, categories and costs,
// and bad dtypes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "emulator/op_test_util.h"
#include "npuscope/emulator/errors.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

class UnaryOpsTest : public OpTest {};

using UnaryFn = Tensor (*)(const Tensor&, const CallOptions&);

struct UnaryCase {
  const char* name;
  UnaryFn fn;
  float lo, hi;  // a domain where the op is finite
};

const std::vector<UnaryCase>& all_cases() {
  static const std::vector<UnaryCase> cases{
      {"Relu", ops::relu, -4, 4},        {"Neg", ops::neg, -4, 4},      {"Abs", ops::abs, -4, 4},
      {"Exp", ops::exp, -8, 8},          {"Log", ops::log, 0.01f, 100}, {"Sqrt", ops::sqrt, 0, 100},
      {"Rsqrt", ops::rsqrt, 0.01f, 100}, {"Tanh", ops::tanh, -6, 6},    {"Sigmoid", ops::sigmoid, -10, 10},
  };
  return cases;
}

std::vector<double> run(UnaryFn fn, const Tensor& x) { return to_vec(fn(x, {})); }

}  // namespace

TEST_F(UnaryOpsTest, CpuMatchesHandComputedValues) {
  const Tensor x = floats_1d({-2, -0.5f, 0, 0.5f, 3});
  EXPECT_EQ(run(ops::relu, x), (std::vector<double>{0, 0, 0, 0.5, 3}));
  EXPECT_EQ(run(ops::neg, x), (std::vector<double>{2, 0.5, 0, -0.5, -3}));
  EXPECT_EQ(run(ops::abs, x), (std::vector<double>{2, 0.5, 0, 0.5, 3}));
  // Golden values rounded once to f32 from the exact results.
  EXPECT_TRUE(all_close(run(ops::exp, floats_1d({0, 1, -1, 2})),
                        {1, 2.718281828459045, 0.36787944117144233, 7.38905609893065}, 1e-7, 0));
  EXPECT_TRUE(all_close(run(ops::log, floats_1d({1, 2, 0.5f, 10})),
                        {0, 0.6931471805599453, -0.6931471805599453, 2.302585092994046}, 1e-7, 0));
  EXPECT_EQ(run(ops::sqrt, floats_1d({0, 4, 2.25f, 1e6f})), (std::vector<double>{0, 2, 1.5, 1000}));
  EXPECT_EQ(run(ops::rsqrt, floats_1d({4, 0.25f, 1, 16})), (std::vector<double>{0.5, 2, 1, 0.25}));
  EXPECT_TRUE(all_close(run(ops::tanh, floats_1d({0, 0.5f, -1, 3})),
                        {0, 0.46211715726000974, -0.7615941559557649, 0.9950547536867305}, 1e-7, 0));
  EXPECT_TRUE(all_close(run(ops::sigmoid, floats_1d({0, 1, -2, 5})),
                        {0.5, 0.7310585786300049, 0.11920292202211755, 0.9933071490757153}, 1e-7, 0));
}

TEST_F(UnaryOpsTest, NpuMatchesCpuInEveryFloatDtype) {
  for (DType dt : {DType::kF32, DType::kF16, DType::kBF16}) {
    const auto tol = default_tolerance(dt);
    for (const UnaryCase& c : all_cases()) {
      const Tensor x = Tensor::uniform({4, 257}, dt, DeviceRef::cpu(), 7, c.lo, c.hi);
      EXPECT_TRUE(all_close(run(c.fn, on_npu({x})[0]), run(c.fn, x), tol.rtol, tol.atol))
          << c.name << " " << dtype_name(dt);
    }
  }
}

TEST_F(UnaryOpsTest, F16ResultsAreRoundedOnceToF16) {
  // exp(1) = 2.71828...: the nearest f16 is 2.71875; both backends store it.
  const Tensor x = floats_1d({1, 0.5f}, DType::kF16);
  for (const Tensor& in : {x, on_npu({x})[0]}) {
    EXPECT_EQ(run(ops::exp, in), (std::vector<double>{2.71875, 1.6484375}));
  }
}

TEST_F(UnaryOpsTest, SpecialValuesFollowIeeeInInfNanMode) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor x = floats_1d({0, -1, std::numeric_limits<float>::infinity()});
  for (const Tensor& in : {x, on_npu({x})[0]}) {
    EXPECT_TRUE(all_close(run(ops::log, in), {-inf, nan, inf}, 0, 0));
    EXPECT_TRUE(all_close(run(ops::sqrt, in), {0, nan, inf}, 0, 0));
    EXPECT_TRUE(all_close(run(ops::rsqrt, in), {inf, nan, 0}, 0, 0));
    EXPECT_TRUE(all_close(run(ops::exp, in), {1, 0.36787944117144233, inf}, 1e-7, 0));
  }
  // Sigmoid saturates to 0 and 1 instead of producing inf/inf; Relu keeps NaN.
  const Tensor y = floats_1d({-200, 200, std::numeric_limits<float>::quiet_NaN()});
  for (const Tensor& in : {y, on_npu({y})[0]}) {
    EXPECT_TRUE(all_close(run(ops::sigmoid, in), {0, 1, nan}, 0, 0));
    EXPECT_TRUE(all_close(run(ops::tanh, in), {-1, 1, nan}, 0, 0));
    EXPECT_TRUE(all_close(run(ops::relu, in), {0, 200, nan}, 0, 0));
  }
}

// Exp, Tanh and Sigmoid run eight (f32) or four (f64) lanes at a time through libmvec (Note [Vector
// math] in emulator/src/kernels/vector_math.h), with the special values in the lanes and a tail that
// is not a whole vector: the NPU's f32 results stay within libmvec's documented 4 ulp of the exact
// value (sigmoid: 6, as 1 / (1 + e) adds two roundings), the golden's are the exact value rounded once
// to f32.
TEST_F(UnaryOpsTest, VectorLanesMatchTheScalarFunctions) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> v{0, -0.0f, inf, -inf, nan, 200, -200, 89, -104, 1e-40f, -1e-40f, 20, -20, 9.5f, -9.5f};
  for (int i = 0; i < 1000; ++i) v.push_back(-12 + 24 * static_cast<float>(i) / 999);
  v.push_back(0.3f);  // 1016 values: the last one is a tail after 127 whole vectors
  const Tensor x = floats_1d(v);
  const auto ulps = [](double got, float want) {
    if (std::isnan(want)) return std::isnan(got) ? 0.0 : 1e9;
    if (std::isinf(want) || want == 0) return got == want ? 0.0 : 1e9;
    const float g = static_cast<float>(got);
    return std::fabs(static_cast<double>(g) - want) / std::fabs(std::nextafter(want, 2 * want) - want);
  };
  struct Case {
    UnaryFn fn;
    double (*exact)(double);
    const char* name;
    double max_ulps;
  };
  const Case cases[] = {
      {ops::exp, [](double a) { return std::exp(a); }, "Exp", 4},
      {ops::tanh, [](double a) { return std::tanh(a); }, "Tanh", 4},
      {ops::sigmoid, [](double a) { return 1.0 / (1.0 + std::exp(-a)); }, "Sigmoid", 6},
  };
  for (const Case& c : cases) {
    const auto npu = run(c.fn, on_npu({x})[0]), golden = run(c.fn, x);
    for (std::size_t i = 0; i < v.size(); ++i) {
      EXPECT_LE(ulps(npu[i], static_cast<float>(c.exact(v[i]))), c.max_ulps)
          << c.name << "(" << v[i] << ") on the NPU: " << npu[i];
      const double want = static_cast<float>(c.exact(v[i]));
      EXPECT_TRUE(golden[i] == want || (std::isnan(golden[i]) && std::isnan(want)))
          << c.name << "(" << v[i] << ") on the CPU: " << golden[i];
    }
  }
}

TEST_F(UnaryOpsTest, IntegerReluNegAbsAreExactAndWrap) {
  constexpr std::int64_t kMin32 = std::numeric_limits<std::int32_t>::min();
  constexpr std::int64_t kBig = (std::int64_t{1} << 60) + 1;  // not representable in f64
  const Tensor i32 = Tensor::from_ints(std::vector<std::int64_t>{kMin32, -16777217, 0, 16777217}, {4}, DType::kI32);
  const Tensor i64 = Tensor::from_ints(std::vector<std::int64_t>{-kBig, kBig, -3}, {3}, DType::kI64);
  for (bool npu : {false, true}) {
    const Tensor a = npu ? on_npu({i32})[0] : i32;
    const Tensor b = npu ? on_npu({i64})[0] : i64;
    // neg/abs of INT32_MIN wrap to INT32_MIN, as in C, numpy and torch.
    EXPECT_EQ(ops::neg(a).to_ints(), (std::vector<std::int64_t>{kMin32, 16777217, 0, -16777217}));
    EXPECT_EQ(ops::abs(a).to_ints(), (std::vector<std::int64_t>{kMin32, 16777217, 0, 16777217}));
    EXPECT_EQ(ops::relu(a).to_ints(), (std::vector<std::int64_t>{0, 0, 0, 16777217}));
    EXPECT_EQ(ops::abs(b).to_ints(), (std::vector<std::int64_t>{kBig, kBig, 3}));
    EXPECT_EQ(ops::neg(b).to_ints(), (std::vector<std::int64_t>{kBig, -kBig, 3}));
    EXPECT_EQ(ops::relu(b).dtype(), DType::kI64);
  }
  const Tensor u8 = Tensor::from_ints(std::vector<std::int64_t>{0, 7, 255}, {3}, DType::kU8);
  EXPECT_EQ(ops::relu(on_npu({u8})[0]).to_ints(), (std::vector<std::int64_t>{0, 7, 255}));
}

TEST_F(UnaryOpsTest, ShapeAndDtypeArePreserved) {
  const Tensor x = Tensor::uniform({2, 3, 4}, DType::kF16, DeviceRef::npu(), 3, 0.1f, 2);
  for (const UnaryCase& c : all_cases()) {
    const Tensor y = c.fn(x, {});
    EXPECT_EQ(y.shape(), (Shape{2, 3, 4})) << c.name;
    EXPECT_EQ(y.dtype(), DType::kF16) << c.name;
  }
  const Tensor scalar = floats_1d({4});
  EXPECT_EQ(ops::sqrt(scalar.view({})).shape(), Shape{});
}

TEST_F(UnaryOpsTest, CategoriesAndCosts) {
  const OpRegistry& r = OpRegistry::instance();
  for (const char* t : {"Exp", "Log"}) EXPECT_EQ(r.schema(t).category, OpCategory::kPrecisionSensitive) << t;
  for (const char* t : {"Relu", "Neg", "Abs", "Sqrt", "Rsqrt", "Tanh", "Sigmoid"}) {
    EXPECT_EQ(r.schema(t).category, OpCategory::kVector) << t;
  }
  const std::vector<TensorMeta> in{{{8, 16}, DType::kF16}}, out{{{8, 16}, DType::kF16}};
  const KernelCost relu = r.schema("Relu").cost(in, out, {});
  EXPECT_EQ(relu.unit, ComputeUnit::kVector);
  EXPECT_DOUBLE_EQ(relu.flops, 128);
  EXPECT_DOUBLE_EQ(relu.bytes, 2 * 128 * 2);
  const KernelCost exp = r.schema("Exp").cost(in, out, {});
  EXPECT_GE(exp.flops, 4 * 128);
  EXPECT_LE(exp.flops, 10 * 128);
}

TEST_F(UnaryOpsTest, BadDtypesAreInvalidArgument) {
  const Tensor i32 = Tensor::from_ints(std::vector<std::int64_t>{1, 2}, {2}, DType::kI32);
  const Tensor b = Tensor::from_ints(std::vector<std::int64_t>{1, 0}, {2}, DType::kBool);
  for (UnaryFn fn : {ops::exp, ops::log, ops::sqrt, ops::rsqrt, ops::tanh, ops::sigmoid}) {
    EXPECT_THROW(fn(i32, {}), InvalidArgument);
    EXPECT_THROW(fn(on_npu({i32})[0], {}), InvalidArgument);
  }
  for (UnaryFn fn : {ops::relu, ops::neg, ops::abs}) EXPECT_THROW(fn(b, {}), InvalidArgument);
  try {
    ops::exp(i32);
    FAIL() << "no exception";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("Exp"), std::string::npos) << e.what();
  }
  EXPECT_THROW(call_op1("Relu", {b, b}), InvalidArgument);  // two inputs
}

// CANN's Log attributes: torch.log2 / torch.log10 (exact at powers of the base on both backends, as
// detection's level mapper floors log2 of box scales), any other base, scale and shift (log1p-like).
TEST_F(UnaryOpsTest, LogOfABaseScaleAndShift) {
  const Tensor x = floats_1d({1, 8, 1024, 0.25f, 3});
  for (const Tensor& in : {x, on_npu({x})[0]}) {
    const std::vector<double> log2 = to_vec(call_op1("Log", {in}, {{"base", 2.0}}));
    EXPECT_EQ(log2[0], 0);
    EXPECT_EQ(log2[1], 3);
    EXPECT_EQ(log2[2], 10);
    EXPECT_EQ(log2[3], -2);
    EXPECT_NEAR(log2[4], std::log2(3.0), 1e-6);
    EXPECT_EQ(to_vec(call_op1("Log", {floats_1d({1000, 0.01f})}, {{"base", 10.0}})), (std::vector<double>{3, -2}));
    EXPECT_NEAR(to_vec(call_op1("Log", {in}, {{"base", 3.0}}))[4], 1, 1e-6);
    const std::vector<double> shifted = to_vec(call_op1("Log", {in}, {{"scale", 2.0}, {"shift", 1.0}}));
    EXPECT_NEAR(shifted[1], std::log(17.0), 1e-6);
  }
  EXPECT_TRUE(mentions(error_of([&] { call_op1("Log", {x}, {{"base", 1.0}}); }), {"Log", "base"}));
  EXPECT_TRUE(mentions(error_of([&] { call_op1("Log", {x}, {{"base", -2.0}}); }), {"Log", "base"}));
}

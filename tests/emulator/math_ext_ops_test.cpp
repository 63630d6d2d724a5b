// Reciprocal, Floor, Ceil, Round, Sign, the trigonometric and hyperbolic ops, IsNaN, IsInf and Mod:
// CPU golden vs hand-computed values, NPU vs CPU in f32, f16 and bf16, round half to even, exact
// integer Sign and Mod in both modes, bool outputs, and bad inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "emulator/op_test_util.h"
#include "npuscope/emulator/dispatch.h"
#include "npuscope/emulator/errors.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

class MathExtOpsTest : public OpTest {};

struct Case {
  const char* op;
  float lo, hi;  // a domain where the op is finite
};

const std::vector<Case>& float_cases() {
  static const std::vector<Case> cases{
      {"Reciprocal", 0.1f, 10}, {"Floor", -10, 10},      {"Ceil", -10, 10}, {"Round", -10, 10},
      {"Sign", -3, 3},          {"Sin", -6, 6},          {"Cos", -6, 6},    {"Tan", -1.4f, 1.4f},
      {"Asin", -0.99f, 0.99f},  {"Acos", -0.99f, 0.99f}, {"Atan", -10, 10}, {"Sinh", -5, 5},
      {"Cosh", -5, 5},          {"Asinh", -10, 10},      {"Acosh", 1, 10},  {"Atanh", -0.95f, 0.95f},
  };
  return cases;
}

}  // namespace

TEST_F(MathExtOpsTest, CpuMatchesHandComputedValues) {
  const Tensor x = floats_1d({-0.5f, 0.25f, 0.75f});
  constexpr double kTol = 1e-7;  // the golden is rounded once to f32
  EXPECT_TRUE(
      all_close(op_values("Sin", {x}), {-0.47942553860420295, 0.24740395925452296, 0.6816387600233341}, kTol, 0));
  EXPECT_TRUE(all_close(op_values("Cos", {x}), {0.8775825618903725, 0.968912421710645, 0.731688868873821}, kTol, 0));
  EXPECT_TRUE(
      all_close(op_values("Tan", {x}), {-0.5463024898437905, 0.25534192122103627, 0.9315964599440725}, kTol, 0));
  EXPECT_TRUE(
      all_close(op_values("Asin", {x}), {-0.5235987755982989, 0.25268025514207865, 0.8480620789814809}, kTol, 0));
  EXPECT_TRUE(all_close(op_values("Acos", {x}), {2.0943951023931957, 1.318116071652818, 0.7227342478134157}, kTol, 0));
  EXPECT_TRUE(
      all_close(op_values("Atan", {x}), {-0.4636476090008061, 0.24497866312686414, 0.6435011087932844}, kTol, 0));
  EXPECT_TRUE(
      all_close(op_values("Sinh", {x}), {-0.5210953054937474, 0.2526123168081683, 0.8223167319358299}, kTol, 0));
  EXPECT_TRUE(all_close(op_values("Cosh", {x}), {1.1276259652063807, 1.031413099879573, 1.2946832846768446}, kTol, 0));
  EXPECT_TRUE(
      all_close(op_values("Asinh", {x}), {-0.48121182505960347, 0.24746646154726346, 0.6931471805599453}, kTol, 0));
  EXPECT_TRUE(
      all_close(op_values("Atanh", {x}), {-0.5493061443340549, 0.25541281188299536, 0.9729550745276566}, kTol, 0));
  EXPECT_TRUE(
      all_close(op_values("Acosh", {floats_1d({1, 2, 10})}), {0, 1.3169578969248168, 2.993222846126381}, kTol, 0));
  EXPECT_EQ(op_values("Reciprocal", {floats_1d({4, -0.5f, 0.125f})}), (std::vector<double>{0.25, -2, 8}));
  EXPECT_EQ(op_values("Floor", {floats_1d({-1.5f, -1, 0.5f, 2.9f})}), (std::vector<double>{-2, -1, 0, 2}));
  EXPECT_EQ(op_values("Ceil", {floats_1d({-1.5f, -1, 0.5f, 2.1f})}), (std::vector<double>{-1, -1, 1, 3}));
  EXPECT_EQ(op_values("Sign", {floats_1d({-3, -0.1f, 0, 0.2f, 7})}), (std::vector<double>{-1, -1, 0, 1, 1}));
}

TEST_F(MathExtOpsTest, RoundIsHalfToEvenOnBothBackends) {
  const Tensor x = floats_1d({0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 0.49999997f, 2.6f, -2.4f});
  const std::vector<double> want{0, 2, 2, -0.0, -2, -2, 0, 3, -2};
  for (DType dt : {DType::kF32, DType::kF16}) {
    const Tensor in = floats_1d({0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 0.49999997f, 2.6f, -2.4f}, dt);
    EXPECT_EQ(op_values("Round", {in}), want) << dtype_name(dt);
    EXPECT_EQ(op_values("Round", on_npu({in})), want) << dtype_name(dt);
  }
  EXPECT_TRUE(std::signbit(op_values("Round", {x})[3]));  // round(-0.5) is -0
}

TEST_F(MathExtOpsTest, NpuMatchesCpuInEveryFloatDtype) {
  for (DType dt : {DType::kF32, DType::kF16, DType::kBF16}) {
    const auto tol = default_tolerance(dt);
    for (const Case& c : float_cases()) {
      const Tensor x = Tensor::uniform({3, 129}, dt, DeviceRef::cpu(), 13, c.lo, c.hi);
      EXPECT_TRUE(all_close(op_values(c.op, on_npu({x})), op_values(c.op, {x}), tol.rtol, tol.atol))
          << c.op << " " << dtype_name(dt);
    }
  }
}

TEST_F(MathExtOpsTest, DomainErrorsAndInfinitiesFollowIeee) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor x = floats_1d({0, 2, -1, std::numeric_limits<float>::quiet_NaN()});
  for (const Tensor& in : {x, on_npu({x})[0]}) {
    EXPECT_TRUE(all_close(op_values("Reciprocal", {in}), {inf, 0.5, -1, nan}, 0, 0));
    EXPECT_TRUE(all_close(op_values("Asin", {in}), {0, nan, -M_PI / 2, nan}, 1e-7, 0));
    EXPECT_TRUE(all_close(op_values("Acosh", {in}), {nan, 1.3169578969248168, nan, nan}, 1e-7, 0));
    EXPECT_TRUE(all_close(op_values("Atanh", {in}), {0, nan, -inf, nan}, 0, 0));
    EXPECT_TRUE(all_close(op_values("Sign", {in}), {0, 1, -1, nan}, 0, 0));
  }
}

TEST_F(MathExtOpsTest, IsNaNAndIsInfGiveExactBools) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (DType dt : {DType::kF32, DType::kF16}) {
    const Tensor x = floats_1d({-inf, -1, 0, nan, 65504, inf}, dt);
    for (const Tensor& in : {x, on_npu({x})[0]}) {
      const Tensor isnan = call_op1("IsNaN", {in});
      EXPECT_EQ(isnan.dtype(), DType::kBool);
      EXPECT_EQ(bytes_of(isnan), (std::vector<std::uint8_t>{0, 0, 0, 1, 0, 0}));
      EXPECT_EQ(bytes_of(call_op1("IsInf", {in})), (std::vector<std::uint8_t>{1, 0, 0, 0, 0, 1}));
      EXPECT_EQ(bytes_of(call_op1("IsInf", {in}, {{"detect_negative", std::int64_t{0}}})),
                (std::vector<std::uint8_t>{0, 0, 0, 0, 0, 1}));
      EXPECT_EQ(bytes_of(call_op1("IsInf", {in}, {{"detect_positive", std::int64_t{0}}})),
                (std::vector<std::uint8_t>{1, 0, 0, 0, 0, 0}));
    }
  }
}

TEST_F(MathExtOpsTest, IsInfSeesTheInputsAsALoweringPrecisionModeDoes) {
  // force_fp16 lowers the f32 op to f16 on the NPU: 1e5 becomes inf there, never on the CPU.
  Runtime::configure({.precision_mode = PrecisionMode::kForceFp16});
  const Tensor x = floats_1d({1e5f, 1});
  EXPECT_EQ(bytes_of(call_op1("IsInf", {x})), (std::vector<std::uint8_t>{0, 0}));
  EXPECT_EQ(bytes_of(call_op1("IsInf", on_npu({x}))), (std::vector<std::uint8_t>{1, 0}));
}

TEST_F(MathExtOpsTest, IntegerModFollowsTheDivisorOrTheDividend) {
  const std::vector<std::int64_t> a{-4, 7, 5, 4, -7, 8}, b{2, -3, 8, -2, 3, 5};
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t kBig = (std::int64_t{1} << 60) + 1;  // not representable in f64
  for (DType dt : {DType::kI8, DType::kI32, DType::kI64}) {
    for (bool npu : {false, true}) {
      const auto put = [&](std::vector<Tensor> in) { return npu ? on_npu(in) : in; };
      const std::vector<Tensor> in = put({ints_1d(a, dt), ints_1d(b, dt)});
      const Tensor mod = call_op1("Mod", in);
      EXPECT_EQ(mod.dtype(), dt);
      EXPECT_EQ(mod.to_ints(), (std::vector<std::int64_t>{0, -2, 5, 0, 2, 3})) << dtype_name(dt);  // numpy.mod
      EXPECT_EQ(call_op1("Mod", in, {{"fmod", std::int64_t{1}}}).to_ints(),
                (std::vector<std::int64_t>{0, 1, 5, 0, -1, 3}));  // C %
    }
  }
  for (bool npu : {false, true}) {
    std::vector<Tensor> in{ints_1d({kBig, -kBig, kMin, 5, kMin}, DType::kI64), ints_1d({7, 7, -1, 0, 3}, DType::kI64)};
    if (npu) in = on_npu(in);
    // x mod 0 is 0 (numpy); INT64_MIN mod -1 is 0 instead of a trap.
    EXPECT_EQ(call_op1("Mod", in).to_ints(), (std::vector<std::int64_t>{2, 5, 0, 0, 1}));
    EXPECT_EQ(call_op1("Mod", in, {{"fmod", std::int64_t{1}}}).to_ints(), (std::vector<std::int64_t>{2, -2, 0, 0, -2}));
  }
  // Broadcasting, as in ONNX's test_mod_broadcast.
  const Tensor x = Tensor::from_ints(std::vector<std::int64_t>{-5, -4, 3, 4, 9, 10}, {2, 3}, DType::kI32);
  EXPECT_EQ(call_op1("Mod", on_npu({x, ints_1d({7}, DType::kI32)})).to_ints(),
            (std::vector<std::int64_t>{2, 3, 3, 4, 2, 3}));
}

TEST_F(MathExtOpsTest, FloatModIsExactFmod) {
  const std::vector<float> a{-4.3f, 7.2f, 5.0f, 4.3f, -7.2f, 8.0f}, b{2.1f, -3.4f, 8.0f, -2.1f, 3.4f, 5.0f};
  const Attrs fmod{{"fmod", std::int64_t{1}}};
  const std::vector<double> f32{-0.10000038146972656, 0.39999961853027344,  5,
                                0.10000038146972656,  -0.39999961853027344, 3};
  const std::vector<double> f16{-0.1015625, 0.3984375, 5, 0.1015625, -0.3984375, 3};
  for (bool npu : {false, true}) {
    const auto put = [&](std::vector<Tensor> in) { return npu ? on_npu(in) : in; };
    EXPECT_EQ(op_values("Mod", put({floats_1d(a), floats_1d(b)}), fmod), f32);
    EXPECT_EQ(op_values("Mod", put({floats_1d(a, DType::kF16), floats_1d(b, DType::kF16)}), fmod), f16);
  }
}

TEST_F(MathExtOpsTest, IntegerSignIsExact) {
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  const Tensor x = ints_1d({kMin, -3, 0, 9, std::numeric_limits<std::int64_t>::max()}, DType::kI64);
  for (const Tensor& in : {x, on_npu({x})[0]}) {
    const Tensor y = call_op1("Sign", {in});
    EXPECT_EQ(y.dtype(), DType::kI64);
    EXPECT_EQ(y.to_ints(), (std::vector<std::int64_t>{-1, -1, 0, 1, 1}));
  }
  EXPECT_EQ(call_op1("Sign", {ints_1d({0, 200}, DType::kU8)}).to_ints(), (std::vector<std::int64_t>{0, 1}));
}

TEST_F(MathExtOpsTest, CategoriesCostsAndShapes) {
  const OpRegistry& r = OpRegistry::instance();
  const std::vector<TensorMeta> in{{{4, 8}, DType::kF32}}, out{{{4, 8}, DType::kF32}};
  for (const Case& c : float_cases()) {
    EXPECT_EQ(r.schema(c.op).category, OpCategory::kVector) << c.op;
    const KernelCost cost = r.schema(c.op).cost(in, out, {});
    EXPECT_EQ(cost.unit, ComputeUnit::kVector) << c.op;
    EXPECT_GE(cost.flops, 32) << c.op;
    EXPECT_DOUBLE_EQ(cost.bytes, 2 * 32 * 4) << c.op;
  }
  EXPECT_GT(r.schema("Sin").cost(in, out, {}).flops, r.schema("Floor").cost(in, out, {}).flops);
  const Tensor x = Tensor::uniform({2, 3}, DType::kF16, DeviceRef::npu(), 1, 0.1f, 0.9f);
  for (const Case& c : float_cases()) EXPECT_EQ(call_op1(c.op, {x}).shape(), (Shape{2, 3})) << c.op;
  EXPECT_EQ(call_op1("IsNaN", {x}).shape(), (Shape{2, 3}));
}

TEST_F(MathExtOpsTest, BadInputsAreRejected) {
  const Tensor i32 = ints_1d({1, 2}, DType::kI32);
  for (const Case& c : float_cases()) {
    if (std::string(c.op) != "Sign") {
      EXPECT_THROW(call_op1(c.op, {i32}), InvalidArgument) << c.op;
    }
  }
  EXPECT_THROW(call_op1("IsNaN", {i32}), InvalidArgument);
  EXPECT_THROW(call_op1("IsInf", {i32}), InvalidArgument);
  EXPECT_THROW(call_op1("Sign", {ints_1d({1}, DType::kBool)}), InvalidArgument);
  const Tensor f = floats_1d({1, 2});
  EXPECT_THROW(call_op1("Mod", {f, f}), InvalidArgument);  // floats need fmod = 1
  EXPECT_THROW(call_op1("Mod", {i32, i32}, {{"fmod", std::int64_t{2}}}), InvalidArgument);
  EXPECT_THROW(call_op1("Mod", {i32, ints_1d({1, 2}, DType::kI64)}), InvalidArgument);
  EXPECT_THROW(call_op1("Mod", {i32, ints_1d({1, 2, 3}, DType::kI32)}), InvalidArgument);  // [2] vs [3]
  EXPECT_THROW(call_op1("Mod", {ints_1d({1}, DType::kBool), ints_1d({1}, DType::kBool)}), InvalidArgument);
}

// LeakyRelu, PRelu, Elu, Selu, Celu, HardSigmoid, HardSwish, ThresholdedRelu, Shrink, Softplus,
// Softsign, Erf: CPU golden vs hand-computed values with ONNX's defaults and attributes, NPU vs CPU
// in f32, f16 and bf16, PRelu's unidirectional broadcast, integer PRelu and Shrink, special values,
// costs and bad inputs.
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

class ActivationExtOpsTest : public OpTest {};

struct Case {
  const char* op;
  Attrs attrs;
  float lo, hi;  // a domain worth sampling
};

const std::vector<Case>& unary_cases() {
  static const std::vector<Case> cases{
      {"LeakyRelu", {}, -4, 4},
      {"LeakyRelu", {{"alpha", 0.3}}, -4, 4},
      {"Elu", {}, -6, 4},
      {"Elu", {{"alpha", 2.0}}, -6, 4},
      {"Selu", {}, -6, 4},
      {"Selu", {{"alpha", 2.0}, {"gamma", 3.0}}, -6, 4},
      {"Celu", {}, -6, 4},
      {"Celu", {{"alpha", 2.0}}, -6, 4},
      {"HardSigmoid", {}, -6, 6},
      {"HardSigmoid", {{"alpha", 0.5}, {"beta", 0.6}}, -3, 3},
      {"HardSwish", {}, -5, 5},
      {"ThresholdedRelu", {}, -3, 3},
      {"ThresholdedRelu", {{"alpha", 2.0}}, -3, 3},
      {"Shrink", {}, -2, 2},
      {"Shrink", {{"bias", 1.5}, {"lambd", 1.5}}, -4, 4},
      {"Softplus", {}, -20, 20},
      {"Softsign", {}, -10, 10},
      {"Erf", {}, -3, 3},
  };
  return cases;
}

}  // namespace

TEST_F(ActivationExtOpsTest, CpuMatchesHandComputedValues) {
  const Tensor x = floats_1d({-2, -0.5f, 0, 0.5f, 3});
  constexpr double kTol = 1e-7;  // the golden is rounded once to f32
  EXPECT_TRUE(all_close(op_values("LeakyRelu", {x}), {-0.02, -0.005, 0, 0.5, 3}, kTol, 0));
  EXPECT_TRUE(all_close(op_values("LeakyRelu", {x}, {{"alpha", 0.5}}), {-1, -0.25, 0, 0.5, 3}, kTol, 0));
  EXPECT_TRUE(all_close(op_values("Elu", {x}), {-0.8646647167633873, -0.3934693402873666, 0, 0.5, 3}, kTol, 0));
  EXPECT_TRUE(all_close(op_values("Elu", {x}, {{"alpha", 2.0}}), {-1.7293294335267746, -0.7869386805747332, 0, 0.5, 3},
                        kTol, 0));
  EXPECT_TRUE(all_close(op_values("Selu", {x}),
                        {-1.5201664733475926, -0.6917581899652425, 0, 0.5253505110740662, 3.152103066444397}, kTol, 0));
  EXPECT_TRUE(all_close(op_values("Celu", {x}, {{"alpha", 2.0}}),
                        {-1.2642411176571153, -0.44239843385719024, 0, 0.5, 3}, kTol, 0));
  EXPECT_TRUE(all_close(op_values("HardSigmoid", {x}), {0.1, 0.4, 0.5, 0.6, 1}, kTol, 0));
  EXPECT_TRUE(all_close(op_values("HardSwish", {x}),
                        {-0.33333333333333337, -0.20833333333333334, 0, 0.2916666666666667, 3}, kTol, 0));
  EXPECT_EQ(op_values("ThresholdedRelu", {x}), (std::vector<double>{0, 0, 0, 0, 3}));
  EXPECT_EQ(op_values("ThresholdedRelu", {x}, {{"alpha", 0.25}}), (std::vector<double>{0, 0, 0, 0.5, 3}));
  EXPECT_EQ(op_values("Shrink", {x}), (std::vector<double>{-2, 0, 0, 0, 3}));  // lambd 0.5: |x| <= 0.5 -> 0
  EXPECT_EQ(op_values("Shrink", {x}, {{"bias", 1.5}, {"lambd", 1.5}}), (std::vector<double>{-0.5, 0, 0, 0, 1.5}));
  EXPECT_TRUE(all_close(
      op_values("Softplus", {x}),
      {0.1269280110429725, 0.4740769841801067, 0.6931471805599453, 0.9740769841801067, 3.048587351573742}, kTol, 0));
  EXPECT_TRUE(all_close(op_values("Softsign", {x}), {-2.0 / 3, -1.0 / 3, 0, 1.0 / 3, 0.75}, kTol, 0));
  EXPECT_TRUE(all_close(op_values("Erf", {x}),
                        {-0.9953222650189527, -0.5204998778130465, 0, 0.5204998778130465, 0.9999779095030014}, kTol,
                        0));
}

TEST_F(ActivationExtOpsTest, NpuMatchesCpuInEveryFloatDtype) {
  for (DType dt : {DType::kF32, DType::kF16, DType::kBF16}) {
    const auto tol = default_tolerance(dt);
    for (const Case& c : unary_cases()) {
      const Tensor x = Tensor::uniform({3, 129}, dt, DeviceRef::cpu(), 11, c.lo, c.hi);
      const auto npu = op_values(c.op, on_npu({x}), c.attrs), cpu = op_values(c.op, {x}, c.attrs);
      EXPECT_TRUE(all_close(npu, cpu, tol.rtol, tol.atol)) << c.op << " " << dtype_name(dt);
    }
    const Tensor x = Tensor::uniform({2, 3, 8}, dt, DeviceRef::cpu(), 5, -3, 3);
    const Tensor slope = Tensor::uniform({8}, dt, DeviceRef::cpu(), 6, 0, 1);
    EXPECT_TRUE(all_close(op_values("PRelu", on_npu({x, slope})), op_values("PRelu", {x, slope}), tol.rtol, tol.atol))
        << dtype_name(dt);
  }
}

TEST_F(ActivationExtOpsTest, F16ResultsAreRoundedOnceOnBothBackends) {
  // Elu(-1) = e^-1 - 1 = -0.63212...: the nearest f16 is -0.63232421875.
  const Tensor x = floats_1d({-1, 2}, DType::kF16);
  for (const Tensor& in : {x, on_npu({x})[0]}) {
    const Tensor y = call_op1("Elu", {in});
    EXPECT_EQ(y.dtype(), DType::kF16);
    EXPECT_EQ(to_vec(y), (std::vector<double>{-0.63232421875, 2}));
  }
}

TEST_F(ActivationExtOpsTest, PReluBroadcastsSlopeToX) {
  const Tensor x = Tensor::from_floats(std::vector<float>{-1, 2, -3, 4, -5, 6}, {2, 3}, DType::kF32);
  const Tensor per_channel = floats_1d({0.1f, 0.2f, 0.3f});
  const Tensor per_row = Tensor::from_floats(std::vector<float>{0.5f, 2}, {2, 1}, DType::kF32);
  for (bool npu : {false, true}) {
    const auto in = [&](const Tensor& slope) { return npu ? on_npu({x, slope}) : std::vector<Tensor>{x, slope}; };
    EXPECT_TRUE(all_close(op_values("PRelu", in(per_channel)), {-0.1, 2, -0.9, 4, -1, 6}, 1e-7, 0));
    EXPECT_TRUE(all_close(op_values("PRelu", in(per_row)), {-0.5, 2, -1.5, 4, -10, 6}, 1e-7, 0));
    EXPECT_EQ(call_op1("PRelu", in(per_channel)).shape(), (Shape{2, 3}));
  }
  // The slope may not make the output bigger than x (unidirectional broadcast).
  const Tensor big = Tensor::zeros({4, 2, 3}, DType::kF32);
  EXPECT_THROW(call_op1("PRelu", {x, big}), InvalidArgument);
  EXPECT_THROW(call_op1("PRelu", {x, floats_1d({1, 2})}), InvalidArgument);
  EXPECT_THROW(call_op1("PRelu", {x, floats_1d({1, 2, 3}, DType::kF16)}), InvalidArgument);  // dtype mismatch
}

TEST_F(ActivationExtOpsTest, IntegerPReluAndShrinkAreExact) {
  constexpr std::int64_t kBig = (std::int64_t{1} << 60) + 1;  // not representable in f64
  const Tensor x = Tensor::from_ints(std::vector<std::int64_t>{-kBig, kBig, -3, 7}, {4}, DType::kI64);
  const Tensor slope = Tensor::from_ints(std::vector<std::int64_t>{1, 1, 2, 5}, {4}, DType::kI64);
  const Tensor s = Tensor::from_ints(std::vector<std::int64_t>{-5, -2, 0, 1, 2, 5}, {6}, DType::kI32);
  for (bool npu : {false, true}) {
    const auto put = [&](std::vector<Tensor> in) { return npu ? on_npu(in) : in; };
    const Tensor y = call_op1("PRelu", put({x, slope}));
    EXPECT_EQ(y.dtype(), DType::kI64);
    EXPECT_EQ(y.to_ints(), (std::vector<std::int64_t>{-kBig, kBig, -6, 7}));
    // ONNX Runtime's integer Shrink: compare in float, add the bias, truncate: -5 + 0.5 -> -4.
    const Tensor z = call_op1("Shrink", put({s}), {{"lambd", 1.0}, {"bias", 0.5}});
    EXPECT_EQ(z.dtype(), DType::kI32);
    EXPECT_EQ(z.to_ints(), (std::vector<std::int64_t>{-4, -1, 0, 0, 1, 4}));
  }
}

TEST_F(ActivationExtOpsTest, SpecialValues) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const float finf = std::numeric_limits<float>::infinity(), fnan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = floats_1d({-finf, finf, fnan, -100, 100});
  for (const Tensor& in : {x, on_npu({x})[0]}) {
    // Softplus never evaluates e^x for large x: softplus(100) = 100, not inf. (softplus(-100) =
    // 3.7e-44 is an f32 subnormal; the NPU's 1 + e^-100 rounds to 1 and gives 0.)
    EXPECT_TRUE(all_close(op_values("Softplus", {in}), {0, inf, nan, 3.720075976020836e-44, 100}, 1e-6, 1e-43));
    EXPECT_TRUE(all_close(op_values("Elu", {in}, {{"alpha", 2.0}}), {-2, inf, nan, -2, 100}, 0, 0));
    // inf / (1 + inf) is NaN, as in ONNX's reference x / (1 + |x|).
    EXPECT_TRUE(all_close(op_values("Softsign", {in}), {nan, nan, nan, -100.0 / 101, 100.0 / 101}, 1e-7, 0));
    EXPECT_TRUE(all_close(op_values("HardSigmoid", {in}), {0, 1, nan, 0, 1}, 0, 0));
    EXPECT_TRUE(all_close(op_values("LeakyRelu", {in}), {-inf, inf, nan, -1, 100}, 1e-7, 0));
    EXPECT_TRUE(all_close(op_values("Erf", {in}), {-1, 1, nan, -1, 1}, 0, 0));
    // NaN -> 0 where ONNX's reference uses where(x > alpha, x, 0).
    EXPECT_TRUE(all_close(op_values("ThresholdedRelu", {in}), {0, inf, 0, 0, 100}, 0, 0));
  }
}

// The golden's Erf runs four doubles at a time through libmvec (Note [Vector erf]): every f32 result
// is still erf(x) rounded once to f32, over 100,003 values (not a multiple of 4 or of the map's block)
// from -6 to 6, subnormals and zeros of both signs included.
TEST_F(ActivationExtOpsTest, GoldenErfIsTheExactValueRoundedToF32) {
  std::vector<float> x;
  for (int i = 0; i <= 100000; ++i) x.push_back(-6.0f + 12.0f * static_cast<float>(i) / 100000.0f);
  x.insert(x.end(), {1e-40f, -0.0f});
  const std::vector<double> y = op_values("Erf", {floats_1d(x)});
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float want = static_cast<float>(std::erf(static_cast<double>(x[i])));
    ASSERT_EQ(y[i], want) << "erf(" << x[i] << ")";
    ASSERT_EQ(std::signbit(y[i]), std::signbit(want)) << "erf(" << x[i] << ")";
  }
}

// The NPU's f32 Erf runs eight lanes at a time through libmvec's erff (Note [Vector math]): within its
// documented 4 ulp of the exact value, with the special values in whole vectors.
TEST_F(ActivationExtOpsTest, NpuErfIsWithinFourUlpOfTheExactValue) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x{inf, -inf, 1e-40f, -0.0f, 0.0f, 9, -9, 4.5f};
  for (int i = 0; i <= 20000; ++i) x.push_back(-6.0f + 12.0f * static_cast<float>(i) / 20000.0f);
  const std::vector<double> y = op_values("Erf", on_npu({floats_1d(x)}));
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float want = static_cast<float>(std::erf(static_cast<double>(x[i])));
    const double ulp = std::fabs(std::nextafter(want, 2 * want) - want);
    ASSERT_LE(std::fabs(y[i] - want), want == 0 || std::isinf(want) ? 0 : 4 * ulp) << "erf(" << x[i] << ")";
  }
}

TEST_F(ActivationExtOpsTest, SaturationModeClampsF16Overflow) {
  Runtime::configure({.overflow_mode = OverflowMode::kSaturation});
  const Tensor x = floats_1d({63008, 1}, DType::kF16);
  // Selu's gamma·x = 66203 rounds to inf in f16 -> 65504 in saturation mode.
  EXPECT_EQ(to_vec(call_op1("Selu", on_npu({x}))), (std::vector<double>{65504, 1.0507812500}));
}

TEST_F(ActivationExtOpsTest, CategoriesCostsAndShapes) {
  const OpRegistry& r = OpRegistry::instance();
  const std::vector<TensorMeta> in{{{8, 16}, DType::kF16}}, out{{{8, 16}, DType::kF16}};
  for (const Case& c : unary_cases()) {
    EXPECT_EQ(r.schema(c.op).category, OpCategory::kVector) << c.op;
    const KernelCost cost = r.schema(c.op).cost(in, out, c.attrs);
    EXPECT_EQ(cost.unit, ComputeUnit::kVector) << c.op;
    EXPECT_GE(cost.flops, 128) << c.op;
    EXPECT_DOUBLE_EQ(cost.bytes, 2 * 128 * 2) << c.op;
  }
  EXPECT_GT(r.schema("Softplus").cost(in, out, {}).flops, r.schema("LeakyRelu").cost(in, out, {}).flops);
  const Tensor x = Tensor::uniform({2, 3, 4}, DType::kF16, DeviceRef::npu(), 3, -1, 1);
  for (const Case& c : unary_cases()) {
    const Tensor y = call_op1(c.op, {x}, c.attrs);
    EXPECT_EQ(y.shape(), (Shape{2, 3, 4})) << c.op;
    EXPECT_EQ(y.dtype(), DType::kF16) << c.op;
  }
}

TEST_F(ActivationExtOpsTest, BadInputsAreRejected) {
  const Tensor ints = Tensor::from_ints(std::vector<std::int64_t>{1, -2}, {2}, DType::kI32);
  for (const char* op : {"LeakyRelu", "Elu", "Selu", "Celu", "HardSigmoid", "HardSwish", "ThresholdedRelu", "Softplus",
                         "Softsign", "Erf"}) {
    EXPECT_THROW(call_op1(op, {ints}), InvalidArgument) << op;
    EXPECT_THROW(call_op1(op, {floats_1d({1}), floats_1d({1})}), InvalidArgument) << op;  // one input only
  }
  const Tensor flags = Tensor::from_ints(std::vector<std::int64_t>{1, 0}, {2}, DType::kBool);
  EXPECT_THROW(call_op1("Shrink", {flags}), InvalidArgument);
  EXPECT_THROW(call_op1("PRelu", {flags, flags}), InvalidArgument);
  EXPECT_THROW(call_op1("PRelu", {floats_1d({1})}), InvalidArgument);  // slope is required
  EXPECT_THROW(call_op1("Celu", {floats_1d({1})}, {{"alpha", 0.0}}), InvalidArgument);
  try {
    call_op1("Celu", {floats_1d({1})}, {{"alpha", 0.0}});
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("Celu"), std::string::npos) << e.what();
  }
}

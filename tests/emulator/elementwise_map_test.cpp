// Add, Sub, Mul, Div and the unary ops through the blocked maps (Note [Blocked element-wise maps] in
// emulator/src/kernels/elementwise_map.h): every way an operand reaches a block (its own memory, a
// converted copy, a broadcast run, any other broadcast), outputs aliasing an input, f16 and a
// lowered compute dtype, both overflow modes, and the CPU golden. Sizes are not multiples of the
// block, and results are compared bit for bit with the op computed element by element here.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "emulator/alias_test_util.h"
#include "emulator/op_test_util.h"
#include "npuscope/emulator/float16.h"
#include "npuscope/emulator/op_registry.h"

using namespace npuscope::emulator;

namespace {

constexpr float kMax = std::numeric_limits<float>::max();
constexpr float kInf = std::numeric_limits<float>::infinity();

struct Result {
  Tensor out;
  bool overflow = false, saturated = false;
};

// Runs `op`'s kernel as the device does, output 0 fresh or written over input `alias` (-1: fresh).
Result run(const char* op, const std::vector<Tensor>& inputs, Backend backend, DType compute, OverflowMode mode,
           int alias = -1) {
  const std::optional<std::size_t> over =
      alias >= 0 ? std::optional<std::size_t>(static_cast<std::size_t>(alias)) : std::nullopt;
  const npuscope::emulator::testing::KernelRun r =
      npuscope::emulator::testing::run_kernel(op, inputs, Attrs{}, backend, compute, mode, over);
  return {r.outputs[0], r.overflow, r.saturated};
}

// Values in [lo, hi), deterministic.
std::vector<float> values(std::int64_t n, float lo, float hi, int seed) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    v[static_cast<std::size_t>(i)] = lo + (hi - lo) * std::fmod(0.618034f * static_cast<float>(i * 7 + seed), 1.0f);
  return v;
}

// Output index -> input index under numpy broadcasting.
std::int64_t source_index(std::int64_t i, const Shape& in, const Shape& out) {
  std::int64_t index = 0, stride = 1;
  for (std::size_t k = out.size(); k-- > 0;) {
    const std::int64_t coord = i % out[k];
    i /= out[k];
    const std::size_t d = k + in.size() - out.size();
    if (k + in.size() >= out.size() && in[d] != 1) index += coord * stride;
    if (k + in.size() >= out.size()) stride *= in[d];
  }
  return index;
}

using FloatOp = std::function<float(float, float)>;

// f(a, b) in f32 over the broadcast, as the NPU computes f32 (no rounding, inf_nan mode).
std::vector<double> expected_f32(const std::vector<float>& a, const Shape& sa, const std::vector<float>& b,
                                 const Shape& sb, const Shape& out, const FloatOp& f) {
  std::vector<double> r(static_cast<std::size_t>(shape_numel(out)));
  for (std::int64_t i = 0; i < shape_numel(out); ++i) {
    r[static_cast<std::size_t>(i)] =
        f(a[static_cast<std::size_t>(source_index(i, sa, out))], b[static_cast<std::size_t>(source_index(i, sb, out))]);
  }
  return r;
}

const FloatOp kAdd = [](float x, float y) { return x + y; };
const FloatOp kMul = [](float x, float y) { return x * y; };

void expect_broadcast(const Shape& sa, const Shape& sb, const Shape& out) {
  const auto a = values(shape_numel(sa), -2, 2, 1), b = values(shape_numel(sb), 0.5f, 2, 2);
  const Result r = run("Mul", {Tensor::from_floats(a, sa, DType::kF32), Tensor::from_floats(b, sb, DType::kF32)},
                       Backend::kNpu, DType::kF32, OverflowMode::kInfNan);
  EXPECT_EQ(r.out.shape(), out);
  EXPECT_EQ(r.out.to_doubles(), expected_f32(a, sa, b, sb, out, kMul)) << shape_str(sa) << " * " << shape_str(sb);
  EXPECT_FALSE(r.overflow);
}

}  // namespace

TEST(BinaryOpsTest, SameShapeF32IsExactAcrossBlocks) {
  const Shape s{3, 1001};  // 3003 elements: three blocks and a partial one
  const auto a = values(3003, -3, 3, 1), b = values(3003, 0.25f, 4, 2);
  const std::vector<std::pair<const char*, FloatOp>> ops{{"Add", kAdd},
                                                         {"Sub", [](float x, float y) { return x - y; }},
                                                         {"Mul", kMul},
                                                         {"Div", [](float x, float y) { return x / y; }}};
  for (const auto& [op, f] : ops) {
    const Result r = run(op, {Tensor::from_floats(a, s, DType::kF32), Tensor::from_floats(b, s, DType::kF32)},
                         Backend::kNpu, DType::kF32, OverflowMode::kInfNan);
    EXPECT_EQ(r.out.to_doubles(), expected_f32(a, s, b, s, s, f)) << op;
    EXPECT_FALSE(r.overflow) << op;
  }
}

TEST(BinaryOpsTest, BroadcastsScalarsRowsChannelsAndAnythingElse) {
  expect_broadcast({5, 700}, {1}, {5, 700});                      // scalar second
  expect_broadcast({1}, {5, 700}, {5, 700});                      // scalar first
  expect_broadcast({6, 1500}, {1500}, {6, 1500});                 // a row longer than a block
  expect_broadcast({40, 30}, {30}, {40, 30});                     // rows shorter than a block
  expect_broadcast({3, 16, 7, 9}, {1, 16, 1, 1}, {3, 16, 7, 9});  // a channel vector
  expect_broadcast({16, 1, 1}, {3, 16, 7, 9}, {3, 16, 7, 9});     // the same, first operand
  expect_broadcast({3, 1, 50}, {1, 40, 1}, {3, 40, 50});          // both broadcast: the general index
  expect_broadcast({4, 1, 6, 50}, {4, 1, 50}, {4, 4, 6, 50});     // dims between the covered ones
}

TEST(BinaryOpsTest, OutputMayAliasEitherInput) {
  const Shape s{2500};
  const auto a = values(2500, -1, 1, 3), b = values(2500, -1, 1, 4);
  const Tensor ta = Tensor::from_floats(a, s, DType::kF32), tb = Tensor::from_floats(b, s, DType::kF32);
  const auto want = expected_f32(a, s, b, s, s, kAdd);
  EXPECT_EQ(run("Add", {ta, tb}, Backend::kNpu, DType::kF32, OverflowMode::kInfNan, 0).out.to_doubles(), want);
  EXPECT_EQ(run("Add", {ta, tb}, Backend::kNpu, DType::kF32, OverflowMode::kInfNan, 1).out.to_doubles(), want);
  EXPECT_EQ(
      run("Add", {ta, tb}, Backend::kCpu, DType::kF32, OverflowMode::kInfNan, 0).out.to_doubles(),
      npuscope::emulator::testing::to_vec(run("Add", {ta, tb}, Backend::kCpu, DType::kF32, OverflowMode::kInfNan).out));
  // x += row, in place, with the row broadcast.
  const Shape m{25, 100}, row{100};
  const auto x = values(2500, -1, 1, 5), r = values(100, -1, 1, 6);
  const Result in_place = run("Sub", {Tensor::from_floats(x, m, DType::kF32), Tensor::from_floats(r, row, DType::kF32)},
                              Backend::kNpu, DType::kF32, OverflowMode::kInfNan, 0);
  EXPECT_EQ(in_place.out.to_doubles(), expected_f32(x, m, r, row, m, [](float p, float q) { return p - q; }));
  // x * x with the output over both inputs.
  const Tensor tx = Tensor::from_floats(x, m, DType::kF32);
  const Result square = run("Mul", {tx, tx}, Backend::kNpu, DType::kF32, OverflowMode::kInfNan, 0);
  EXPECT_EQ(square.out.to_doubles(), expected_f32(x, m, x, m, m, kMul));
}

TEST(BinaryOpsTest, F32OverflowFlagsAndSaturation) {
  const Shape s{1500};
  std::vector<float> a = values(1500, -1, 1, 7), b = values(1500, -1, 1, 8);
  a[1200] = b[1200] = 3e38f;    // +inf in the second block
  a[10] = kInf, b[10] = -kInf;  // NaN in the first
  const Tensor ta = Tensor::from_floats(a, s, DType::kF32), tb = Tensor::from_floats(b, s, DType::kF32);
  const Result inf_nan = run("Add", {ta, tb}, Backend::kNpu, DType::kF32, OverflowMode::kInfNan);
  EXPECT_TRUE(inf_nan.overflow);
  EXPECT_FALSE(inf_nan.saturated);
  const auto v = inf_nan.out.to_doubles();
  EXPECT_TRUE(std::isinf(v[1200]) && v[1200] > 0);
  EXPECT_TRUE(std::isnan(v[10]));
  const Result sat = run("Add", {ta, tb}, Backend::kNpu, DType::kF32, OverflowMode::kSaturation);
  EXPECT_TRUE(sat.overflow);
  EXPECT_TRUE(sat.saturated);
  const auto w = sat.out.to_doubles();
  EXPECT_EQ(w[1200], kMax);
  EXPECT_EQ(w[10], 0.0);
  EXPECT_EQ(w[11], v[11]);
  // Finite results raise nothing.
  const Tensor small = Tensor::from_floats(values(1500, -1, 1, 9), s, DType::kF32);
  const Result fine = run("Add", {small, small}, Backend::kNpu, DType::kF32, OverflowMode::kSaturation);
  EXPECT_FALSE(fine.overflow);
  EXPECT_FALSE(fine.saturated);
}

TEST(BinaryOpsTest, F16RoundsEachResultAndSaturatesAtItsMax) {
  const Shape s{1300};
  std::vector<float> a = values(1300, -2, 2, 9), b = values(1300, -2, 2, 10);
  a[1100] = b[1100] = 60000.0f;  // f16 overflow in the second block
  const Tensor ta = Tensor::from_floats(a, s, DType::kF16), tb = Tensor::from_floats(b, s, DType::kF16);
  const auto ha = ta.to_doubles(), hb = tb.to_doubles();
  for (OverflowMode mode : {OverflowMode::kInfNan, OverflowMode::kSaturation}) {
    const Result r = run("Mul", {ta, tb}, Backend::kNpu, DType::kF16, mode);
    const auto v = r.out.to_doubles();
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i == 1100) continue;
      ASSERT_EQ(v[i], round_to_half(static_cast<float>(ha[i]) * static_cast<float>(hb[i]))) << i;
    }
    EXPECT_TRUE(r.overflow);
    const bool saturate = mode == OverflowMode::kSaturation;
    EXPECT_EQ(r.saturated, saturate);
    EXPECT_EQ(v[1100], saturate ? 65504.0 : static_cast<double>(kInf));
  }
}

TEST(BinaryOpsTest, LoweredComputeDtypeRoundsInputsAndResults) {
  // An f32 Add lowered to f16 by the precision mode: inputs and results rounded to f16, kept in f32.
  const Shape s{1100}, row{1100};
  const auto a = values(1100, -3, 3, 11), b = values(1100, -3, 3, 12);
  const Result r = run("Add", {Tensor::from_floats(a, s, DType::kF32), Tensor::from_floats(b, row, DType::kF32)},
                       Backend::kNpu, DType::kF16, OverflowMode::kInfNan);
  EXPECT_EQ(r.out.dtype(), DType::kF32);
  const auto v = r.out.to_doubles();
  for (std::size_t i = 0; i < v.size(); ++i) {
    ASSERT_EQ(v[i], round_to_half(round_to_half(a[i]) + round_to_half(b[i]))) << i;
  }
}

TEST(BinaryOpsTest, CpuGoldenComputesInDouble) {
  const Shape s{1200}, row{1200};
  const auto a = values(1200, -3, 3, 13), b = values(1200, 0.5f, 3, 14);
  const Result r = run("Div", {Tensor::from_floats(a, s, DType::kF32), Tensor::from_floats(b, row, DType::kF32)},
                       Backend::kCpu, DType::kF32, OverflowMode::kInfNan);
  const auto v = r.out.to_doubles();
  for (std::size_t i = 0; i < v.size(); ++i) {
    ASSERT_EQ(v[i], static_cast<float>(static_cast<double>(a[i]) / static_cast<double>(b[i]))) << i;
  }
}

// Every f32 bit pattern class: normal values of every exponent, subnormals, zeros of both signs,
// infinities and NaNs, from random bits (seeded).
std::vector<float> any_floats(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> v(n);
  for (auto& x : v) x = std::bit_cast<float>(static_cast<std::uint32_t>(rng()));
  const float specials[] = {0.0f,
                            -0.0f,
                            kInf,
                            -kInf,
                            std::numeric_limits<float>::quiet_NaN(),
                            kMax,
                            -kMax,
                            std::numeric_limits<float>::denorm_min(),
                            1.0f,
                            2.0f};
  for (std::size_t i = 0; i < std::size(specials) && i < n; ++i) v[i * 7 % n] = specials[i];
  return v;
}

// The same float, NaN for NaN.
bool same_bits(double got, float want) {
  return std::isnan(want) ? std::isnan(got) : got == want && std::signbit(got) == std::signbit(want);
}

// Note [Golden maps in f32]: with f32 operands and output the CPU golden's +, -, *, / and sqrt run in
// float, and must give exactly the f64 result rounded once to f32, with the same overflow flag, over
// every kind of value (subnormal results, overflow to inf, NaN) and under broadcasting.
TEST(BinaryOpsTest, CpuGoldenF32MapsAreTheDoubleResultRoundedOnce) {
  const Shape s{3, 1500}, row{1500};
  const auto a = any_floats(4500, 21), b = any_floats(1500, 22);
  const Tensor ta = Tensor::from_floats(a, s, DType::kF32), tb = Tensor::from_floats(b, row, DType::kF32);
  const std::pair<const char*, std::function<double(double, double)>> ops[] = {{"Add", std::plus<double>()},
                                                                               {"Sub", std::minus<double>()},
                                                                               {"Mul", std::multiplies<double>()},
                                                                               {"Div", std::divides<double>()}};
  for (const auto& [op, f] : ops) {
    const Result r = run(op, {ta, tb}, Backend::kCpu, DType::kF32, OverflowMode::kInfNan);
    const auto v = r.out.to_doubles();
    bool nonfinite = false;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const float want = static_cast<float>(f(a[i], b[i % 1500]));
      nonfinite = nonfinite || !std::isfinite(want);
      ASSERT_TRUE(same_bits(v[i], want)) << op << " " << a[i] << ", " << b[i % 1500] << ": " << v[i] << " vs " << want;
    }
    EXPECT_EQ(r.overflow, nonfinite) << op;
  }
  // Finite operands whose product, sum or quotient leaves f32's range: the flag comes from the result.
  const Tensor big = Tensor::from_floats(std::vector<float>(1100, 3e38f), Shape{1100}, DType::kF32);
  for (const char* op : {"Add", "Mul"}) {
    const Result r = run(op, {big, big}, Backend::kCpu, DType::kF32, OverflowMode::kInfNan);
    EXPECT_TRUE(r.overflow) << op;
    EXPECT_TRUE(std::isinf(r.out.to_doubles()[1099])) << op;
  }
  // x^2 (Pow with the one exponent 2), sqrt and the exact maps.
  const Tensor two = Tensor::from_floats(std::vector<float>{2.0f}, Shape{1}, DType::kF32);
  const auto sq = run("Pow", {ta, two}, Backend::kCpu, DType::kF32, OverflowMode::kInfNan).out.to_doubles();
  const auto rt = run("Sqrt", {ta}, Backend::kCpu, DType::kF32, OverflowMode::kInfNan).out.to_doubles();
  const auto ab = run("Abs", {ta}, Backend::kCpu, DType::kF32, OverflowMode::kInfNan).out.to_doubles();
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double x = a[i];
    ASSERT_TRUE(same_bits(sq[i], static_cast<float>(x * x))) << a[i];
    ASSERT_TRUE(same_bits(rt[i], static_cast<float>(std::sqrt(x)))) << a[i];
    ASSERT_TRUE(same_bits(ab[i], static_cast<float>(std::fabs(x)))) << a[i];
  }
}

TEST(BinaryOpsTest, IntegerDivisionTruncatesAndDividesByZeroToZero) {
  const Shape s{2000};
  std::vector<std::int64_t> a(2000), b(2000);
  for (std::int64_t i = 0; i < 2000; ++i)
    a[static_cast<std::size_t>(i)] = i - 1000, b[static_cast<std::size_t>(i)] = i % 7 - 3;
  const Result r = run("Div", {Tensor::from_ints(a, s, DType::kI32), Tensor::from_ints(b, s, DType::kI32)},
                       Backend::kNpu, DType::kI32, OverflowMode::kInfNan);
  const auto v = r.out.to_doubles();
  for (std::size_t i = 0; i < v.size(); ++i) {
    ASSERT_EQ(v[i], b[i] == 0 ? 0.0 : static_cast<double>(a[i] / b[i])) << i;
  }
}

TEST(UnaryMapTest, InPlaceAcrossBlocksAndF16Saturation) {
  const Shape s{2100};
  const auto a = values(2100, -3, 3, 15);
  const Tensor ta = Tensor::from_floats(a, s, DType::kF32);
  const Result relu = run("Relu", {ta}, Backend::kNpu, DType::kF32, OverflowMode::kInfNan, 0);
  const Result exp = run("Exp", {ta}, Backend::kNpu, DType::kF32, OverflowMode::kInfNan);
  const auto r = relu.out.to_doubles(), e = exp.out.to_doubles();
  for (std::size_t i = 0; i < r.size(); ++i) {
    ASSERT_EQ(r[i], a[i] > 0 ? a[i] : 0.0f) << i;
    // libmvec's exp (Note [Vector math]): within its 4 ulp of the exact value.
    const double exact = std::exp(static_cast<double>(a[i]));
    ASSERT_LE(std::fabs(e[i] - exact), 4 * std::fabs(std::nextafter(static_cast<float>(exact), 0.0f) - exact)) << i;
  }
  // exp(12) = 162755 is above f16's 65504: inf in inf_nan, 65504 in saturation, in the second block.
  std::vector<float> h = values(1500, -2, 2, 16);
  h[1400] = 12.0f;
  const Tensor th = Tensor::from_floats(h, Shape{1500}, DType::kF16);
  const Result inf_nan = run("Exp", {th}, Backend::kNpu, DType::kF16, OverflowMode::kInfNan);
  const Result sat = run("Exp", {th}, Backend::kNpu, DType::kF16, OverflowMode::kSaturation, 0);
  EXPECT_TRUE(inf_nan.overflow);
  EXPECT_FALSE(inf_nan.saturated);
  EXPECT_TRUE(sat.overflow && sat.saturated);
  const auto hv = th.to_doubles(), vi = inf_nan.out.to_doubles(), vs = sat.out.to_doubles();
  EXPECT_TRUE(std::isinf(vi[1400]));
  EXPECT_EQ(vs[1400], 65504.0);
  for (std::size_t i = 0; i < vs.size(); ++i) {
    if (i == 1400) continue;
    ASSERT_EQ(vs[i], round_to_half(std::exp(static_cast<float>(hv[i])))) << i;
  }
}

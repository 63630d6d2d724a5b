// Where and Cast: hand-computed values on both backends (which must agree bit for bit: nothing is
// approximated), three-way broadcasting, exact bytes, conversions that rounding twice would get
// wrong, truncation, wrap-around and bool, saturation of a cast on the NPU, and bad arguments.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "emulator/op_test_util.h"
#include "npuscope/emulator/errors.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

class SelectCastOpsTest : public OpTest {};

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Casts `x` on both backends; checks they agree byte for byte and returns the values.
std::vector<double> cast_both(const Tensor& x, DType to) {
  const Tensor cpu = ops::cast(x, to);
  const Tensor npu = ops::cast(on_npu({x})[0], to);
  EXPECT_EQ(cpu.dtype(), to);
  EXPECT_EQ(bytes_of(npu), bytes_of(cpu)) << dtype_name(x.dtype()) << " -> " << dtype_name(to);
  return to_vec(cpu);
}

}  // namespace

TEST_F(SelectCastOpsTest, WhereSelectsWithThreeWayBroadcast) {
  const Tensor cond = ints_1d({1, 0}, DType::kBool).view({2, 1});
  const Tensor a = floats_1d({1, 2, 3}).view({1, 3});
  const Tensor b = floats_1d({-1});
  for (const bool npu : {false, true}) {
    const auto in = npu ? on_npu({cond, a, b}) : std::vector<Tensor>{cond, a, b};
    const Tensor y = ops::where(in[0], in[1], in[2]);
    EXPECT_EQ(y.shape(), (Shape{2, 3}));
    EXPECT_EQ(y.dtype(), DType::kF32);
    EXPECT_EQ(to_vec(y), (std::vector<double>{1, 2, 3, -1, -1, -1}));
  }
}

TEST_F(SelectCastOpsTest, WhereConditionOfAnyDtypeIsNonZero) {
  // -0 is zero; NaN is not.
  const Tensor cond = floats_1d({0, -0.0f, 2, std::numeric_limits<float>::quiet_NaN()});
  const Tensor a = ints_1d({10, 11, 12, 13}, DType::kI32), b = ints_1d({20, 21, 22, 23}, DType::kI32);
  for (const auto& in : {std::vector<Tensor>{cond, a, b}, on_npu({cond, a, b})}) {
    EXPECT_EQ(ops::where(in[0], in[1], in[2]).to_ints(), (std::vector<std::int64_t>{20, 21, 12, 13}));
  }
}

TEST_F(SelectCastOpsTest, WhereCopiesBytesExactly) {
  // int64 beyond 2^53 and a NaN with a payload survive only if nothing converts through float.
  const std::int64_t big = (std::int64_t{1} << 60) + 1;
  const Tensor cond = ints_1d({1, 0, 1}, DType::kBool);
  const Tensor a = ints_1d({big, 0, -big}, DType::kI64), b = ints_1d({7, -big, 7}, DType::kI64);
  const std::vector<std::int64_t> expected{big, -big, -big};
  EXPECT_EQ(ops::where(cond, a, b).to_ints(), expected);
  const auto in = on_npu({cond, a, b});
  EXPECT_EQ(ops::where(in[0], in[1], in[2]).to_ints(), expected);

  const std::uint16_t payload_nan = 0x7e01, one = 0x3c00;
  const std::uint16_t fa[2] = {payload_nan, one}, fb[2] = {one, one};
  const Tensor ha = Tensor::from_bytes(fa, {2}, DType::kF16), hb = Tensor::from_bytes(fb, {2}, DType::kF16);
  const Tensor y = ops::where(on_npu({ints_1d({1, 1}, DType::kBool)})[0], on_npu({ha})[0], on_npu({hb})[0]);
  EXPECT_EQ(bytes_of(y), bytes_of(ha));
}

TEST_F(SelectCastOpsTest, WhereRejectsMismatchedDtypesAndShapes) {
  const Tensor c = ints_1d({1, 0}, DType::kBool);
  EXPECT_THROW(ops::where(c, floats_1d({1, 2}), floats_1d({1, 2}, DType::kF16)), InvalidArgument);
  EXPECT_THROW(ops::where(c, floats_1d({1, 2, 3}), floats_1d({1, 2, 3})), InvalidArgument);  // cond [2] vs [3]
  EXPECT_THROW(ops::where(ints_1d({1, 0, 1}, DType::kBool), floats_1d({1, 2}), floats_1d({1})), InvalidArgument);
}

TEST_F(SelectCastOpsTest, CastFloatToIntTruncatesTowardZero) {
  const Tensor x = floats_1d({1.9f, -1.9f, 2.5f, -0.5f, static_cast<float>(kNaN), 3e9f, -3e9f});
  EXPECT_EQ(cast_both(x, DType::kI32), (std::vector<double>{1, -1, 2, 0, 0, 2147483647, -2147483648.0}));
  EXPECT_EQ(cast_both(x, DType::kI64), (std::vector<double>{1, -1, 2, 0, 0, 3e9, -3e9}));
  EXPECT_EQ(cast_both(floats_1d({300, -5, 255.9f}), DType::kU8), (std::vector<double>{255, 0, 255}));
}

TEST_F(SelectCastOpsTest, CastIntToFloatRoundsOnceToNearestEven) {
  // 2^24 + 1 -> f32 ties to even (2^24); 2^24 + 3 -> 2^24 + 4.
  EXPECT_EQ(cast_both(ints_1d({16777217, 16777219, -16777217}, DType::kI32), DType::kF32),
            (std::vector<double>{16777216, 16777220, -16777216}));
  // i64 -> f16: 2049 ties to 2048, 2051 to 2052; 65519 rounds to 65504, 65520 overflows.
  EXPECT_TRUE(all_close(cast_both(ints_1d({2049, 2051, 65519, 65520, -70000}, DType::kI64), DType::kF16),
                        {2048, 2052, 65504, kInf, -kInf}, 0, 0));
  // i64 -> bf16: 2^25 + 2^17 + 1 is just above a bf16 half-way point, so it rounds up to 2^25 + 2^18.
  // Through f32 first it would become 2^25 + 2^17 exactly, then tie down to 2^25.
  const std::int64_t v = (std::int64_t{1} << 25) + (1 << 17) + 1;
  EXPECT_EQ(cast_both(ints_1d({v, -v}, DType::kI64), DType::kBF16), (std::vector<double>{33816576, -33816576}));
  // A chain of casts: i64 -> f32 -> f16.
  const Tensor f32 = ops::cast(ints_1d({3, 100000}, DType::kI64), DType::kF32);
  EXPECT_TRUE(all_close(to_vec(ops::cast(f32, DType::kF16)), {3, kInf}, 0, 0));
  // int64 beyond 2^53 -> f64 rounds once.
  const std::int64_t big = (std::int64_t{1} << 60) + 1;
  EXPECT_EQ(cast_both(ints_1d({big}, DType::kI64), DType::kF64), (std::vector<double>{1152921504606846976.0}));
}

TEST_F(SelectCastOpsTest, CastF64ToF16RoundsOnce) {
  // 1 + 2^-11 + 2^-40 is just above the half-way point between the f16 values 1 and 1 + 2^-10:
  // rounded once it is 1 + 2^-10; through f32 (which drops 2^-40) it would tie down to 1.
  const double d[3] = {1 + std::ldexp(1, -11) + std::ldexp(1, -40), 1e300, 0.1};
  const Tensor x = Tensor::from_bytes(d, {3}, DType::kF64);
  EXPECT_TRUE(all_close(cast_both(x, DType::kF16), {1.0009765625, kInf, 0.0999755859375}, 0, 0));
  EXPECT_TRUE(all_close(cast_both(x, DType::kF32), {1.0004882812500000, kInf, 0.10000000149011612}, 0, 0));
  EXPECT_TRUE(all_close(cast_both(floats_1d({0.1f, 1e5f}), DType::kF64), {0.10000000149011612, 1e5}, 0, 0));
}

TEST_F(SelectCastOpsTest, CastBetweenFloatsAndBool) {
  EXPECT_TRUE(all_close(cast_both(floats_1d({0.1f, 1e5f, -1e-8f}), DType::kF16), {0.0999755859375, kInf, -0.0}, 0, 0));
  EXPECT_EQ(cast_both(floats_1d({0.1f, 1.0f}, DType::kF16), DType::kF32), (std::vector<double>{0.0999755859375, 1}));
  EXPECT_EQ(cast_both(floats_1d({1.00390625f, 3.0f}), DType::kBF16), (std::vector<double>{1.0, 3.0}));
  EXPECT_EQ(cast_both(floats_1d({0, -0.0f, 0.5f, static_cast<float>(kNaN)}), DType::kBool),
            (std::vector<double>{0, 0, 1, 1}));
  EXPECT_EQ(cast_both(ints_1d({0, 5, -1}, DType::kI32), DType::kBool), (std::vector<double>{0, 1, 1}));
  EXPECT_EQ(cast_both(ints_1d({1, 0}, DType::kBool), DType::kF16), (std::vector<double>{1, 0}));
}

TEST_F(SelectCastOpsTest, CastIntToIntWrapsAsInC) {
  EXPECT_EQ(cast_both(ints_1d({300, -1, 255}, DType::kI64), DType::kU8), (std::vector<double>{44, 255, 255}));
  EXPECT_EQ(cast_both(ints_1d({(std::int64_t{1} << 40) + 5, -129}, DType::kI64), DType::kI32),
            (std::vector<double>{5, -129}));
  EXPECT_EQ(cast_both(ints_1d({-129, 127}, DType::kI32), DType::kI8), (std::vector<double>{127, 127}));
  const Tensor same = ints_1d({(std::int64_t{1} << 60) + 1}, DType::kI64);
  EXPECT_EQ(ops::cast(same, DType::kI64).to_ints(), same.to_ints());
}

TEST_F(SelectCastOpsTest, CastOnNpuSaturatesInSaturationMode) {
  Runtime::get().device().set_overflow_mode(OverflowMode::kSaturation);
  const Tensor x = on_npu({floats_1d({1e5f, -1e5f, 2})})[0];
  EXPECT_EQ(to_vec(ops::cast(x, DType::kF16)), (std::vector<double>{65504, -65504, 2}));
  EXPECT_TRUE(Runtime::get().device().float_status());
  // The CPU golden keeps IEEE results.
  EXPECT_TRUE(all_close(to_vec(ops::cast(floats_1d({1e5f}), DType::kF16)), {kInf}, 0, 0));
}

TEST_F(SelectCastOpsTest, CastRejectsBadTargets) {
  const Tensor x = floats_1d({1});
  EXPECT_THROW(call_op1("Cast", {x}, {{"to", std::int64_t{99}}}), InvalidArgument);
  EXPECT_THROW(call_op1("Cast", {x}, {{"to", std::int64_t{-1}}}), InvalidArgument);
  EXPECT_THROW(call_op1("Cast", {x}, {}), InvalidArgument);
  EXPECT_THROW(call_op1("Cast", {x}, {{"to", std::string("f16")}}), InvalidArgument);
}

TEST_F(SelectCastOpsTest, CategoriesAndCosts) {
  const OpRegistry& r = OpRegistry::instance();
  EXPECT_EQ(r.schema("Where").category, OpCategory::kDataMovement);
  EXPECT_EQ(r.schema("Cast").category, OpCategory::kDataMovement);
  const std::vector<TensorMeta> in{{{64}, DType::kF32}}, out{{{64}, DType::kF16}};
  const KernelCost c = r.schema("Cast").cost(in, out, {{"to", std::int64_t{1}}});
  EXPECT_EQ(c.unit, ComputeUnit::kVector);
  EXPECT_DOUBLE_EQ(c.bytes, 64 * 4 + 64 * 2);
}

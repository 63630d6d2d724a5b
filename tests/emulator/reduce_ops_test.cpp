// ReduceSum, ReduceMean, ReduceMax: hand-computed values on the CPU (several axes, negative axes,
// keepdims, all axes, NaN, empty reductions, exact i64 sums), NPU vs CPU in f32 and f16 against an
// f64 reference, the precision categories under allow_mix_precision, and bad axes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "emulator/op_test_util.h"
#include "npuscope/emulator/errors.h"

using namespace npuscope::emulator;
using npuscope::emulator::ops::Ints;
using namespace npuscope::emulator::testing;

namespace {

class ReduceOpsTest : public OpTest {};

using V = std::vector<double>;

enum class Kind { kSum, kMean, kMax };

Tensor reduce(Kind k, const Tensor& x, const Ints& axes, bool keepdims) {
  switch (k) {
    case Kind::kSum: return ops::reduce_sum(x, axes, keepdims);
    case Kind::kMean: return ops::reduce_mean(x, axes, keepdims);
    case Kind::kMax: return ops::reduce_max(x, axes, keepdims);
  }
  return {};
}

}  // namespace

TEST_F(ReduceOpsTest, CpuHandComputedOverOneAxis) {
  const Tensor x = floats({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor rows = ops::reduce_sum(x, {1}, true);
  EXPECT_EQ(rows.shape(), (Shape{2, 1}));
  EXPECT_EQ(to_vec(rows), (V{6, 15}));
  const Tensor cols = ops::reduce_sum(x, {0}, false);
  EXPECT_EQ(cols.shape(), (Shape{3}));
  EXPECT_EQ(to_vec(cols), (V{5, 7, 9}));
  EXPECT_EQ(to_vec(ops::reduce_mean(x, {-1}, false)), (V{2, 5}));
  EXPECT_EQ(to_vec(ops::reduce_max(floats({1, 7, -3, -4, -5, -2}, {2, 3}), {1}, false)), (V{7, -2}));
}

TEST_F(ReduceOpsTest, CpuHandComputedOverSeveralAndAllAxes) {
  // x[i][j][k] = 12i + 4j + k over [2, 3, 4].
  std::vector<float> v(24);
  for (int i = 0; i < 24; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i);
  const Tensor x = floats(v, {2, 3, 4});
  const Tensor s = ops::reduce_sum(x, {0, -1}, true);  // over i and k: sum = 2*4*4j + 4*(0+12) + 2*(0+1+2+3)
  EXPECT_EQ(s.shape(), (Shape{1, 3, 1}));
  EXPECT_EQ(to_vec(s), (V{60, 92, 124}));
  const Tensor m = ops::reduce_mean(x, {2, 0}, false);
  EXPECT_EQ(m.shape(), (Shape{3}));
  EXPECT_EQ(to_vec(m), (V{7.5, 11.5, 15.5}));
  const Tensor all = ops::reduce_sum(x, {}, false);
  EXPECT_EQ(all.shape(), (Shape{}));
  EXPECT_EQ(to_vec(all), (V{276}));
  const Tensor all_kept = ops::reduce_max(x, {}, true);
  EXPECT_EQ(all_kept.shape(), (Shape{1, 1, 1}));
  EXPECT_EQ(to_vec(all_kept), (V{23}));
  EXPECT_EQ(to_vec(ops::reduce_mean(x, {0, 1, 2}, false)), (V{11.5}));
  // noop_with_empty_axes (ONNX): empty axes reduce nothing.
  const Tensor same = call_op1("ReduceSum", {x}, Attrs{{"axes", Ints{}}, {"noop_with_empty_axes", std::int64_t{1}}});
  EXPECT_EQ(to_vec(same), to_vec(x));
}

TEST_F(ReduceOpsTest, NanEmptyAndIntegerCases) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const Tensor x = floats({1, std::nanf(""), 3, 4}, {2, 2});
  for (const Tensor& t : {x, on_npu({x})[0]}) {
    EXPECT_TRUE(all_close(to_vec(ops::reduce_max(t, {1}, false)), {nan, 4}, 0, 0));
    EXPECT_TRUE(all_close(to_vec(ops::reduce_sum(t, {1}, false)), {nan, 7}, 0, 0));
    EXPECT_TRUE(all_close(to_vec(ops::reduce_max(t, {0}, false)), {3, nan}, 0, 0));  // row-wise path
  }
  // Reducing a zero-size axis: sum 0, mean NaN, max -inf.
  const Tensor empty = Tensor::zeros({2, 0}, DType::kF32);
  EXPECT_EQ(to_vec(ops::reduce_sum(empty, {1}, false)), (V{0, 0}));
  EXPECT_TRUE(all_close(to_vec(ops::reduce_mean(empty, {1}, false)), {nan, nan}, 0, 0));
  EXPECT_EQ(to_vec(ops::reduce_max(empty, {1}, false)), (V{-inf, -inf}));
  const Tensor empty_rows = Tensor::zeros({0, 2}, DType::kF32);
  EXPECT_EQ(to_vec(ops::reduce_sum(empty_rows, {0}, false)), (V{0, 0}));
  EXPECT_EQ(to_vec(ops::reduce_max(on_npu({empty_rows})[0], {0}, true)), (V{-inf, -inf}));
  // i64 sums are exact beyond 2^53 on both backends; i32 max and mean (truncated).
  const std::int64_t big = (std::int64_t{1} << 60) + 1;
  const Tensor ints = Tensor::from_ints(std::vector<std::int64_t>{big, 3, -1, big, big, -big}, {2, 3}, DType::kI64);
  for (const Tensor& t : {ints, on_npu({ints})[0]}) {
    EXPECT_EQ(ops::reduce_sum(t, {1}, false).to_ints(), (std::vector<std::int64_t>{big + 2, big}));
    EXPECT_EQ(ops::reduce_max(t, {0}, false).to_ints(), (std::vector<std::int64_t>{big, big, -1}));
  }
  const Tensor i32 = Tensor::from_ints(std::vector<std::int64_t>{-7, 2, 5, 4}, {2, 2}, DType::kI32);
  EXPECT_EQ(ops::reduce_mean(i32, {1}, false).to_ints(), (std::vector<std::int64_t>{-2, 4}));
  EXPECT_EQ(ops::reduce_max(on_npu({i32})[0], {}, false).to_ints(), (std::vector<std::int64_t>{5}));
}

TEST_F(ReduceOpsTest, NpuMatchesCpuInF32AndF16) {
  const Shape shape{4, 37, 129};
  for (DType t : {DType::kF32, DType::kF16}) {
    const Tensor x = Tensor::randn(shape, t, DeviceRef::cpu(), 21);
    const Tensor xn = on_npu({x})[0];
    for (const Ints& axes : {Ints{-1}, Ints{0}, Ints{1}, Ints{0, 2}, Ints{}}) {
      for (Kind k : {Kind::kSum, Kind::kMean, Kind::kMax}) {
        const Tensor cpu = reduce(k, x, axes, true);
        const Tensor npu = reduce(k, xn, axes, true);
        ASSERT_EQ(npu.shape(), cpu.shape());
        // The default tolerance holds even for the 19092-value sum over all axes, thanks to the
        // lane accumulation (see LaneAccumulationStaysCloseToF64).
        const auto tol = default_tolerance(t);
        EXPECT_TRUE(all_close(to_vec(npu), to_vec(cpu), tol.rtol, tol.atol))
            << dtype_name(t) << " kind " << static_cast<int>(k) << " axes " << shape_str(axes);
      }
    }
  }
}

TEST_F(ReduceOpsTest, LaneAccumulationStaysCloseToF64) {
  // 1e5 values of 0.1: a single f32 running sum gives 9998.557 (1.4e-4 relative error); 64 lanes
  // folded by a tree give 10000.021 (2.1e-6).
  const std::vector<float> v(100000, 0.1f);
  const double exact = 100000.0 * static_cast<double>(0.1f);
  const Tensor x = floats(v, {100000});
  EXPECT_TRUE(all_close(to_vec(ops::reduce_sum(on_npu({x})[0], {}, false)), {exact}, 5e-6, 0));
  EXPECT_TRUE(all_close(to_vec(ops::reduce_mean(on_npu({x})[0], {}, false)), {exact / 1e5}, 5e-6, 0));
}

TEST_F(ReduceOpsTest, NpuChannelSumsEqualTheLaneSumsOfEachChannelsValues) {
  // Over (0, 2, 3) the NPU reads the planes in place (Note [Channel sums in place]); its sums must be
  // those of the same values laid out as one row per channel, bit for bit. 7x7 planes start at every
  // lane offset.
  const std::int64_t n = 5, c = 6, hw = 49;
  const Tensor x = Tensor::randn({n, c, 7, 7}, DType::kF32, DeviceRef::cpu(), 31);
  const auto v = to_vec(x);
  std::vector<float> rows(v.size());
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t ch = 0; ch < c; ++ch)
      for (std::int64_t k = 0; k < hw; ++k)
        rows[static_cast<std::size_t>((ch * n + i) * hw + k)] =
            static_cast<float>(v[static_cast<std::size_t>((i * c + ch) * hw + k)]);
  const Tensor xn = on_npu({x})[0], rn = on_npu({floats(rows, {c, n * hw})})[0];
  for (Kind k : {Kind::kSum, Kind::kMean}) {
    const Tensor planes = reduce(k, xn, {0, 2, 3}, false), kept = reduce(k, xn, {0, 2, 3}, true);
    EXPECT_EQ(planes.shape(), (Shape{c}));
    EXPECT_EQ(kept.shape(), (Shape{1, c, 1, 1}));
    EXPECT_EQ(to_vec(planes), to_vec(reduce(k, rn, {1}, false))) << static_cast<int>(k);
    EXPECT_EQ(to_vec(kept), to_vec(planes));
  }
}

TEST_F(ReduceOpsTest, MixPrecisionKeepsSumInF32ButLowersMax) {
  Runtime::configure({.precision_mode = PrecisionMode::kAllowMixPrecision});
  const Tensor x = floats({1.0001f, 2.0f}, {2});
  // ReduceSum is precision-sensitive: f32. ReduceMax is a vector op: rounded to f16 (1.0001 -> 1).
  EXPECT_TRUE(all_close(to_vec(ops::reduce_sum(on_npu({x})[0], {}, false)), {3.0001}, 1e-6, 0));
  EXPECT_EQ(to_vec(ops::reduce_max(on_npu({floats({1.0001f, 0.5f}, {2})})[0], {}, false)), (V{1.0}));
}

TEST_F(ReduceOpsTest, RejectsBadAxes) {
  const Tensor x = floats({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_THROW(ops::reduce_sum(x, {2}, true), InvalidArgument);
  EXPECT_THROW(ops::reduce_mean(x, {-3}, true), InvalidArgument);
  EXPECT_THROW(ops::reduce_max(x, {1, -1}, true), InvalidArgument);  // the same axis twice
}

TEST_F(ReduceOpsTest, CostCountsOneOpPerInputElement) {
  const auto& schema = OpRegistry::instance().schema("ReduceSum");
  EXPECT_EQ(schema.category, OpCategory::kPrecisionSensitive);
  EXPECT_EQ(OpRegistry::instance().schema("ReduceMax").category, OpCategory::kVector);
  const std::vector<TensorMeta> in{{{8, 16}, DType::kF32}};
  const auto out = schema.infer(in, Attrs{{"axes", Ints{1}}, {"keepdims", std::int64_t{0}}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (Shape{8}));
  const KernelCost c = schema.cost(in, out, {});
  EXPECT_EQ(c.flops, 128);
  EXPECT_EQ(c.bytes, 4.0 * (128 + 8));
}

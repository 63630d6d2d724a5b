// ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum, ReduceLogSumExp:
// hand-computed values on the CPU (one axis, several, all, keepdims, noop_with_empty_axes), empty
// reductions, NaN, overflow-free LogSumExp, exact integers, NPU vs CPU in f32 and f16, the precision
// categories under allow_mix_precision, and bad axes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "emulator/ext_op_test_util.h"
#include "npuscope/emulator/errors.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;
using npuscope::emulator::ops::Ints;

namespace {

class ReduceExtOpsTest : public OpTest {};

const char* const kOps[] = {"ReduceMin",       "ReduceProd",   "ReduceL1",       "ReduceL2",
                            "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"};

Tensor reduce(const char* op, const Tensor& x, const Ints& axes, bool keepdims = false) {
  return call_op1(op, {x}, {{"axes", axes}, {"keepdims", std::int64_t{keepdims ? 1 : 0}}});
}

// Values stored to f32 by the CPU kernel, to compare with hand-computed doubles.
Doubles as_f32(Doubles v) {
  for (auto& e : v) e = static_cast<float>(e);
  return v;
}

}  // namespace

TEST_F(ReduceExtOpsTest, CpuHandComputedOverOneAxis) {
  const Tensor x = floats({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(to_vec(reduce("ReduceMin", x, {1})), (Doubles{1, 4}));
  EXPECT_EQ(to_vec(reduce("ReduceMin", x, {0})), (Doubles{1, 2, 3}));
  EXPECT_EQ(to_vec(reduce("ReduceProd", x, {1})), (Doubles{6, 120}));
  EXPECT_EQ(to_vec(reduce("ReduceProd", x, {0})), (Doubles{4, 10, 18}));
  EXPECT_EQ(to_vec(reduce("ReduceL1", floats({-1, 2, -3, 4, -5, 6}, {2, 3}), {1})), (Doubles{6, 15}));
  EXPECT_EQ(to_vec(reduce("ReduceL2", floats({3, 4, 0, 0, 5, 12}, {2, 3}), {-1})), (Doubles{5, 13}));
  EXPECT_EQ(to_vec(reduce("ReduceSumSquare", x, {1})), (Doubles{14, 77}));
  EXPECT_EQ(to_vec(reduce("ReduceSumSquare", x, {0})), (Doubles{17, 29, 45}));
  EXPECT_EQ(to_vec(reduce("ReduceLogSum", x, {1})), as_f32({std::log(6.0), std::log(15.0)}));
  const double e = std::exp(1.0);
  EXPECT_EQ(to_vec(reduce("ReduceLogSumExp", x, {1})),
            as_f32({std::log(e + e * e + e * e * e), std::log(std::pow(e, 4) + std::pow(e, 5) + std::pow(e, 6))}));
}

TEST_F(ReduceExtOpsTest, SeveralAndAllAxesAndKeepdims) {
  // x[i][j][k] = 12i + 4j + k + 1 over [2, 3, 4].
  std::vector<float> v(24);
  for (int i = 0; i < 24; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i + 1);
  const Tensor x = floats(v, {2, 3, 4});
  const Tensor m = reduce("ReduceMin", x, {0, 2}, true);
  EXPECT_EQ(m.shape(), (Shape{1, 3, 1}));
  EXPECT_EQ(to_vec(m), (Doubles{1, 5, 9}));
  const Tensor all = call_op1("ReduceSumSquare", {x}, {});  // no axes: all, keepdims defaults to 1
  EXPECT_EQ(all.shape(), (Shape{1, 1, 1}));
  EXPECT_EQ(to_vec(all), (Doubles{4900}));  // Σ k² for k = 1..24
  EXPECT_EQ(to_vec(reduce("ReduceL1", x, {})), (Doubles{300}));
  const Tensor p = reduce("ReduceProd", floats({1, 2, 3, 4}, {2, 1, 2}), {-1, 0});
  EXPECT_EQ(p.shape(), (Shape{1}));
  EXPECT_EQ(to_vec(p), (Doubles{24}));
  // noop_with_empty_axes: each element is reduced alone (|x| for L1 / L2, x² for SumSquare).
  const Attrs noop{{"axes", Ints{}}, {"noop_with_empty_axes", std::int64_t{1}}};
  const Tensor signs = floats({-2, 3}, {2});
  EXPECT_EQ(bytes_of(call_op1("ReduceMin", {x}, noop)), bytes_of(x));
  EXPECT_EQ(to_vec(call_op1("ReduceL2", {signs}, noop)), (Doubles{2, 3}));
  EXPECT_EQ(to_vec(call_op1("ReduceSumSquare", {signs}, noop)), (Doubles{4, 9}));
  EXPECT_EQ(to_vec(call_op1("ReduceLogSumExp", {signs}, noop)), (Doubles{-2, 3}));
}

TEST_F(ReduceExtOpsTest, EmptyNanAndLargeValues) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor empty = Tensor::zeros({2, 0}, DType::kF32);
  for (const Tensor& t : {empty, on_npu({empty})[0]}) {
    EXPECT_EQ(to_vec(reduce("ReduceMin", t, {1})), (Doubles{inf, inf}));
    EXPECT_EQ(to_vec(reduce("ReduceProd", t, {1})), (Doubles{1, 1}));
    EXPECT_EQ(to_vec(reduce("ReduceL1", t, {1})), (Doubles{0, 0}));
    EXPECT_EQ(to_vec(reduce("ReduceL2", t, {1})), (Doubles{0, 0}));
    EXPECT_EQ(to_vec(reduce("ReduceSumSquare", t, {1})), (Doubles{0, 0}));
    EXPECT_EQ(to_vec(reduce("ReduceLogSum", t, {1})), (Doubles{-inf, -inf}));
    EXPECT_EQ(to_vec(reduce("ReduceLogSumExp", t, {1})), (Doubles{-inf, -inf}));
  }
  const Tensor x = floats({1, std::nanf(""), -2, 5}, {2, 2});
  const float finf = std::numeric_limits<float>::infinity();
  const Tensor big = floats({1000, 1000, -finf, -finf}, {2, 2});
  for (const Tensor& t : {x, on_npu({x})[0]}) {
    EXPECT_TRUE(all_close(to_vec(reduce("ReduceMin", t, {1})), {nan, -2}, 0, 0));
    EXPECT_TRUE(all_close(to_vec(reduce("ReduceMin", t, {0})), {-2, nan}, 0, 0));
    EXPECT_TRUE(all_close(to_vec(reduce("ReduceLogSumExp", t, {1})), {nan, 5 + std::log1p(std::exp(-7.0))}, 1e-6, 0));
  }
  for (const Tensor& t : {big, on_npu({big})[0]}) {
    // The max is subtracted first: no overflow to inf; all -inf gives -inf.
    EXPECT_TRUE(all_close(to_vec(reduce("ReduceLogSumExp", t, {1})), {1000 + std::log(2.0), -inf}, 1e-6, 0));
  }
}

TEST_F(ReduceExtOpsTest, IntegersAreExact) {
  const std::int64_t p31 = std::int64_t{1} << 31;
  const Tensor i64 = ints({p31, p31 + 1, -5, 3}, {2, 2});
  for (const Tensor& t : {i64, on_npu({i64})[0]}) {
    EXPECT_EQ(reduce("ReduceProd", t, {1}).to_ints(), (I64s{p31 * (p31 + 1), -15}));
    EXPECT_EQ(reduce("ReduceL1", t, {1}).to_ints(), (I64s{2 * p31 + 1, 8}));
    EXPECT_EQ(reduce("ReduceMin", t, {0}).to_ints(), (I64s{-5, 3}));
    EXPECT_EQ(reduce("ReduceSumSquare", t, {0}).to_ints(), (I64s{p31 * p31 + 25, (p31 + 1) * (p31 + 1) + 9}));
  }
  const Tensor i32 = ints({3, 4, 1, 2}, {2, 2}, DType::kI32);
  EXPECT_EQ(reduce("ReduceL2", i32, {1}).to_ints(), (I64s{5, 2}));      // sqrt(5) = 2.23 truncates
  EXPECT_EQ(reduce("ReduceLogSum", i32, {1}).to_ints(), (I64s{1, 1}));  // log 7, log 3
  EXPECT_EQ(reduce("ReduceMin", Tensor::zeros({0}, DType::kI8), {0}).to_ints(), (I64s{127}));
  EXPECT_EQ(reduce("ReduceMin", Tensor::zeros({2, 0}, DType::kI32), {1}).to_ints(), (I64s{2147483647, 2147483647}));
}

TEST_F(ReduceExtOpsTest, NpuMatchesCpuInF32AndF16) {
  const Shape shape{4, 37, 29};
  for (DType t : {DType::kF32, DType::kF16}) {
    const Tensor normal = Tensor::randn(shape, t, DeviceRef::cpu(), 7);
    const Tensor positive = Tensor::uniform(shape, t, DeviceRef::cpu(), 8, 0.1f, 1.0f);
    const Tensor near_one = Tensor::uniform(shape, t, DeviceRef::cpu(), 9, 0.98f, 1.02f);
    const auto tol = default_tolerance(t);
    for (const Ints& axes : {Ints{-1}, Ints{0}, Ints{1}, Ints{0, 2}, Ints{}}) {
      for (const char* op : kOps) {
        const std::string name = op;
        const Tensor& x = name == "ReduceLogSum" ? positive : name == "ReduceProd" ? near_one : normal;
        EXPECT_TRUE(npu_close_to_cpu(op, {x}, {{"axes", axes}}, tol.rtol, tol.atol))
            << op << " " << dtype_name(t) << " axes " << shape_str(axes);
      }
    }
  }
}

TEST_F(ReduceExtOpsTest, MixPrecisionLowersMinButKeepsL2InF32) {
  Runtime::configure({.precision_mode = PrecisionMode::kAllowMixPrecision});
  const Tensor x = on_npu({floats({1.0001f, 2.0f}, {2})})[0];
  EXPECT_EQ(to_vec(reduce("ReduceMin", x, {})), (Doubles{1.0}));  // a vector op: rounded to f16
  EXPECT_TRUE(all_close(to_vec(reduce("ReduceSumSquare", x, {})), {1.0001 * 1.0001 + 4}, 1e-6, 0));
  EXPECT_EQ(OpRegistry::instance().schema("ReduceMin").category, OpCategory::kVector);
  EXPECT_EQ(OpRegistry::instance().schema("ReduceLogSumExp").category, OpCategory::kPrecisionSensitive);
}

TEST_F(ReduceExtOpsTest, RejectsBadAxes) {
  const Tensor x = floats({1, 2, 3, 4, 5, 6}, {2, 3});
  for (const char* op : kOps) {
    EXPECT_THROW(reduce(op, x, {2}), InvalidArgument) << op;
    EXPECT_THROW(reduce(op, x, {-3}), InvalidArgument) << op;
    EXPECT_THROW(reduce(op, x, {0, -2}), InvalidArgument) << op;  // the same axis twice
  }
}

TEST_F(ReduceExtOpsTest, CostCountsOpsPerInputElement) {
  const auto& schema = OpRegistry::instance().schema("ReduceL2");
  const std::vector<TensorMeta> in{{{8, 16}, DType::kF32}};
  const auto out = schema.infer(in, Attrs{{"axes", Ints{1}}, {"keepdims", std::int64_t{0}}});
  ASSERT_EQ(out[0].shape, (Shape{8}));
  const KernelCost c = schema.cost(in, out, {});
  EXPECT_EQ(c.flops, 2 * 128);  // a square and an add each
  EXPECT_EQ(c.bytes, 4.0 * (128 + 8));
}

// torch.all / torch.any: over axes or everything, of floats (NaN is true), integers and bools, empty.
TEST_F(ReduceExtOpsTest, AllAndAnyOfEachDtype) {
  const float nan = std::nanf("");
  const Tensor f = floats({0, 2, nan, 0, 0, 0}, {2, 3});
  const Tensor b = ints({1, 1, 0, 1}, {2, 2}, DType::kBool);
  const Tensor i = ints({3, -1, 0, 0}, {2, 2}, DType::kI32);
  for (const Tensor& t : {f, on_npu({f})[0]}) {
    const Tensor any = reduce("ReduceAny", t, {1});
    EXPECT_EQ(any.dtype(), DType::kBool);
    EXPECT_EQ(any.to_ints(), (I64s{1, 0}));
    EXPECT_EQ(reduce("ReduceAll", t, {0}).to_ints(), (I64s{0, 0, 0}));
    EXPECT_EQ(reduce("ReduceAny", t, {0}, true).shape(), (Shape{1, 3}));
    EXPECT_EQ(call_op1("ReduceAll", {t}).to_ints(), (I64s{0}));    // no axes: everything
    EXPECT_EQ(call_op1("ReduceAll", {t}).shape(), (Shape{1, 1}));  // keepdims defaults to 1, as ONNX's
  }
  EXPECT_EQ(reduce("ReduceAll", b, {1}).to_ints(), (I64s{1, 0}));
  EXPECT_EQ(reduce("ReduceAny", b, {0}).to_ints(), (I64s{1, 1}));
  EXPECT_EQ(reduce("ReduceAll", i, {0}).to_ints(), (I64s{0, 0}));
  EXPECT_EQ(reduce("ReduceAny", i, {1}).to_ints(), (I64s{1, 0}));
  const Tensor empty = Tensor::zeros({2, 0}, DType::kBool);
  EXPECT_EQ(reduce("ReduceAll", empty, {1}).to_ints(), (I64s{1, 1}));
  EXPECT_EQ(reduce("ReduceAny", empty, {1}).to_ints(), (I64s{0, 0}));
  EXPECT_TRUE(mentions(error_of([&] { reduce("ReduceAny", b, {2}); }), {"ReduceAny", "axis 2"}));
}

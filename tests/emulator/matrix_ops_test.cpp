// Trilu, CumSum, Hardmax, EyeLike, Range: hand-computed values on the CPU, exact int64, NPU vs CPU
// (bytes for Trilu / Hardmax / EyeLike, tolerances for the running sums and Range), and bad
// attributes rejected.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "emulator/alias_test_util.h"
#include "emulator/ext_op_test_util.h"
#include "npuscope/emulator/errors.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;
using npuscope::emulator::ops::Ints;

namespace {

class MatrixOpsTest : public OpTest {};

Tensor trilu(const Tensor& x, bool upper, std::int64_t k = 0) {
  return call_op1("Trilu", {x}, {{"upper", std::int64_t{upper}}, {"k", k}});
}

Tensor cumsum(const Tensor& x, std::int64_t axis, bool exclusive = false, bool reverse = false) {
  return call_op1("CumSum", {x},
                  {{"axis", axis}, {"exclusive", std::int64_t{exclusive}}, {"reverse", std::int64_t{reverse}}});
}

Tensor range(const Tensor& start, const Attrs& attrs) { return call_op1("Range", {start}, attrs); }

}  // namespace

TEST_F(MatrixOpsTest, TriluHandValues) {
  const Tensor x = floats({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {3, 4});
  EXPECT_EQ(to_vec(trilu(x, true)), (Doubles{1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12}));
  EXPECT_EQ(to_vec(trilu(x, true, 1)), (Doubles{0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12}));
  EXPECT_EQ(to_vec(trilu(x, false)), (Doubles{1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0}));
  EXPECT_EQ(to_vec(trilu(x, false, -1)), (Doubles{0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0}));
  EXPECT_EQ(to_vec(trilu(x, true, 10)), Doubles(12, 0));
  EXPECT_EQ(to_vec(trilu(x, false, 10)), to_vec(x));
  EXPECT_EQ(to_vec(call_op1("Trilu", {x}, {})), to_vec(trilu(x, true)));  // upper by default
  const Tensor batch = floats({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2});
  EXPECT_EQ(to_vec(trilu(batch, false)), (Doubles{1, 0, 3, 4, 5, 0, 7, 8}));
  for (DType t : {DType::kF16, DType::kBF16}) {
    EXPECT_TRUE(
        npu_bytes_match_cpu("Trilu", {Tensor::randn({3, 5, 6}, t, DeviceRef::cpu(), 2)}, {{"k", std::int64_t{-2}}}));
  }
  EXPECT_TRUE(
      npu_bytes_match_cpu("Trilu", {ints({1, 2, 3, std::int64_t{1} << 60}, {2, 2})}, {{"upper", std::int64_t{0}}}));
  EXPECT_THROW(trilu(floats({1, 2}, {2}), true), InvalidArgument);
}

TEST_F(MatrixOpsTest, CumSumHandValues) {
  const Tensor x = floats({1, 2, 3, 4, 5}, {5});
  EXPECT_EQ(to_vec(cumsum(x, 0)), (Doubles{1, 3, 6, 10, 15}));
  EXPECT_EQ(to_vec(cumsum(x, 0, true)), (Doubles{0, 1, 3, 6, 10}));
  EXPECT_EQ(to_vec(cumsum(x, 0, false, true)), (Doubles{15, 14, 12, 9, 5}));
  EXPECT_EQ(to_vec(cumsum(x, -1, true, true)), (Doubles{14, 12, 9, 5, 0}));
  const Tensor m = floats({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(to_vec(cumsum(m, 0)), (Doubles{1, 2, 3, 5, 7, 9}));
  EXPECT_EQ(to_vec(cumsum(m, 1)), (Doubles{1, 3, 6, 4, 9, 15}));
  const std::int64_t p60 = std::int64_t{1} << 60;
  const Tensor big = ints({p60, 1, 2}, {3});
  for (const Tensor& t : {big, on_npu({big})[0]}) {
    EXPECT_EQ(cumsum(t, 0).to_ints(), (I64s{p60, p60 + 1, p60 + 3}));  // exact beyond 2^53
  }
  EXPECT_EQ(cumsum(ints({100, 100}, {2}, DType::kI8), 0).to_ints(), (I64s{100, -56}));  // wraps like i8
  EXPECT_THROW(call_op1("CumSum", {x}, {}), InvalidArgument);                           // no axis
  EXPECT_THROW(cumsum(x, 1), InvalidArgument);
  EXPECT_THROW(cumsum(floats({1}, {}), 0), InvalidArgument);
}

TEST_F(MatrixOpsTest, CumSumNpuMatchesCpu) {
  // The NPU's f32 running sum carries about √n ulp of the partial sums (up to ~30 here; 1.2e-5
  // observed, at the edge of the default atol): 1e-4 absolute for f32 against the f64 golden. f16
  // results are rounded once on both backends: the default tolerance.
  const Tensor x32 = Tensor::randn({3, 257}, DType::kF32, DeviceRef::cpu(), 6);
  EXPECT_TRUE(npu_close_to_cpu("CumSum", {x32}, {{"axis", std::int64_t{1}}}, 1e-5, 1e-4));
  EXPECT_TRUE(npu_close_to_cpu("CumSum", {x32}, {{"axis", std::int64_t{0}}, {"reverse", std::int64_t{1}}}, 1e-5, 1e-4));
  const Tensor x16 = Tensor::randn({64, 5}, DType::kF16, DeviceRef::cpu(), 7);
  const auto tol = default_tolerance(DType::kF16);
  EXPECT_TRUE(npu_close_to_cpu("CumSum", {x16}, {{"axis", std::int64_t{0}}, {"exclusive", std::int64_t{1}}}, tol.rtol,
                               tol.atol));
}

TEST_F(MatrixOpsTest, HardmaxMarksTheFirstMaximum) {
  const Tensor x = floats({3, 0, 1, 2, 2, 5, 1, 0, 0, 1, 3, 2, 0, 1, 2, 3}, {4, 4});
  EXPECT_EQ(to_vec(call_op1("Hardmax", {x})), (Doubles{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}));
  const Tensor ties = floats({1, 1, 1, 2, 2, 1}, {2, 3});
  EXPECT_EQ(to_vec(call_op1("Hardmax", {ties})), (Doubles{1, 0, 0, 1, 0, 0}));
  EXPECT_EQ(to_vec(call_op1("Hardmax", {floats({1, 5, 4, 2}, {2, 2})}, {{"axis", std::int64_t{0}}})),
            (Doubles{0, 1, 1, 0}));
  EXPECT_EQ(to_vec(call_op1("Hardmax", {floats({1, std::nanf(""), 3}, {3})})), (Doubles{0, 1, 0}));
  const Tensor i = ints({4, -1, 9, 9}, {2, 2}, DType::kI32);
  EXPECT_EQ(call_op1("Hardmax", {i}).to_ints(), (I64s{1, 0, 1, 0}));
  for (DType t : {DType::kF32, DType::kF16}) {
    const Tensor r = Tensor::randn({5, 7, 9}, t, DeviceRef::cpu(), 8);
    EXPECT_TRUE(npu_bytes_match_cpu("Hardmax", {r}, {{"axis", std::int64_t{1}}}));
  }
  EXPECT_THROW(call_op1("Hardmax", {x}, {{"axis", std::int64_t{2}}}), InvalidArgument);
}

TEST_F(MatrixOpsTest, EyeLikeHandValues) {
  const Tensor x = Tensor::zeros({3, 4}, DType::kF32);
  EXPECT_EQ(to_vec(call_op1("EyeLike", {x})), (Doubles{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}));
  EXPECT_EQ(to_vec(call_op1("EyeLike", {x}, {{"k", std::int64_t{1}}})), (Doubles{0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}));
  EXPECT_EQ(to_vec(call_op1("EyeLike", {x}, {{"k", std::int64_t{-1}}})), (Doubles{0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0}));
  const Tensor i = call_op1("EyeLike", {x}, {{"dtype", static_cast<std::int64_t>(DType::kI64)}});
  EXPECT_EQ(i.dtype(), DType::kI64);
  EXPECT_EQ(i.to_ints(), (I64s{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}));
  EXPECT_TRUE(npu_bytes_match_cpu("EyeLike", {floats({0, 0, 0, 0}, {2, 2}, DType::kF16)}, {{"k", std::int64_t{0}}}));
  EXPECT_THROW(call_op1("EyeLike", {Tensor::zeros({2, 2, 2}, DType::kF32)}), InvalidArgument);
  EXPECT_THROW(call_op1("EyeLike", {x}, {{"dtype", std::int64_t{42}}}), InvalidArgument);
}

TEST_F(MatrixOpsTest, RangeHandValues) {
  const Tensor f = floats({1}, {});
  const Tensor y = range(f, {{"start", 1.0}, {"limit", 5.0}, {"delta", 2.0}});
  EXPECT_EQ(y.shape(), (Shape{2}));
  EXPECT_EQ(y.dtype(), DType::kF32);
  EXPECT_EQ(to_vec(y), (Doubles{1, 3}));
  const Tensor i = ints({10}, {}, DType::kI32);
  const Tensor down = range(i, {{"start", std::int64_t{10}}, {"limit", std::int64_t{6}}, {"delta", std::int64_t{-3}}});
  EXPECT_EQ(down.dtype(), DType::kI32);
  EXPECT_EQ(down.to_ints(), (I64s{10, 7}));
  EXPECT_EQ(range(f, {{"start", 5.0}, {"limit", 1.0}, {"delta", 1.0}}).shape(), (Shape{0}));
  const std::int64_t p60 = std::int64_t{1} << 60;  // integer attributes stay exact
  const Tensor big = range(ints({0}, {}), {{"start", p60}, {"limit", p60 + 5}, {"delta", std::int64_t{2}}});
  EXPECT_EQ(big.to_ints(), (I64s{p60, p60 + 2, p60 + 4}));
  EXPECT_EQ(range(f, {{"start", 0.0}, {"limit", 1.0}, {"delta", 0.25}}).shape(), (Shape{4}));
  EXPECT_THROW(range(f, {{"start", 0.0}, {"limit", 1.0}, {"delta", 0.0}}), InvalidArgument);
  EXPECT_THROW(range(f, {{"start", 0.0}, {"limit", 1.0}}), InvalidArgument);
  EXPECT_THROW(range(floats({1, 2}, {2}), {{"start", 0.0}, {"limit", 1.0}, {"delta", 1.0}}), InvalidArgument);
}

TEST_F(MatrixOpsTest, RangeNpuMatchesCpu) {
  for (DType t : {DType::kF32, DType::kF16}) {
    const auto tol = default_tolerance(t);
    const Attrs a{{"start", -3.0}, {"limit", 60.0}, {"delta", 0.7}};
    EXPECT_TRUE(npu_close_to_cpu("Range", {floats({-3}, {}, t)}, a, tol.rtol, tol.atol)) << dtype_name(t);
  }
  EXPECT_TRUE(npu_bytes_match_cpu(
      "Range", {ints({0}, {})}, {{"start", std::int64_t{-4}}, {"limit", std::int64_t{9}}, {"delta", std::int64_t{3}}}));
}

// ONNX Trilu: k beyond the matrix keeps everything or nothing, like any large k: INT64_MAX and
// INT64_MIN included (no overflow in j - i against k).
TEST_F(MatrixOpsTest, TriluWithExtremeKBehavesLikeAnyLargeK) {
  const Tensor x = floats({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  const std::int64_t min = std::numeric_limits<std::int64_t>::min();
  const Doubles zeros(9, 0.0), all = to_vec(x);
  for (std::int64_t k : {std::int64_t{3}, std::int64_t{100}, max}) {
    EXPECT_EQ(to_vec(trilu(x, true, k)), zeros) << k;
    EXPECT_EQ(to_vec(trilu(x, false, k)), all) << k;
  }
  for (std::int64_t k : {std::int64_t{-3}, std::int64_t{-100}, min}) {
    EXPECT_EQ(to_vec(trilu(x, true, k)), all) << k;
    EXPECT_EQ(to_vec(trilu(x, false, k)), zeros) << k;
  }
}

// Range's element count is computed without overflow: a count that does not fit is an error
// naming the operands; one that fits is exact even when limit - start does not fit in int64.
TEST_F(MatrixOpsTest, RangeCountsWithoutOverflow) {
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  const std::int64_t min = std::numeric_limits<std::int64_t>::min();
  const Tensor i = ints({0}, {});
  const auto irange = [&](std::int64_t s, std::int64_t l, std::int64_t d) {
    return range(i, {{"start", s}, {"limit", l}, {"delta", d}});
  };
  EXPECT_TRUE(mentions(
      error_of([&] { irange(min, max, 1); }),
      {"Range", "start -9223372036854775808", "limit 9223372036854775807", "delta 1", "more than int64 can count"}));
  // 2^64 - 1 elements would fit in uint64 but not in a tensor: still an error before allocating.
  EXPECT_TRUE(mentions(error_of([&] { irange(0, max, 1); }), {"Range", "too large"}));
  const std::int64_t p62 = std::int64_t{1} << 62;
  EXPECT_EQ(irange(min, max, p62).to_ints(), (I64s{min, min + p62, 0, p62}));  // limit - start overflows int64
  EXPECT_EQ(irange(max, min, -p62).to_ints(), (I64s{max, max - p62, max - p62 - p62, max - p62 - p62 - p62}));
  EXPECT_EQ(irange(max, max, 1).shape(), (Shape{0}));
  EXPECT_EQ(irange(max, min, 1).shape(), (Shape{0}));  // a count of -(2^64 - 1): empty, not wrapped to 1
  EXPECT_EQ(range(floats({0}, {}), {{"start", 1e300}, {"limit", -1e300}, {"delta", 1.0}}).shape(), (Shape{0}));
  const Tensor f = floats({0}, {});
  EXPECT_TRUE(mentions(error_of([&] {
                         range(f, {{"start", -1e300}, {"limit", 1e300}, {"delta", 1e-300}});
                       }),
                       {"Range", "more than int64 can count"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         range(i, {{"start", 1e30}, {"limit", 0.0}, {"delta", 1.0}});
                       }),
                       {"Range", "start", "int64's range"}));
}

// The PyTorch device runs aten triu / tril (diagonal k) as Trilu: values from PyTorch 1.13 CPU on a
// batch of [3, 4] matrices, also in place (x.triu_(k): output 0 over input 0).
TEST_F(MatrixOpsTest, TriluIsAtenTriuAndTril) {
  std::vector<float> v(24);
  for (int i = 0; i < 24; ++i) v[i] = static_cast<float>(i + 1);
  const Tensor x = floats(v, {2, 3, 4});
  struct Case {
    bool upper;
    std::int64_t k;
    Doubles want;
  };
  const std::vector<Case> cases{
      {true, -1, {1, 2, 3, 4, 5, 6, 7, 8, 0, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 0, 22, 23, 24}},
      {false, -1, {0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0, 0, 0, 0, 0, 17, 0, 0, 0, 21, 22, 0, 0}},
      {true, 0, {1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12, 13, 14, 15, 16, 0, 18, 19, 20, 0, 0, 23, 24}},
      {false, 0, {1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0, 13, 0, 0, 0, 17, 18, 0, 0, 21, 22, 23, 0}},
      {true, 2, {0, 0, 3, 4, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 15, 16, 0, 0, 0, 20, 0, 0, 0, 0}},
      {false, 2, {1, 2, 3, 0, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 17, 18, 19, 20, 21, 22, 23, 24}},
  };
  for (const Case& c : cases) {
    const Attrs a{{"upper", std::int64_t{c.upper}}, {"k", c.k}};
    EXPECT_EQ(to_vec(call_op1("Trilu", {x}, a)), c.want) << c.upper << " " << c.k;
    EXPECT_EQ(to_vec(call_op1("Trilu", {x.to(DeviceRef::npu())}, a).cpu()), c.want) << c.upper << " " << c.k;
    EXPECT_EQ(to_vec(run_in_place("Trilu", {x}, a, Backend::kCpu)), c.want) << c.upper << " " << c.k;
  }
}

// torch.linspace's float32 values on the NPU as PyTorch's scalar path gives them (its middle element of
// -1..1 over 7 is -2^-25, not 0: the step rounded to f32, then a fused multiply-add), within rounding on
// the CPU; integers truncate.
TEST_F(MatrixOpsTest, LinSpaceIsPyTorchsFormula) {
  const Tensor f32 = floats_1d({0});
  const auto linspace = [](const Tensor& carrier, double start, double stop, std::int64_t num) {
    return call_op1("LinSpace", {carrier}, {{"start", start}, {"stop", stop}, {"num", num}});
  };
  const std::vector<double> want{-1, -0x1.555554p-1, -0x1.555554p-2, -0x1p-25, 0x1.555554p-2, 0x1.555554p-1, 1};
  EXPECT_EQ(to_vec(linspace(on_npu({f32})[0], -1, 1, 7)), want);
  EXPECT_TRUE(all_close(to_vec(linspace(f32, -1, 1, 7)), want, 0, 1e-7));
  EXPECT_EQ(to_vec(linspace(on_npu({f32})[0], 0, 1, 10))[3], 0x1.555556p-2);
  EXPECT_EQ(to_vec(linspace(f32, 2, 2, 1)), (std::vector<double>{2}));
  EXPECT_EQ(linspace(f32, 2, 5, 0).shape(), (Shape{0}));
  const Tensor i64 = Tensor::from_ints(std::vector<std::int64_t>{0}, {1}, DType::kI64);
  EXPECT_EQ(linspace(i64, 0, 10, 4).to_ints(), (std::vector<std::int64_t>{0, 3, 6, 10}));
  EXPECT_EQ(linspace(i64, -3, 3, 4).to_ints(), (std::vector<std::int64_t>{-3, -1, 1, 3}));
  EXPECT_TRUE(mentions(error_of([&] { linspace(f32, 0, 1, -1); }), {"LinSpace", "num"}));
  EXPECT_TRUE(mentions(error_of([&] { call_op1("LinSpace", {f32}, {{"start", 0.0}}); }), {"LinSpace", "'stop'"}));
}

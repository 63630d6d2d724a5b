// MatMul, BatchMatMul, Gemm: CPU golden vs hand-computed values, NPU vs CPU golden, shape errors,
// the AI CPU fallback for integers and the cube cost model's padding.
#include <gtest/gtest.h>

#include <cmath>

#include "emulator/op_test_util.h"
#include "npuscope/emulator/cost_model.h"
#include "npuscope/emulator/device_spec.h"
#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/op_registry.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

using MatmulTest = OpTest;

// Reference numpy matmul for rank-3 a [Ba, M, K] and b [Bb, K, N] with Ba or Bb = 1 (broadcast).
std::vector<double> ref_bmm(const std::vector<double>& a, const std::vector<double>& b, std::int64_t ba,
                            std::int64_t bb, std::int64_t m, std::int64_t k, std::int64_t n) {
  const std::int64_t batch = std::max(ba, bb);
  std::vector<double> c(static_cast<std::size_t>(batch * m * n), 0.0);
  for (std::int64_t z = 0; z < batch; ++z) {
    const double* pa = a.data() + (ba == 1 ? 0 : z) * m * k;
    const double* pb = b.data() + (bb == 1 ? 0 : z) * k * n;
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (std::int64_t p = 0; p < k; ++p) s += pa[i * k + p] * pb[p * n + j];
        c[static_cast<std::size_t>((z * m + i) * n + j)] = s;
      }
    }
  }
  return c;
}

// f16 outputs: one rounding of the result (rtol ~1e-3) plus an atol growing with the accumulation
// length, as two f32 summation orders of k products may differ by a few ulps of the running sum.
Tolerance f16_tolerance(std::int64_t k) { return {1e-3, 1e-5 * static_cast<double>(k)}; }

}  // namespace

TEST_F(MatmulTest, CpuMatchesHandComputed) {
  auto a = floats({1, 2, 3, 4, 5, 6}, {2, 3});
  auto b = floats({7, 8, 9, 10, 11, 12}, {3, 2});
  auto c = ops::matmul(a, b);
  EXPECT_EQ(c.shape(), (Shape{2, 2}));
  EXPECT_EQ(to_vec(c), (std::vector<double>{58, 64, 139, 154}));
}

TEST_F(MatmulTest, OneDimensionalOperandsArePromoted) {
  auto v = floats({1, 2, 3}, {3});
  auto m = floats({1, 2, 3, 4, 5, 6}, {3, 2});
  auto vm = ops::matmul(v, m);
  EXPECT_EQ(vm.shape(), (Shape{2}));
  EXPECT_EQ(to_vec(vm), (std::vector<double>{22, 28}));
  auto mv = ops::matmul(floats({1, 2, 3, 4, 5, 6}, {2, 3}), v);
  EXPECT_EQ(mv.shape(), (Shape{2}));
  EXPECT_EQ(to_vec(mv), (std::vector<double>{14, 32}));
  auto dot = ops::matmul(v, v);
  EXPECT_EQ(dot.shape(), (Shape{}));
  EXPECT_EQ(to_vec(dot), (std::vector<double>{14}));
  auto batched = ops::matmul(floats({1, 0, 0, 1, 2, 0, 0, 2}, {2, 2, 2}), floats({3, 4}, {2}));
  EXPECT_EQ(batched.shape(), (Shape{2, 2}));
  EXPECT_EQ(to_vec(batched), (std::vector<double>{3, 4, 6, 8}));
}

TEST_F(MatmulTest, BatchDimsBroadcast) {
  auto a = Tensor::uniform({2, 1, 4, 8}, DType::kF32, DeviceRef::cpu(), 1, -1, 1);
  auto b = Tensor::uniform({3, 8, 5}, DType::kF32, DeviceRef::cpu(), 2, -1, 1);
  auto c = ops::matmul(a, b);
  ASSERT_EQ(c.shape(), (Shape{2, 3, 4, 5}));
  const auto av = to_vec(a), bv = to_vec(b), cv = to_vec(c);
  for (std::int64_t i = 0; i < 2; ++i) {
    const std::vector<double> ai(av.begin() + i * 32, av.begin() + (i + 1) * 32);
    const auto expect = ref_bmm(ai, bv, 1, 3, 4, 8, 5);
    const std::vector<double> got(cv.begin() + i * 60, cv.begin() + (i + 1) * 60);
    EXPECT_TRUE(all_close(got, expect, 1e-5, 1e-6)) << "outer batch " << i;
  }
  // [B, M, K] x [K, N] (one GEMM over the stacked rows).
  auto d = ops::matmul(a, Tensor::uniform({8, 5}, DType::kF32, DeviceRef::cpu(), 3, -1, 1));
  EXPECT_EQ(d.shape(), (Shape{2, 1, 4, 5}));
}

TEST_F(MatmulTest, BatchMatMulAdjoints) {
  // a [1, 2, 2] = [[1, 2], [3, 4]], b [1, 2, 2] = [[5, 6], [7, 8]].
  auto a = floats({1, 2, 3, 4}, {1, 2, 2});
  auto b = floats({5, 6, 7, 8}, {1, 2, 2});
  EXPECT_EQ(to_vec(ops::batch_matmul(a, b)), (std::vector<double>{19, 22, 43, 50}));
  EXPECT_EQ(to_vec(ops::batch_matmul(a, b, true, false)), (std::vector<double>{26, 30, 38, 44}));
  EXPECT_EQ(to_vec(ops::batch_matmul(a, b, false, true)), (std::vector<double>{17, 23, 39, 53}));
  EXPECT_EQ(to_vec(ops::batch_matmul(a, b, true, true)), (std::vector<double>{23, 31, 34, 46}));
  // Non-square with adj_x: a^T of [2, 3, 1] is [2, 1, 3].
  auto x = floats({1, 2, 3, 4, 5, 6}, {2, 3, 1});
  auto y = floats({1, 1, 1, 2, 2, 2}, {2, 3, 1});
  auto z = ops::batch_matmul(x, y, true, false);
  EXPECT_EQ(z.shape(), (Shape{2, 1, 1}));
  EXPECT_EQ(to_vec(z), (std::vector<double>{6, 30}));
}

TEST_F(MatmulTest, GemmAlphaBetaTransposesAndBroadcastC) {
  auto a = floats({1, 2, 3, 4, 5, 6}, {2, 3});   // A
  auto at = floats({1, 4, 2, 5, 3, 6}, {3, 2});  // A^T
  auto b = floats({1, 0, 0, 1, 1, 1}, {3, 2});   // B
  auto bt = floats({1, 0, 1, 0, 1, 1}, {2, 3});  // B^T
  // A·B = [[4, 5], [10, 11]].
  const std::vector<double> ab{4, 5, 10, 11};
  EXPECT_EQ(to_vec(ops::gemm(a, b, Tensor(), 1, 1, false, false)), ab);
  EXPECT_EQ(to_vec(ops::gemm(at, bt, Tensor(), 1, 1, true, true)), ab);
  EXPECT_EQ(to_vec(ops::gemm(a, bt, Tensor(), 1, 1, false, true)), ab);
  // alpha 2, beta 0.5, C [N] = [10, 20] broadcast over rows.
  EXPECT_EQ(to_vec(ops::gemm(at, b, floats({10, 20}, {2}), 2, 0.5f, true, false)),
            (std::vector<double>{13, 20, 25, 32}));
  // C [M, 1] broadcast over columns, C scalar, C full.
  EXPECT_EQ(to_vec(ops::gemm(a, b, floats({1, 2}, {2, 1}))), (std::vector<double>{5, 6, 12, 13}));
  EXPECT_EQ(to_vec(ops::gemm(a, b, floats({-4}, {}))), (std::vector<double>{0, 1, 6, 7}));
  EXPECT_EQ(to_vec(ops::gemm(a, b, floats({1, 2, 3, 4}, {2, 2}), 1, -1)), (std::vector<double>{3, 3, 7, 7}));
}

TEST_F(MatmulTest, F64AndEmptyInnerDimension) {
  auto a = Tensor::from_floats(std::vector<float>{1, 2, 3, 4}, {2, 2}, DType::kF64);
  auto c = ops::matmul(a, a);
  EXPECT_EQ(c.dtype(), DType::kF64);
  EXPECT_EQ(to_vec(c), (std::vector<double>{7, 10, 15, 22}));
  auto e = ops::matmul(Tensor::zeros({2, 0}, DType::kF32), Tensor::zeros({0, 3}, DType::kF32));
  EXPECT_EQ(to_vec(e), std::vector<double>(6, 0.0));
}

TEST_F(MatmulTest, NpuMatchesCpuF32) {
  auto a = Tensor::uniform({3, 37, 64}, DType::kF32, DeviceRef::cpu(), 11, -1, 1);
  auto b = Tensor::uniform({64, 29}, DType::kF32, DeviceRef::cpu(), 12, -1, 1);
  auto cpu = ops::matmul(a, b);
  auto npu = on_npu({a, b});
  const auto tol = default_tolerance(DType::kF32);
  EXPECT_TRUE(all_close(to_vec(ops::matmul(npu[0], npu[1])), to_vec(cpu), tol.rtol, 64 * tol.atol));
  auto g_cpu = ops::gemm(b, b, Tensor::uniform({29}, DType::kF32, DeviceRef::cpu(), 13, -1, 1), 0.5f, 2, true, false);
  auto g_npu =
      ops::gemm(npu[1], npu[1], Tensor::uniform({29}, DType::kF32, DeviceRef::npu(), 13, -1, 1), 0.5f, 2, true, false);
  EXPECT_TRUE(all_close(to_vec(g_npu), to_vec(g_cpu), tol.rtol, 64 * tol.atol));
}

TEST_F(MatmulTest, NpuMatchesCpuF16AndBf16) {
  for (DType t : {DType::kF16, DType::kBF16}) {
    auto a = Tensor::uniform({2, 4, 33, 96}, t, DeviceRef::cpu(), 21, -1, 1);
    auto b = Tensor::uniform({4, 96, 17}, t, DeviceRef::cpu(), 22, -1, 1);
    auto cpu = ops::matmul(a, b);
    auto npu = on_npu({a, b});
    auto out = ops::matmul(npu[0], npu[1]);
    EXPECT_EQ(out.dtype(), t);
    const Tolerance tol = t == DType::kF16 ? f16_tolerance(96) : Tolerance{1.6e-2, 1e-4 * 96};
    EXPECT_TRUE(all_close(to_vec(out), to_vec(cpu), tol.rtol, tol.atol)) << dtype_name(t);
    auto bm = ops::batch_matmul(npu[1], npu[1], true, false);
    EXPECT_TRUE(all_close(to_vec(bm), to_vec(ops::batch_matmul(b, b, true, false)), tol.rtol, tol.atol));
  }
}

TEST_F(MatmulTest, ForceFp16LowersF32MatmulToF16) {
  Runtime::configure({.precision_mode = PrecisionMode::kForceFp16});
  auto a = Tensor::uniform({24, 80}, DType::kF32, DeviceRef::cpu(), 31, -2, 2);
  auto b = Tensor::uniform({80, 40}, DType::kF32, DeviceRef::cpu(), 32, -2, 2);
  // Golden on the f16-rounded inputs, result rounded to f16 once.
  auto golden = ops::matmul(Tensor::from_floats(a.to_floats(), a.shape(), DType::kF16),
                            Tensor::from_floats(b.to_floats(), b.shape(), DType::kF16));
  auto npu = on_npu({a, b});
  auto out = ops::matmul(npu[0], npu[1]);
  EXPECT_EQ(out.dtype(), DType::kF32);
  const auto tol = f16_tolerance(80);
  EXPECT_TRUE(all_close(to_vec(out), to_vec(golden), tol.rtol, tol.atol));
  // ...and differs from the f32 product (the lowering is visible).
  EXPECT_FALSE(all_close(to_vec(out), to_vec(ops::matmul(a, b)), 1e-6, 1e-6));
}

TEST_F(MatmulTest, ForceFp16RoundsInputsAndResult) {
  Runtime::configure({.precision_mode = PrecisionMode::kForceFp16});
  // Row 0: x - 1 with x = 1 + 2^-11 + 2^-13, which f16 rounds to 1 + 2^-10 (input rounding).
  // Row 1: 2048 + 1 = 2049, which f16 rounds to 2048 (result rounding, ties to even).
  const float x = 1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -13);
  auto a = floats({x, -1, 2048, 1}, {2, 2});
  auto b = floats({1, 1}, {2, 1});
  EXPECT_EQ(to_vec(ops::matmul(a, b)), (std::vector<double>{std::ldexp(1.0, -11) + std::ldexp(1.0, -13), 2049}));
  auto npu = on_npu({a, b});
  EXPECT_EQ(to_vec(ops::matmul(npu[0], npu[1])), (std::vector<double>{std::ldexp(1.0, -10), 2048}));
}

TEST_F(MatmulTest, F16OverflowFollowsOverflowMode) {
  // Row 0: 300·300·2 = 180000 > f16 max; row 1: NaN.
  const std::vector<float> av{300.0f, 300.0f, std::nanf(""), 1.0f}, bv{300.0f, 300.0f};
  for (OverflowMode mode : {OverflowMode::kInfNan, OverflowMode::kSaturation}) {
    Runtime::configure({.overflow_mode = mode});
    auto a = Tensor::from_floats(av, {2, 2}, DType::kF16, DeviceRef::npu());
    auto b = Tensor::from_floats(bv, {2, 1}, DType::kF16, DeviceRef::npu());
    const auto v = to_vec(ops::matmul(a, b));
    if (mode == OverflowMode::kInfNan) {
      EXPECT_TRUE(std::isinf(v[0]) && v[0] > 0);
      EXPECT_TRUE(std::isnan(v[1]));
    } else {
      EXPECT_EQ(v, (std::vector<double>{65504.0, 0.0}));
    }
  }
}

TEST_F(MatmulTest, IntegerMatmulFallsBackToAiCpu) {
  const std::vector<std::int64_t> av{1, 2, 3, 4, 5, 6}, bv{1, -1, 2, 0, 0, 3};
  auto a = Tensor::from_ints(av, {2, 3}, DType::kI32, DeviceRef::npu());
  auto b = Tensor::from_ints(bv, {3, 2}, DType::kI32, DeviceRef::npu());
  auto c = ops::matmul(a, b);
  EXPECT_EQ(c.dtype(), DType::kI32);
  EXPECT_EQ(c.to_ints(), (std::vector<std::int64_t>{5, 8, 14, 14}));
  const KernelEntry* npu = OpRegistry::instance().kernel("MatMul", Backend::kNpu);
  ASSERT_NE(npu, nullptr);
  ASSERT_NE(npu->supports, nullptr);
  const std::vector<TensorMeta> i32{{{2, 3}, DType::kI32}, {{3, 2}, DType::kI32}};
  const std::vector<TensorMeta> f16{{{2, 3}, DType::kF16}, {{3, 2}, DType::kF16}};
  EXPECT_FALSE(npu->supports(i32, {}));
  EXPECT_TRUE(npu->supports(f16, {}));
}

TEST_F(MatmulTest, BadShapesAreInvalidArgument) {
  auto m23 = floats({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_THROW(ops::matmul(m23, m23), InvalidArgument);
  EXPECT_THROW(ops::matmul(floats({1}, {}), m23), InvalidArgument);
  EXPECT_THROW(ops::matmul(Tensor::zeros({2, 3, 4}, DType::kF32), Tensor::zeros({3, 4, 5}, DType::kF32)),
               InvalidArgument);
  EXPECT_THROW(ops::matmul(m23, Tensor::zeros({3, 2}, DType::kF16)), InvalidArgument);
  EXPECT_THROW(ops::batch_matmul(m23, floats({1, 2, 3}, {3})), InvalidArgument);
  EXPECT_THROW(ops::batch_matmul(m23, m23, false, false), InvalidArgument);
  EXPECT_NO_THROW(ops::batch_matmul(m23, m23, false, true));
  EXPECT_THROW(ops::gemm(floats({1, 2, 3}, {3}), m23, Tensor()), InvalidArgument);
  EXPECT_THROW(ops::gemm(m23, m23, Tensor()), InvalidArgument);
  EXPECT_THROW(ops::gemm(m23, m23, floats({1, 2, 3}, {3}), 1, 1, false, true), InvalidArgument);
}

TEST_F(MatmulTest, CubeCostPadsToTheFractal) {
  const OpSchema& schema = OpRegistry::instance().schema("MatMul");
  const DeviceSpec spec = preset_spec("ascend910b");
  auto estimate = [&](std::int64_t s) {
    const std::vector<TensorMeta> in{{{s, s}, DType::kF16}, {{s, s}, DType::kF16}};
    const auto out = schema.infer(in, {});
    const KernelCost cost = schema.cost(in, out, {});
    EXPECT_EQ(cost.unit, ComputeUnit::kCube);
    EXPECT_DOUBLE_EQ(cost.flops, 2.0 * s * s * s);
    return estimate_kernel(spec, cost, DType::kF16);
  };
  const CostEstimate e1000 = estimate(1000), e1008 = estimate(1008);
  EXPECT_DOUBLE_EQ(e1000.padded_flops, e1008.padded_flops);
  EXPECT_EQ(e1000.duration_ns, e1008.duration_ns);
}

// RotaryEmbedding: hand-computed rotations for both pairings, broadcast over leading dims against an
// f64 reference, NPU vs CPU in f32 and f16 with real RoPE tables, and bad shapes / dtypes.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "emulator/op_test_util.h"
#include "npuscope/emulator/errors.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

class RotaryOpsTest : public OpTest {};

using V = std::vector<double>;

// RoPE tables: angle(s, i) = s * 10000^(-2i / d), as [S, D/2].
std::pair<Tensor, Tensor> rope_tables(std::int64_t seq, std::int64_t d, DType dtype) {
  std::vector<float> c, s;
  for (std::int64_t p = 0; p < seq; ++p) {
    for (std::int64_t i = 0; i < d / 2; ++i) {
      const double angle =
          static_cast<double>(p) * std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(d));
      c.push_back(static_cast<float>(std::cos(angle)));
      s.push_back(static_cast<float>(std::sin(angle)));
    }
  }
  return {floats(c, {seq, d / 2}, dtype), floats(s, {seq, d / 2}, dtype)};
}

// Straight from the definition, in f64.
V reference(const V& x, const V& c, const V& s, std::int64_t seq, std::int64_t d, bool interleaved) {
  V y(x.size());
  const std::int64_t half = d / 2;
  for (std::size_t r = 0; r < x.size() / static_cast<std::size_t>(d); ++r) {
    const std::size_t row = r * static_cast<std::size_t>(d), table = (r % static_cast<std::size_t>(seq)) * half;
    for (std::int64_t i = 0; i < half; ++i) {
      const std::size_t a = row + static_cast<std::size_t>(interleaved ? 2 * i : i);
      const std::size_t b = row + static_cast<std::size_t>(interleaved ? 2 * i + 1 : i + half);
      const double ci = c[table + static_cast<std::size_t>(i)], si = s[table + static_cast<std::size_t>(i)];
      y[a] = x[a] * ci - x[b] * si;
      y[b] = x[b] * ci + x[a] * si;
    }
  }
  return y;
}

}  // namespace

TEST_F(RotaryOpsTest, CpuHandComputedForBothPairings) {
  const Tensor x = floats({1, 2, 3, 4, 5, 6, 7, 8}, {1, 2, 4});
  // Position 0: angles (0, pi/2); position 1: cos (0.6, -1), sin (0.8, 0).
  const Tensor cos = floats({1, 0, 0.6f, -1}, {2, 2}), sin = floats({0, 1, 0.8f, 0}, {2, 2});
  const Tensor half = ops::rotary_embedding(x, cos, sin, false);
  EXPECT_EQ(half.shape(), (Shape{1, 2, 4}));
  // Pairs (x0, x2), (x1, x3): (1, 3) -> (1, 3); (2, 4) -> (-4, 2); (5, 7) -> (3 - 5.6, 4.2 + 4); (6, 8) -> (-6, -8).
  EXPECT_TRUE(all_close(to_vec(half), {1, -4, 3, 2, -2.6, -6, 8.2, -8}, 1e-6, 1e-6));
  // Pairs (x0, x1), (x2, x3): (3, 4) -> (-4, 3); (5, 6) -> (3 - 4.8, 3.6 + 4); (7, 8) -> (-7, -8).
  EXPECT_TRUE(
      all_close(to_vec(ops::rotary_embedding(x, cos, sin, true)), {1, 2, -4, 3, -1.8, 7.6, -7, -8}, 1e-6, 1e-6));
}

TEST_F(RotaryOpsTest, BroadcastsTablesOverLeadingDims) {
  const std::int64_t seq = 5, d = 8;
  const Tensor x = Tensor::randn({2, 3, seq, d}, DType::kF32, DeviceRef::cpu(), 9);
  const auto [cos, sin] = rope_tables(seq, d, DType::kF32);
  for (bool interleaved : {false, true}) {
    const V expected = reference(to_vec(x), to_vec(cos), to_vec(sin), seq, d, interleaved);
    EXPECT_TRUE(all_close(to_vec(ops::rotary_embedding(x, cos, sin, interleaved)), expected, 1e-6, 1e-6));
    // Tables with leading 1s ([1, 1, S, D/2]) are the same tables.
    const Tensor y = ops::rotary_embedding(x, cos.view({1, 1, seq, d / 2}), sin.view({1, 1, seq, d / 2}), interleaved);
    EXPECT_TRUE(all_close(to_vec(y), expected, 1e-6, 1e-6));
  }
}

TEST_F(RotaryOpsTest, RotationPreservesPairNorms) {
  const std::int64_t seq = 6, d = 16;
  const Tensor x = Tensor::randn({seq, d}, DType::kF32, DeviceRef::cpu(), 2);
  const auto [cos, sin] = rope_tables(seq, d, DType::kF32);
  const V in = to_vec(x), out = to_vec(ops::rotary_embedding(x, cos, sin, false));
  for (std::int64_t r = 0; r < seq; ++r) {
    for (std::int64_t i = 0; i < d / 2; ++i) {
      const auto a = static_cast<std::size_t>(r * d + i), b = a + static_cast<std::size_t>(d / 2);
      EXPECT_NEAR(std::hypot(out[a], out[b]), std::hypot(in[a], in[b]), 1e-5) << r << ", " << i;
    }
  }
}

TEST_F(RotaryOpsTest, NpuMatchesCpuInF32AndF16) {
  const std::int64_t seq = 8, d = 16;
  for (DType t : {DType::kF32, DType::kF16}) {
    const Tensor x = Tensor::randn({2, 3, seq, d}, t, DeviceRef::cpu(), 17);
    const auto [cos, sin] = rope_tables(seq, d, t);
    const auto tol = default_tolerance(t);
    for (bool interleaved : {false, true}) {
      const Tensor cpu = ops::rotary_embedding(x, cos, sin, interleaved);
      const auto n = on_npu({x, cos, sin});
      const Tensor npu = ops::rotary_embedding(n[0], n[1], n[2], interleaved);
      EXPECT_EQ(npu.dtype(), t);
      EXPECT_TRUE(all_close(to_vec(npu), to_vec(cpu), tol.rtol, tol.atol))
          << dtype_name(t) << " interleaved " << interleaved;
    }
  }
}

TEST_F(RotaryOpsTest, RejectsBadShapesAndDtypes) {
  const Tensor x = Tensor::zeros({2, 4, 6}, DType::kF32);
  const Tensor table = Tensor::zeros({4, 3}, DType::kF32);
  EXPECT_THROW(ops::rotary_embedding(Tensor::zeros({2, 4, 5}, DType::kF32), table, table), InvalidArgument);  // odd D
  EXPECT_THROW(ops::rotary_embedding(x, Tensor::zeros({4, 6}, DType::kF32), table), InvalidArgument);         // [S, D]
  EXPECT_THROW(ops::rotary_embedding(x, table, Tensor::zeros({3, 3}, DType::kF32)), InvalidArgument);         // wrong S
  EXPECT_THROW(ops::rotary_embedding(x, Tensor::zeros({2, 4, 3}, DType::kF32), table), InvalidArgument);
  EXPECT_THROW(ops::rotary_embedding(Tensor::zeros({6}, DType::kF32), table, table), InvalidArgument);
  EXPECT_THROW(ops::rotary_embedding(Tensor::zeros({2, 4, 6}, DType::kI32), table, table), InvalidArgument);
}

// The cost model (cost_model.h) against durations worked out by hand on the ascend910b preset:
// 24 cube cores, 48 vector cores, 1.8 GHz, 1.6e12 B/s HBM, 25e9 B/s host link, efficiencies
// cube 0.85 / vector 0.70, overheads kernel 1500 ns, copy 2000 ns, AI CPU 20000 ns at 4e9 flop/s.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "npuscope/emulator/cost_model.h"
#include "npuscope/emulator/device_spec.h"

using namespace npuscope::emulator;

namespace {

const DeviceSpec& b910() {
  static const DeviceSpec spec = preset_spec("ascend910b");
  return spec;
}

KernelCost cube(std::int64_t m, std::int64_t n, std::int64_t k, double bytes = 0) {
  KernelCost c;
  c.unit = ComputeUnit::kCube;
  c.m = m;
  c.n = n;
  c.k = k;
  c.flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  c.bytes = bytes;
  return c;
}

}  // namespace

TEST(CostModel, UnitPeaks) {
  // Cube f16: 24 cores x 16·16·16 MACs x 2 x 1.8e9 = 353.89 TFLOP/s; int8 twice that; f32 a quarter.
  EXPECT_DOUBLE_EQ(unit_peak_flops(b910(), ComputeUnit::kCube, DType::kF16), 24.0 * 4096 * 2 * 1.8e9);
  EXPECT_DOUBLE_EQ(unit_peak_flops(b910(), ComputeUnit::kCube, DType::kBF16), 24.0 * 4096 * 2 * 1.8e9);
  EXPECT_DOUBLE_EQ(unit_peak_flops(b910(), ComputeUnit::kCube, DType::kI8), 2 * 24.0 * 4096 * 2 * 1.8e9);
  EXPECT_DOUBLE_EQ(unit_peak_flops(b910(), ComputeUnit::kCube, DType::kF32), 24.0 * 4096 * 2 * 1.8e9 / 4);
  // Vector f16: 48 cores x 128 flop/cycle x 1.8e9 = 11.06 TFLOP/s; f32 half.
  EXPECT_DOUBLE_EQ(unit_peak_flops(b910(), ComputeUnit::kVector, DType::kF16), 48.0 * 128 * 1.8e9);
  EXPECT_DOUBLE_EQ(unit_peak_flops(b910(), ComputeUnit::kVector, DType::kF32), 48.0 * 128 * 1.8e9 / 2);
  EXPECT_DOUBLE_EQ(unit_peak_flops(b910(), ComputeUnit::kAiCpu, DType::kF32), 4e9);
}

TEST(CostModel, CubeMatMul1024F16) {
  // flops 2·1024³ = 2147483648; tiles (1024/64)² = 256 > 24 cores -> block_dim 24, all cores used.
  // compute = 2147483648 / (353894400000000 · 0.85) s = 7139.00 ns.
  // bytes 3 · 1024² · 2 = 6291456 -> memory = 6291456 / 1.6e12 s = 3932.16 ns: compute-bound.
  // duration = 1500 + ceil(7139.00) = 8639 ns.
  const CostEstimate e = estimate_kernel(b910(), cube(1024, 1024, 1024, 6291456), DType::kF16);
  EXPECT_EQ(e.block_dim, 24u);
  EXPECT_DOUBLE_EQ(e.padded_flops, 2147483648.0);
  EXPECT_NEAR(e.compute_ns, 7139.00, 0.01);
  EXPECT_NEAR(e.memory_ns, 3932.16, 1e-6);
  EXPECT_FALSE(e.memory_bound);
  EXPECT_EQ(e.overhead_ns, 1500u);
  EXPECT_EQ(e.duration_ns, 8639u);
}

TEST(CostModel, CubeF32RunsAtQuarterRate) {
  // Same shape in f32: compute 4 x 7139.00 = 28555.99 ns -> 1500 + 28556 = 30056 ns.
  const CostEstimate e = estimate_kernel(b910(), cube(1024, 1024, 1024), DType::kF32);
  EXPECT_NEAR(e.compute_ns, 28555.99, 0.01);
  EXPECT_EQ(e.duration_ns, 30056u);
}

TEST(CostModel, CubePaddingToTheFractal) {
  // 1000 pads to 1008 (63 fractals): the same work as 1008; 1009 pads to 1024: more.
  const CostEstimate e1000 = estimate_kernel(b910(), cube(1000, 1000, 1000), DType::kF16);
  const CostEstimate e1008 = estimate_kernel(b910(), cube(1008, 1008, 1008), DType::kF16);
  const CostEstimate e1009 = estimate_kernel(b910(), cube(1009, 1009, 1009), DType::kF16);
  EXPECT_DOUBLE_EQ(e1000.padded_flops, 2.0 * 1008 * 1008 * 1008);
  EXPECT_EQ(e1000.duration_ns, e1008.duration_ns);
  EXPECT_DOUBLE_EQ(e1009.padded_flops, 2.0 * 1024 * 1024 * 1024);
  EXPECT_GT(e1009.duration_ns, e1008.duration_ns);
  // 7 x 7 x 7 still costs one whole fractal.
  EXPECT_DOUBLE_EQ(estimate_kernel(b910(), cube(7, 7, 7), DType::kF16).padded_flops, 2.0 * 16 * 16 * 16);
}

TEST(CostModel, FewerBlocksThanCoresTakesLonger) {
  // 64 x 64 output = one 64x64 tile -> block_dim 1: 1/24 of the cube is busy.
  // flops 2·64·64·24576 = 201326592; compute = 201326592 / (353.8944e12 · 0.85 / 24) s = 16062.75 ns.
  const CostEstimate narrow = estimate_kernel(b910(), cube(64, 64, 24576), DType::kF16);
  EXPECT_EQ(narrow.block_dim, 1u);
  EXPECT_NEAR(narrow.compute_ns, 201326592.0 / (353.8944e12 * 0.85 / 24) * 1e9, 1e-6);
  // The same flops spread over 24 tiles (64 x 1536 output) use every core: 24 times faster.
  const CostEstimate wide = estimate_kernel(b910(), cube(64, 1536, 1024), DType::kF16);
  EXPECT_EQ(wide.block_dim, 24u);
  EXPECT_NEAR(narrow.compute_ns / wide.compute_ns, 24.0, 1e-9);
  EXPECT_GT(narrow.duration_ns, wide.duration_ns);
  // An explicit block_dim overrides the derivation.
  KernelCost forced = cube(1024, 1024, 1024);
  forced.block_dim = 12;
  const CostEstimate half = estimate_kernel(b910(), forced, DType::kF16);
  EXPECT_EQ(half.block_dim, 12u);
  EXPECT_NEAR(half.compute_ns, 2 * 7139.00, 0.02);
}

TEST(CostModel, MemoryBoundVectorOp) {
  // f32 Add of 1 Mi elements: flops 1048576, bytes 3 · 4 MiB = 12582912.
  // blocks = ceil(12582912 / 65536) = 192 -> clamped to 48 cores; full bandwidth.
  // memory = 12582912 / 1.6e12 s = 7864.32 ns; compute = 1048576 / (5.5296e12 · 0.7) s = 270.9 ns.
  // duration = 1500 + ceil(7864.32) = 9365 ns.
  KernelCost c;
  c.unit = ComputeUnit::kVector;
  c.flops = 1048576;
  c.bytes = 12582912;
  const CostEstimate e = estimate_kernel(b910(), c, DType::kF32);
  EXPECT_EQ(e.block_dim, 48u);
  EXPECT_TRUE(e.memory_bound);
  EXPECT_NEAR(e.memory_ns, 7864.32, 1e-6);
  EXPECT_NEAR(e.compute_ns, 1048576 / (5.5296e12 * 0.7) * 1e9, 1e-6);
  EXPECT_EQ(e.duration_ns, 9365u);
}

TEST(CostModel, SmallVectorOpUsesFewBlocksAndLessBandwidth) {
  // 128 KiB moved -> 2 blocks of 48; 2 blocks get 2·2/48 of the bandwidth (half the cores saturate it).
  // memory = 131072 / (1.6e12 · 4/48) s = 983.04 ns -> duration 1500 + 984 = 2484 ns.
  KernelCost c;
  c.unit = ComputeUnit::kVector;
  c.flops = 1024;
  c.bytes = 131072;
  const CostEstimate e = estimate_kernel(b910(), c, DType::kF16);
  EXPECT_EQ(e.block_dim, 2u);
  EXPECT_NEAR(e.memory_ns, 983.04, 1e-6);
  EXPECT_EQ(e.duration_ns, 2484u);
  // Nothing to move still costs the launch overhead and one block.
  const CostEstimate empty = estimate_kernel(b910(), KernelCost{}, DType::kF32);
  EXPECT_EQ(empty.block_dim, 1u);
  EXPECT_EQ(empty.duration_ns, 1500u);
}

TEST(CostModel, AiCpu) {
  // 1e6 flops at 4e9 flop/s = 250000 ns; 4e6 bytes at 10 GB/s = 400000 ns: memory wins.
  // duration = 20000 + 400000 = 420000 ns, one block.
  KernelCost c;
  c.unit = ComputeUnit::kAiCpu;
  c.flops = 1e6;
  c.bytes = 4e6;
  const CostEstimate e = estimate_kernel(b910(), c, DType::kF64);
  EXPECT_EQ(e.block_dim, 1u);
  EXPECT_NEAR(e.compute_ns, 250000, 1e-6);
  EXPECT_NEAR(e.memory_ns, 400000, 1e-6);
  EXPECT_EQ(e.duration_ns, 420000u);
  c.bytes = 0;
  EXPECT_EQ(estimate_kernel(b910(), c, DType::kF32).duration_ns, 270000u);
}

TEST(CostModel, CopyTimes) {
  // Host link: 2000 + ceil(1 MiB / 25e9 s) = 2000 + ceil(41943.04) = 43944 ns.
  EXPECT_EQ(estimate_copy_ns(b910(), 1 << 20, false), 43944u);
  // Device to device reads and writes HBM: half of 1.6e12 -> 2000 + ceil(1310.72) = 3311 ns.
  EXPECT_EQ(estimate_copy_ns(b910(), 1 << 20, true), 3311u);
  EXPECT_EQ(estimate_copy_ns(b910(), 0, false), 2000u);
}

TEST(CostModel, PadTo) {
  EXPECT_EQ(pad_to(1000, 16), 1008);
  EXPECT_EQ(pad_to(1008, 16), 1008);
  EXPECT_EQ(pad_to(1, 16), 16);
}

// Issue 15: the slowest in-range device and absurd work sizes saturate at kMaxTaskNs instead of
// wrapping (a double beyond 2^64 cast to uint64 is undefined; a sum past 2^64 wraps).
TEST(CostModel, SaturatesAtTheLongestTask) {
  DeviceSpec slow = preset_spec("tiny");
  slow.cube_cores = slow.vector_cores = 1;
  slow.cube_m = slow.cube_n = slow.cube_k = 1;
  slow.clock_hz = 1e6;
  slow.cube_efficiency = slow.vector_efficiency = 0.01;
  slow.memory_bandwidth = slow.host_link_bandwidth = slow.aicpu_flops = 1e6;
  slow.kernel_overhead_ns = slow.copy_overhead_ns = slow.aicpu_overhead_ns = 1'000'000'000;
  ASSERT_NO_THROW(validate_spec(slow));
  const std::int64_t huge = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(estimate_kernel(slow, cube(huge, huge, huge, 1e300), DType::kF32).duration_ns, kMaxTaskNs);
  KernelCost vec;
  vec.flops = 1e300;
  vec.bytes = 1e300;
  EXPECT_EQ(estimate_kernel(slow, vec, DType::kF32).duration_ns, kMaxTaskNs);
  vec.unit = ComputeUnit::kAiCpu;
  EXPECT_EQ(estimate_kernel(slow, vec, DType::kF32).duration_ns, kMaxTaskNs);
  EXPECT_EQ(estimate_copy_ns(slow, std::numeric_limits<std::uint64_t>::max(), false), kMaxTaskNs);
  // Below the cap the sum is exact: 1 s overhead + 1 byte at 1 MB/s = 1000 ns.
  EXPECT_EQ(estimate_copy_ns(slow, 1, false), 1'000'001'000u);
  // Zero work costs the overhead only.
  EXPECT_EQ(estimate_kernel(slow, KernelCost{}, DType::kF16).duration_ns, 1'000'000'000u);
}

// The cost model (cost_model.h, Note [Calibrated cost model]) against durations worked out by hand
// on the ascend910b preset with the terms of issue 39 neutral (pre_issue39; those terms are tested
// one by one at the end): 24 cube cores, 48 vector cores, 1.8 GHz (cube peak f16 353.8944 TFLOP/s),
// base block 128x256, K fill 384, cube efficiency 0.97, f32 rate 0.25, L2 miss penalty 0.09, L2
// 192 MiB at 1.75e12 B/s, HBM 1.6e12 B/s at 0.85 (1.36e12), vector efficiency 0.70, kernel floor
// 1200 ns + 1500 ns on more than one core, copy 2000 ns, host link 25e9 B/s, AI CPU 20000 ns at 4e9.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "npuscope/emulator/cost_model.h"
#include "npuscope/emulator/device_spec.h"

using namespace npuscope::emulator;

namespace {

// The ascend910b preset with the terms of issue 39 at their neutral values (the formula the hand
// figures below were worked out for); the terms themselves are tested on the preset further down.
DeviceSpec pre_issue39(DeviceSpec s) {
  const DeviceSpec neutral;
  for (const char* f : {"cube_tile_fill_ns", "cube_min_base", "cube_core_read_bandwidth", "cube_f32_read_factor",
                        "vector_block_bytes", "vector_stage_ns", "softmax_passes", "reduce_cross_core_ns",
                        "reduce_strided_efficiency", "pool_argmax_tap_cycles"}) {
    set_spec_field(s, f, spec_field(neutral, f));
  }
  s.conv_hf32 = s.vector_f16_upcast = false;
  s.cube_k_fill = 384;
  s.memory_efficiency = s.memory_write_efficiency = 0.85;
  s.multi_core_launch_ns = 1500;
  return s;
}

const DeviceSpec& b910() {
  static const DeviceSpec spec = pre_issue39(preset_spec("ascend910b"));
  return spec;
}

constexpr double kPeak = 24.0 * 4096 * 2 * 1.8e9;
constexpr double kL2 = 192.0 * 1024 * 1024;

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

KernelCost vector(double flops, double bytes) {
  KernelCost c;
  c.unit = ComputeUnit::kVector;
  c.flops = flops;
  c.bytes = bytes;
  return c;
}

// The same with all of its traffic held by the L2 (KernelCost::hot_bytes).
KernelCost hot(KernelCost c) {
  c.hot_bytes = c.bytes;
  return c;
}

}  // namespace

TEST(CostModel, UnitPeaks) {
  // Cube f16: 24 cores x 16·16·16 MACs x 2 x 1.8e9 = 353.89 TFLOP/s; int8 twice that; f32 (HF32) a quarter.
  EXPECT_DOUBLE_EQ(unit_peak_flops(b910(), ComputeUnit::kCube, DType::kF16), kPeak);
  EXPECT_DOUBLE_EQ(unit_peak_flops(b910(), ComputeUnit::kCube, DType::kBF16), kPeak);
  EXPECT_DOUBLE_EQ(unit_peak_flops(b910(), ComputeUnit::kCube, DType::kI8), 2 * kPeak);
  EXPECT_DOUBLE_EQ(unit_peak_flops(b910(), ComputeUnit::kCube, DType::kF32), kPeak / 4);
  // Vector f16: 48 cores x 128 flop/cycle x 1.8e9 = 11.06 TFLOP/s; per dtype by element size.
  const double vec = 48.0 * 128 * 1.8e9;
  EXPECT_DOUBLE_EQ(unit_peak_flops(b910(), ComputeUnit::kVector, DType::kF16), vec);
  EXPECT_DOUBLE_EQ(unit_peak_flops(b910(), ComputeUnit::kVector, DType::kF32), vec / 2);
  EXPECT_DOUBLE_EQ(unit_peak_flops(b910(), ComputeUnit::kVector, DType::kI8), vec * 2);
  EXPECT_DOUBLE_EQ(unit_peak_flops(b910(), ComputeUnit::kVector, DType::kF64), vec / 4);
  EXPECT_DOUBLE_EQ(unit_peak_flops(b910(), ComputeUnit::kAiCpu, DType::kF32), 4e9);
}

TEST(CostModel, CubeMatMul1024F16RunsInTwoWaves) {
  // Tiles ceil(1024/128)·ceil(1024/256) = 32 on 24 cores: 2 waves, the second a third full (32/48).
  // K fill: 1024 / (1024 + 384). Efficiency 0.97 · (32/48) · (1024/1408) = 0.470303.
  // compute = 2147483648 / (353.8944e12 · 0.470303) s = 12902.63 ns; memory: 6 MiB hot in the L2 at
  // 1.75e12 = 3595.12 ns. duration = 1200 + 1500 (24 cores) + 12903 = 15603 ns.
  const CostEstimate e = estimate_kernel(b910(), hot(cube(1024, 1024, 1024, 6291456)), DType::kF16);
  EXPECT_EQ(e.block_dim, 24u);
  EXPECT_DOUBLE_EQ(e.padded_flops, 2147483648.0);
  EXPECT_NEAR(e.compute_ns, 12902.63, 0.01);
  EXPECT_NEAR(e.memory_ns, 3595.12, 0.01);
  EXPECT_FALSE(e.memory_bound);
  EXPECT_EQ(e.overhead_ns, 2700u);
  EXPECT_EQ(e.duration_ns, 15603u);
}

TEST(CostModel, OneTileMoreThanTheCoresTakesASecondWave) {
  // 768 x 1024: 6·4 = 24 tiles, one full wave. 896 x 1024: 7·4 = 28 tiles, two waves (28/48 busy):
  // 16.7% more work in twice the time.
  const CostEstimate one = estimate_kernel(b910(), cube(768, 1024, 1024), DType::kF16);
  const CostEstimate two = estimate_kernel(b910(), cube(896, 1024, 1024), DType::kF16);
  EXPECT_NEAR(one.compute_ns, 2.0 * 768 * 1024 * 1024 / (kPeak * 0.97 * (1024.0 / 1408)) * 1e9, 1e-6);
  EXPECT_NEAR(two.compute_ns / one.compute_ns, 2.0, 1e-9);
}

TEST(CostModel, F32RunsAtTheHf32RateOfF16) {
  const CostEstimate f16 = estimate_kernel(b910(), cube(1024, 1024, 1024), DType::kF16);
  const CostEstimate f32 = estimate_kernel(b910(), cube(1024, 1024, 1024), DType::kF32);
  EXPECT_NEAR(f32.compute_ns / f16.compute_ns, 4.0, 1e-9);
  DeviceSpec half_rate = b910();
  half_rate.cube_f32_rate = 0.5;
  EXPECT_NEAR(estimate_kernel(half_rate, cube(1024, 1024, 1024), DType::kF32).compute_ns / f16.compute_ns, 2.0, 1e-9);
}

TEST(CostModel, OperandsBeyondTheL2CostTheMissPenalty) {
  // Operands that fit the L2 pay nothing; at 3 L2 sizes, 1 + 0.09 · (3 - 1) = 1.18 times the compute.
  const CostEstimate fits = estimate_kernel(b910(), cube(4096, 4096, 4096, kL2), DType::kF16);
  const CostEstimate beyond = estimate_kernel(b910(), cube(4096, 4096, 4096, 3 * kL2), DType::kF16);
  const CostEstimate small = estimate_kernel(b910(), cube(4096, 4096, 4096, 1e6), DType::kF16);
  EXPECT_DOUBLE_EQ(fits.compute_ns, small.compute_ns);
  EXPECT_NEAR(beyond.compute_ns / fits.compute_ns, 1.18, 1e-9);
  // Without an L2 there is no such term.
  DeviceSpec no_l2 = b910();
  no_l2.l2_bytes = 0;
  EXPECT_DOUBLE_EQ(estimate_kernel(no_l2, cube(4096, 4096, 4096, 3 * kL2), DType::kF16).compute_ns, small.compute_ns);
}

TEST(CostModel, WorkingSetsUnderTheL2MoveFasterThanHbm) {
  // Exactly the L2: 201326592 / 1.75e12 s = 115043.77 ns. 1.36 MB more goes at the effective HBM
  // bandwidth 1.6e12 · 0.85 = 1.36e12: +1000 ns.
  EXPECT_NEAR(memory_seconds(b910(), kL2) * 1e9, 115043.77, 0.01);
  EXPECT_NEAR(memory_seconds(b910(), kL2 + 1.36e6) * 1e9, 116043.77, 0.01);
  DeviceSpec no_l2 = b910();
  no_l2.l2_bandwidth = 0;
  EXPECT_NEAR(memory_seconds(no_l2, 1.36e6) * 1e9, 1000, 1e-6);
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
  // 64 x 64 output = one tile -> block_dim 1: 1/24 of the cube is busy, and one core pays no
  // multi-core launch. compute = 2·64·64·24576 / (353.8944e12 · 0.97 · 24576/24960 / 24) s.
  const CostEstimate narrow = estimate_kernel(b910(), cube(64, 64, 24576), DType::kF16);
  EXPECT_EQ(narrow.block_dim, 1u);
  EXPECT_EQ(narrow.overhead_ns, 1200u);
  EXPECT_NEAR(narrow.compute_ns, 14295.53, 0.01);
  // An explicit block_dim overrides the derivation: 32 tiles on 12 cores take 3 waves of 12 where 24
  // cores take 2 waves of 24: 3/2 the time.
  KernelCost forced = cube(1024, 1024, 1024);
  forced.block_dim = 12;
  const CostEstimate half = estimate_kernel(b910(), forced, DType::kF16);
  EXPECT_EQ(half.block_dim, 12u);
  EXPECT_NEAR(half.compute_ns, 1.5 * 12902.63, 0.02);
}

TEST(CostModel, MemoryBoundVectorOp) {
  // f32 Add of 1 Mi elements: flops 1048576, bytes 3 · 4 MiB = 12582912, all hot in the L2.
  // blocks = ceil(12582912 / 65536) = 192 -> clamped to 48 cores; full bandwidth.
  // memory = 12582912 / 1.75e12 s = 7190.24 ns; compute = 1048576 / (5.5296e12 · 0.7) s = 270.9 ns.
  // duration = 1200 + 1500 + ceil(7190.24) = 9891 ns.
  const CostEstimate e = estimate_kernel(b910(), hot(vector(1048576, 12582912)), DType::kF32);
  EXPECT_EQ(e.block_dim, 48u);
  EXPECT_TRUE(e.memory_bound);
  EXPECT_NEAR(e.memory_ns, 7190.24, 0.01);
  EXPECT_NEAR(e.compute_ns, 1048576 / (5.5296e12 * 0.7) * 1e9, 1e-6);
  EXPECT_EQ(e.duration_ns, 9891u);
}

TEST(CostModel, TheFloorsOfSmallKernels) {
  // 128 KiB moved -> 2 blocks of 48, which get 2·2/48 of the bandwidth (half the cores saturate it).
  // memory = 131072 / (1.75e12 · 4/48) s = 898.78 ns -> duration 1200 + 1500 + 899 = 3599 ns.
  const CostEstimate e = estimate_kernel(b910(), hot(vector(1024, 131072)), DType::kF16);
  EXPECT_EQ(e.block_dim, 2u);
  EXPECT_NEAR(e.memory_ns, 898.78, 0.01);
  EXPECT_EQ(e.duration_ns, 3599u);
  // Nothing to move still costs the one-core floor (the smallest kernels measure 1.18-1.28 us).
  const CostEstimate empty = estimate_kernel(b910(), KernelCost{}, DType::kF32);
  EXPECT_EQ(empty.block_dim, 1u);
  EXPECT_EQ(empty.duration_ns, 1200u);
  // A 16x16x16 matmul: one tile on one core.
  const CostEstimate tiny = estimate_kernel(b910(), cube(16, 16, 16, 1536), DType::kF16);
  EXPECT_EQ(tiny.block_dim, 1u);
  EXPECT_EQ(tiny.overhead_ns, 1200u);
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
  // Device to device reads and writes 2 MiB, under the L2: 2000 + ceil(2097152 / 1.75e12 s) = 3199 ns.
  EXPECT_EQ(estimate_copy_ns(b910(), 1 << 20, true), 3199u);
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
  slow.multi_core_launch_ns = 1'000'000'000;
  slow.memory_efficiency = 0.01;
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

// ---- The terms of issue 39, on the ascend910b preset (values in device_spec.cpp) ----------------

const DeviceSpec& b910_now() {
  static const DeviceSpec spec = preset_spec("ascend910b");
  return spec;
}

TEST(CostModelTerms, ReadsAndWritesAddAtTheirOwnBandwidths) {
  // 1 MB read cold at 1.6e12 · 0.89, 1 MB written into the (write-back) L2 at 1.75e12, 48 blocks.
  KernelCost c = vector(0, 2e6);
  c.bytes_written = 1e6;
  const CostEstimate e = estimate_kernel(b910_now(), c, DType::kF32);
  EXPECT_NEAR(e.memory_ns, 1e6 / 1.424e12 * 1e9 + 1e6 / 1.75e12 * 1e9, 1e-6);
  // Hot reads move at the L2's 1.75e12 too.
  c.hot_bytes = 1e6;
  EXPECT_NEAR(estimate_kernel(b910_now(), c, DType::kF32).memory_ns, 2e6 / 1.75e12 * 1e9, 1e-6);
  // Writes beyond the L2's 192 MiB go to HBM at 1.6e12 · 0.5.
  KernelCost big = vector(0, 2 * 256e6);
  big.bytes_written = 256e6;
  const double l2 = 192.0 * 1024 * 1024;
  EXPECT_NEAR(estimate_kernel(b910_now(), big, DType::kF32).memory_ns,
              256e6 / 1.424e12 * 1e9 + l2 / 1.75e12 * 1e9 + (256e6 - l2) / 0.8e12 * 1e9, 1e-3);
}

TEST(CostModelTerms, EachTileDrainsItsOutput) {
  // 4096x4096x32 f32: 512 tiles of 128x256 in 22 waves; a tile computes 2·128·256·32 flops at a
  // quarter of 14.7456e12 · 0.97 per core (0.5863 us) and drains in 0.8 us.
  const CostEstimate e = estimate_kernel(b910_now(), cube(4096, 4096, 32), DType::kF32);
  const double tile = 2.0 * 128 * 256 * 32 / (kPeak / 24 / 4 * 0.97) * 1e9 + 800;
  EXPECT_NEAR(e.compute_ns, 22 * tile, 1e-6);
  // A 16x16 tile drains 256/32768 of that: the smallest matmuls stay at the floor (S1).
  const CostEstimate small = estimate_kernel(b910_now(), cube(16, 16, 16), DType::kF16);
  EXPECT_NEAR(small.compute_ns, 2.0 * 4096 / (kPeak / 24 * 0.97) * 1e9 + 800.0 / 128, 1e-6);
}

TEST(CostModelTerms, AGivenBlockDimRetilesAndFewBlocksAreReadBound) {
  // G15: 16x1024 outputs on 8 blocks retile to 16x128; 10.6 MB of bf16 read at 85e9 per block.
  KernelCost c = cube(16, 1024, 5120, 2.0 * (16 * 5120 + 5120 * 1024 + 16 * 1024));
  c.bytes_written = 2.0 * 16 * 1024;
  c.block_dim = 8;
  const CostEstimate e = estimate_kernel(b910_now(), c, DType::kBF16);
  EXPECT_EQ(e.block_dim, 8u);
  EXPECT_NEAR(e.memory_ns, 2.0 * (16 * 5120 + 5120 * 1024) / (8 * 85e9) * 1e9, 1e-6);
  EXPECT_TRUE(e.memory_bound);
  // f32 operands read at a third of that.
  EXPECT_GT(estimate_kernel(b910_now(), c, DType::kF32).memory_ns, 2.9 * e.memory_ns);
}

TEST(CostModelTerms, ConvolutionsRunHf32AtHalfOfF16) {
  KernelCost conv = cube(4096, 4096, 4096);
  conv.hf32 = true;
  const double f16 = estimate_kernel(b910_now(), conv, DType::kF16).compute_ns;
  const double hf32 = estimate_kernel(b910_now(), conv, DType::kF32).compute_ns;
  const double f32 = estimate_kernel(b910_now(), cube(4096, 4096, 4096), DType::kF32).compute_ns;
  EXPECT_GT(hf32, 1.9 * f16);
  EXPECT_LT(hf32, 2.1 * f16);
  EXPECT_GT(f32, 3.8 * f16);  // a matmul stays true f32 (torch_npu allows HF32 for convs only)
}

TEST(CostModelTerms, VectorStagesUpcastAndReductions) {
  // One block (512 bytes): 1200 ns floor + 540 ns per pass beyond the first.
  KernelCost c = vector(0, 512);
  c.stages = 2;
  EXPECT_EQ(estimate_kernel(b910_now(), c, DType::kF32).overhead_ns, 1200u + 1080u);
  c.precision_upcast = true;  // f16 computes in f32: two cast passes more
  EXPECT_EQ(estimate_kernel(b910_now(), c, DType::kF16).overhead_ns, 1200u + 4 * 540u);
  // A reduction over more than one block combines partials: + 12 us (and 0.2 us multi-core).
  KernelCost r = vector(0, 1 << 20);
  r.cross_core = true;
  EXPECT_EQ(estimate_kernel(b910_now(), r, DType::kF32).overhead_ns, 1200u + 200u + 12000u);
  // Softmax reads its input three times; a strided reduction at 0.45.
  KernelCost s = vector(0, 2e6);
  s.bytes_written = 1e6;
  const double plain = estimate_kernel(b910_now(), s, DType::kF32).memory_ns;
  s.softmax = true;
  EXPECT_NEAR(estimate_kernel(b910_now(), s, DType::kF32).memory_ns - plain, 2e6 / 1.424e12 * 1e9, 1e-6);
  s.softmax = false;
  s.strided = true;
  EXPECT_NEAR(estimate_kernel(b910_now(), s, DType::kF32).memory_ns - plain, 1e6 / 1.424e12 * 1e9 * (1 / 0.45 - 1),
              1e-6);
}

TEST(CostModelTerms, PoolArgmaxIsScalarBound) {
  // 1.49 M outputs x 9 taps at 1 cycle each over 48 blocks at 1.8 GHz.
  KernelCost c = vector(0, 1e6);
  c.argmax_taps = 1492992.0 * 9;
  c.block_dim = 48;
  EXPECT_NEAR(estimate_kernel(b910_now(), c, DType::kF32).compute_ns, 1492992.0 * 9 / (1.8e9 * 48) * 1e9, 1e-6);
}

// The roofline of one task (npuscope/analyzer/roofline.h): the one definition `npuscope analyze`
// and the viewer's details panel both show.
#include "npuscope/analyzer/roofline.h"

#include <gtest/gtest.h>

using namespace npuscope;
using namespace npuscope::analyzer;

namespace {

collector::DeviceInfoRow device() {
  collector::DeviceInfoRow d;
  d.cube_peak_flops = 100e12;  // f16
  d.vector_peak_flops = 10e12;
  d.memory_bandwidth = 1e12;
  return d;
}

constexpr auto kCube = static_cast<std::int32_t>(TaskType::kAiCore);
constexpr auto kVector = static_cast<std::int32_t>(TaskType::kAiVectorCore);
constexpr auto kAiCpu = static_cast<std::int32_t>(TaskType::kAiCpu);
constexpr auto kF16 = static_cast<std::int32_t>(DType::kF16);
constexpr auto kF32 = static_cast<std::int32_t>(DType::kF32);

TEST(Roofline, ABigMatMulNearItsPeakIsComputeBound) {
  const auto d = device();
  // 80 TFLOP/s of 100 (f16 cube), 10 GB/s of 1 TB/s.
  const Roofline r = roofline(kCube, kF16, 80'000'000, 10'000, 1'000, &d);
  EXPECT_DOUBLE_EQ(r.flops_per_s, 80e12);
  EXPECT_NEAR(r.compute_pct, 80, 1e-9);
  EXPECT_NEAR(r.memory_pct, 1, 1e-9);
  EXPECT_EQ(r.bound, Bound::kCompute);
  EXPECT_STREQ(bound_name(r.bound), "compute");
  // f32 inputs run the cube at a quarter of its f16 peak: the same work is 4x closer to it.
  EXPECT_NEAR(roofline(kCube, kF32, 20'000'000, 0, 1'000, &d).compute_pct, 80, 1e-9);
}

TEST(Roofline, AStreamingVectorOpIsMemoryBound) {
  const auto d = device();
  const Roofline r = roofline(kVector, kF16, 1'000'000, 600'000, 1'000, &d);  // 10 % FLOP/s, 60 % bandwidth
  EXPECT_EQ(r.bound, Bound::kMemory);
  EXPECT_NEAR(r.memory_pct, 60, 1e-9);
}

TEST(Roofline, PercentagesAreOfTheCalibratedCeilingsAndOfThePaperPeaks) {
  auto d = device();  // a trace of schema 8: the ceilings of a 910B-like calibration
  d.cube_ceiling_flops = 97e12;
  d.vector_ceiling_flops = 7e12;
  d.memory_ceiling_bandwidth = 0.85e12;
  d.cube_f32_rate = 0.25;
  // 86.3 TFLOP/s (a 4096^3 f16 MatMul on 910B reaches ~86% of its paper peak): 88.97% of the ceiling.
  const Roofline r = roofline(kCube, kF16, 86'300'000, 0, 1'000, &d);
  EXPECT_NEAR(r.compute_pct, 100 * 86.3 / 97, 1e-9);
  EXPECT_NEAR(r.compute_peak_pct, 86.3, 1e-9);
  // f32 at cube_f32_rate of the f16 ceiling; HBM against the effective bandwidth.
  EXPECT_NEAR(roofline(kCube, kF32, 20'000'000, 0, 1'000, &d).compute_pct, 100 * 20 / (97 * 0.25), 1e-9);
  d.cube_f32_rate = 0.5;
  EXPECT_NEAR(roofline(kCube, kF32, 20'000'000, 0, 1'000, &d).compute_pct, 100 * 20 / (97 * 0.5), 1e-9);
  const Roofline m = roofline(kVector, kF16, 1'000'000, 680'000, 1'000, &d);
  EXPECT_NEAR(m.memory_pct, 80, 1e-9);
  EXPECT_NEAR(m.memory_peak_pct, 68, 1e-9);
  // The vector unit by element size: f32 half of f16, int8 twice.
  EXPECT_NEAR(roofline(kVector, kF32, 3'500'000, 0, 1'000, &d).compute_pct, 100, 1e-9);
  EXPECT_NEAR(roofline(kVector, static_cast<std::int32_t>(DType::kI8), 14'000'000, 0, 1'000, &d).compute_pct, 100,
              1e-9);
  // A trace before schema 8 has no ceilings (read as 0): the peaks stand in, f32 at a quarter.
  const auto old = device();
  const Roofline o = roofline(kCube, kF16, 86'300'000, 0, 1'000, &old);
  EXPECT_NEAR(o.compute_pct, 86.3, 1e-9);
  EXPECT_NEAR(o.compute_peak_pct, 86.3, 1e-9);
}

TEST(Roofline, SmallTasksAiCpuAndUnknownDevicesAreLatencyBound) {
  const auto d = device();
  EXPECT_EQ(roofline(kVector, kF16, 1'000, 1'000, 1'000, &d).bound, Bound::kLatency);      // far below both
  EXPECT_EQ(roofline(kAiCpu, kF16, 0, 900'000, 1'000, &d).bound, Bound::kLatency);         // 90 % bandwidth, AI CPU
  EXPECT_EQ(roofline(kCube, kF16, 80'000'000, 0, 1'000, nullptr).bound, Bound::kLatency);  // no DEVICE_INFO
  EXPECT_EQ(roofline(kCube, kF16, 80'000'000, 0, 0, &d).bound, Bound::kCompute) << "a 0 ns task counts as 1 ns";
}

}  // namespace

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

TEST(Roofline, SmallTasksAiCpuAndUnknownDevicesAreLatencyBound) {
  const auto d = device();
  EXPECT_EQ(roofline(kVector, kF16, 1'000, 1'000, 1'000, &d).bound, Bound::kLatency);      // far below both
  EXPECT_EQ(roofline(kAiCpu, kF16, 0, 900'000, 1'000, &d).bound, Bound::kLatency);         // 90 % bandwidth, AI CPU
  EXPECT_EQ(roofline(kCube, kF16, 80'000'000, 0, 1'000, nullptr).bound, Bound::kLatency);  // no DEVICE_INFO
  EXPECT_EQ(roofline(kCube, kF16, 80'000'000, 0, 0, &d).bound, Bound::kCompute) << "a 0 ns task counts as 1 ns";
}

}  // namespace

// The one generic fallback rule (dispatch.h): an op the NPU cannot run executes its CPU kernel as an
// AI CPU task; and the compute dtype the precision modes choose.
#include <gtest/gtest.h>

#include <vector>

#include "emulator/task_end_records.h"
#include "npuscope/emulator/cost_model.h"
#include "npuscope/emulator/dispatch.h"
#include "npuscope/emulator/ops.h"
#include "npuscope/emulator/runtime.h"
#include "npuscope/runtime_hooks/hook_api.h"

using namespace npuscope;
using namespace npuscope::emulator;

using namespace npuscope::emulator::testing;

namespace {

Tensor f64_on_npu(const std::vector<double>& v) {
  return Tensor::from_bytes(v.data(), {static_cast<std::int64_t>(v.size())}, DType::kF64, DeviceRef::npu());
}

}  // namespace

TEST(Fallback, F64AddRunsAsAiCpuTaskInDouble) {
  Runtime::configure({});
  EndRecords rec;
  // Values an f32 computation could not reproduce exactly.
  const std::vector<double> a = {1.0 / 3.0, 1e-12, -2.5, 1e300};
  const std::vector<double> b = {1e-10, 1.0, 0.125, 1e300};
  const Tensor c = ops::add(f64_on_npu(a), f64_on_npu(b));
  EXPECT_EQ(c.dtype(), DType::kF64);
  EXPECT_TRUE(c.device().is_npu());
  const std::vector<double> got = c.to_doubles();
  ASSERT_EQ(got.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(got[i], a[i] + b[i]) << i;
  hooks::subscribe(nullptr);
  ASSERT_EQ(rec.ends.size(), 1u);
  const hooks::TaskRecord& t = rec.ends[0];
  EXPECT_EQ(t.task_type, npuscope::TaskType::kAiCpu);
  EXPECT_EQ(t.fallback, 1);
  EXPECT_EQ(t.compute_dtype, static_cast<std::uint8_t>(DType::kF64));
  EXPECT_EQ(t.device_id, 0);
  // Timed by the AI CPU cost: overhead + max(flops / aicpu_flops, bytes / 10 GB/s).
  const DeviceSpec& spec = Runtime::get().device().spec();
  KernelCost cost;
  cost.unit = ComputeUnit::kAiCpu;
  cost.flops = 4;
  cost.bytes = 3 * 4 * 8;
  EXPECT_EQ(t.end_ns - t.start_ns, estimate_kernel(spec, cost, DType::kF64).duration_ns);
  EXPECT_GE(t.end_ns - t.start_ns, spec.aicpu_overhead_ns);
}

TEST(Fallback, F32AddStaysOnTheVectorUnit) {
  Runtime::configure({});
  EndRecords rec;
  const Tensor x = Tensor::from_floats(std::vector<float>{1, 2}, {2}, DType::kF32, DeviceRef::npu());
  EXPECT_EQ(ops::add(x, x).to_floats(), (std::vector<float>{2, 4}));
  hooks::subscribe(nullptr);
  ASSERT_EQ(rec.ends.size(), 1u);
  EXPECT_EQ(rec.ends[0].task_type, npuscope::TaskType::kAiVectorCore);
  EXPECT_EQ(rec.ends[0].fallback, 0);
}

TEST(Fallback, Bf16OnAChipWithoutBf16) {
  Runtime::configure(RuntimeOptions{.spec = "ascend910"});
  EndRecords rec;
  const Tensor x = Tensor::from_floats(std::vector<float>{1.5f, -3.0f}, {2}, DType::kBF16, DeviceRef::npu());
  EXPECT_EQ(ops::mul(x, x).to_floats(), (std::vector<float>{2.25f, 9.0f}));
  hooks::subscribe(nullptr);
  ASSERT_EQ(rec.ends.size(), 1u);
  EXPECT_EQ(rec.ends[0].task_type, npuscope::TaskType::kAiCpu);
  EXPECT_EQ(rec.ends[0].fallback, 1);
  Runtime::configure({});
}

namespace {

struct Row {
  OpCategory category;
  DType storage;
  PrecisionMode mode;
  DType b910_dtype;  // ascend910b: f32 cube path, bf16
  bool b910_npu;
  DType s910_dtype;  // ascend910: f16 cube only, no bf16
  bool s910_npu;
};

constexpr auto F32 = DType::kF32, F16 = DType::kF16, BF16 = DType::kBF16;
constexpr auto kCube = OpCategory::kCube, kVec = OpCategory::kVector, kSens = OpCategory::kPrecisionSensitive;
constexpr auto kForce = PrecisionMode::kForceFp16, kAllow = PrecisionMode::kAllowFp32ToFp16,
               kMix = PrecisionMode::kAllowMixPrecision, kKeep = PrecisionMode::kMustKeepOriginDtype;

// The precision modes as CANN documents them (DESIGN.md "Numerics"): only f32 storage is lowered;
// allow_fp32_to_fp16 lowers the cube only where it has no f32 path; allow_mix_precision keeps
// precision-sensitive ops in f32; must_keep_origin_dtype never lowers (no f32 cube: AI CPU).
const Row kTable[] = {
    {kCube, F32, kForce, F16, true, F16, true}, {kCube, F32, kAllow, F32, true, F16, true},
    {kCube, F32, kMix, F16, true, F16, true},   {kCube, F32, kKeep, F32, true, F32, false},
    {kVec, F32, kForce, F16, true, F16, true},  {kVec, F32, kAllow, F32, true, F32, true},
    {kVec, F32, kMix, F16, true, F16, true},    {kVec, F32, kKeep, F32, true, F32, true},
    {kSens, F32, kForce, F16, true, F16, true}, {kSens, F32, kAllow, F32, true, F32, true},
    {kSens, F32, kMix, F32, true, F32, true},   {kSens, F32, kKeep, F32, true, F32, true},
};

}  // namespace

TEST(ChooseComputeDtype, F32UnderEachPrecisionMode) {
  const DeviceSpec b910 = preset_spec("ascend910b"), s910 = preset_spec("ascend910");
  for (const Row& r : kTable) {
    const auto a = choose_compute_dtype(r.category, r.storage, r.mode, b910);
    const auto b = choose_compute_dtype(r.category, r.storage, r.mode, s910);
    const std::string where = "category " + std::to_string(static_cast<int>(r.category)) + " mode " +
                              std::string(precision_mode_name(r.mode));
    EXPECT_EQ(a.dtype, r.b910_dtype) << where << " on 910b";
    EXPECT_EQ(a.npu_capable, r.b910_npu) << where << " on 910b";
    EXPECT_EQ(b.dtype, r.s910_dtype) << where << " on 910";
    EXPECT_EQ(b.npu_capable, r.s910_npu) << where << " on 910";
  }
}

TEST(ChooseComputeDtype, HalfStorageIsNeverChanged) {
  const DeviceSpec b910 = preset_spec("ascend910b"), s910 = preset_spec("ascend910");
  for (auto category : {kCube, kVec, kSens}) {
    for (auto mode : {kForce, kAllow, kMix, kKeep}) {
      const auto f16_b = choose_compute_dtype(category, F16, mode, b910);
      EXPECT_EQ(f16_b.dtype, F16);
      EXPECT_TRUE(f16_b.npu_capable);
      EXPECT_TRUE(choose_compute_dtype(category, F16, mode, s910).npu_capable);
      const auto bf16_b = choose_compute_dtype(category, BF16, mode, b910);
      EXPECT_EQ(bf16_b.dtype, BF16);
      EXPECT_TRUE(bf16_b.npu_capable);
      EXPECT_FALSE(choose_compute_dtype(category, BF16, mode, s910).npu_capable);  // no bf16 on 910
      // f64 never runs on the NPU; integers and data movement are left alone.
      EXPECT_FALSE(choose_compute_dtype(category, DType::kF64, mode, b910).npu_capable);
      const auto i32 = choose_compute_dtype(category, DType::kI32, mode, s910);
      EXPECT_EQ(i32.dtype, DType::kI32);
      EXPECT_TRUE(i32.npu_capable);
    }
    const auto moved = choose_compute_dtype(OpCategory::kDataMovement, F32, kForce, s910);
    EXPECT_EQ(moved.dtype, F32);
    EXPECT_TRUE(moved.npu_capable);
  }
}

// NPU numerics settings seen through ops: the overflow modes (REFERENCE.md: f16 exp(12) = 65504 in
// saturation, inf in inf_nan; sqrt(-1) = 0 vs NaN), the float status register, the per-task overflow
// flag the hooks report, and the precision modes lowering f32 vector ops to f16.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "emulator/op_test_util.h"
#include "npuscope/emulator/float16.h"
#include "npuscope/runtime_hooks/hook_api.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;
namespace hooks = npuscope::hooks;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Tensor npu_tensor(const std::vector<float>& v, DType dtype) {
  return Tensor::from_floats(v, {static_cast<std::int64_t>(v.size())}, dtype, DeviceRef::npu());
}

// Collects (op type, overflow) of every finished task. on_task runs on the device worker.
struct TaskLog {
  std::mutex mutex;
  std::vector<std::pair<std::string, int>> ended;

  static void on_task(void* user, const hooks::TaskRecord& r) {
    if (r.phase != hooks::TaskPhase::kEnd) return;
    auto* self = static_cast<TaskLog*>(user);
    std::lock_guard lock(self->mutex);
    self->ended.emplace_back(r.op_type, r.overflow);
  }
  // The overflow flag of the only finished task of `op_type`, or -1.
  int overflow_of(const std::string& op_type) {
    std::lock_guard lock(mutex);
    int found = -1, count = 0;
    for (const auto& [type, overflow] : ended) {
      if (type == op_type) {
        found = overflow;
        ++count;
      }
    }
    return count == 1 ? found : -1;
  }
};

}  // namespace

TEST(OverflowModeTest, SaturationClampsAndRaisesTheFloatStatus) {
  Runtime::configure(RuntimeOptions{.overflow_mode = OverflowMode::kSaturation});
  Device& dev = Runtime::get().device();
  EXPECT_FALSE(dev.float_status());
  EXPECT_EQ(to_vec(ops::exp(npu_tensor({12, 1}, DType::kF16))), (std::vector<double>{65504, 2.71875}));
  EXPECT_TRUE(dev.float_status());
  dev.clear_float_status();
  EXPECT_FALSE(dev.float_status());
  // sqrt(-1): NaN -> 0, and the status is raised again.
  EXPECT_EQ(to_vec(ops::sqrt(npu_tensor({-1, 4}, DType::kF32))), (std::vector<double>{0, 2}));
  EXPECT_TRUE(dev.float_status());
  dev.clear_float_status();
  // An op that stays in range leaves the status alone.
  EXPECT_EQ(to_vec(ops::relu(npu_tensor({-1, 4}, DType::kF16))), (std::vector<double>{0, 4}));
  EXPECT_FALSE(dev.float_status());
  // The CPU golden is IEEE whatever the device mode.
  const Tensor x = Tensor::from_floats(std::vector<float>{12}, {1}, DType::kF16);
  EXPECT_TRUE(all_close(to_vec(ops::exp(x)), {kInf}, 0, 0));
}

TEST(OverflowModeTest, InfNanGivesIeeeResultsWithoutStatus) {
  Runtime::configure(RuntimeOptions{.overflow_mode = OverflowMode::kInfNan});
  EXPECT_TRUE(all_close(to_vec(ops::exp(npu_tensor({12, -30}, DType::kF16))), {kInf, 0}, 0, 0));
  EXPECT_TRUE(all_close(to_vec(ops::sqrt(npu_tensor({-1, 4}, DType::kF32))), {kNaN, 2}, 0, 0));
  EXPECT_TRUE(all_close(to_vec(ops::log(npu_tensor({0}, DType::kF32))), {-kInf}, 0, 0));
  EXPECT_FALSE(Runtime::get().device().float_status());
}

TEST(OverflowModeTest, TheTaskRecordsWhetherItOverflowed) {
  for (const OverflowMode mode : {OverflowMode::kSaturation, OverflowMode::kInfNan}) {
    Runtime::configure(RuntimeOptions{.overflow_mode = mode});
    TaskLog log;
    hooks::SubscriberTable table;
    table.user = &log;
    table.on_task = &TaskLog::on_task;
    hooks::subscribe(&table);
    const Tensor x = npu_tensor({12, 1}, DType::kF16);
    const Tensor e = ops::exp(x);
    const Tensor r = ops::relu(x);
    Runtime::get().synchronize_all();
    hooks::subscribe(nullptr);
    EXPECT_EQ(log.overflow_of("Exp"), 1) << overflow_mode_name(mode);
    EXPECT_EQ(log.overflow_of("Relu"), 0) << overflow_mode_name(mode);
  }
}

TEST(OverflowModeTest, Ascend910DefaultsToSaturation) {
  Runtime::configure(RuntimeOptions{.spec = "ascend910"});
  EXPECT_EQ(Runtime::get().device().overflow_mode(), OverflowMode::kSaturation);
  EXPECT_EQ(to_vec(ops::exp(npu_tensor({12}, DType::kF16))), (std::vector<double>{65504}));
  EXPECT_TRUE(Runtime::get().device().float_status());
}

TEST(PrecisionModeTest, ForceFp16RoundsF32ExpToF16) {
  Runtime::configure(RuntimeOptions{.precision_mode = PrecisionMode::kForceFp16});
  const float y = ops::exp(npu_tensor({0.1f}, DType::kF32)).to_floats()[0];
  // The input and the result are both rounded to f16 (0.1 -> 0.0999755859375).
  EXPECT_EQ(y, round_to_half(std::exp(round_to_half(0.1f))));
  EXPECT_NEAR(y, std::exp(0.1), std::exp(0.1) * 0x1p-11);  // within half an f16 ulp
  EXPECT_NE(y, std::exp(0.1f));
  // Relu is lowered too.
  EXPECT_EQ(ops::relu(npu_tensor({0.1f}, DType::kF32)).to_floats()[0], round_to_half(0.1f));
  // The dtype is still f32: only the arithmetic was f16.
  EXPECT_EQ(ops::exp(npu_tensor({0.1f}, DType::kF32)).dtype(), DType::kF32);
}

TEST(PrecisionModeTest, AllowMixPrecisionKeepsPrecisionSensitiveOpsInF32) {
  Runtime::configure(RuntimeOptions{.precision_mode = PrecisionMode::kAllowMixPrecision});
  const Tensor x = npu_tensor({0.1f, -0.3f}, DType::kF32);
  // Exp and Log are precision-sensitive: f32.
  EXPECT_EQ(ops::exp(x).to_floats(), (std::vector<float>{std::exp(0.1f), std::exp(-0.3f)}));
  EXPECT_EQ(ops::log(ops::abs(x)).dtype(), DType::kF32);
  EXPECT_EQ(ops::log(npu_tensor({0.1f}, DType::kF32)).to_floats()[0], std::log(0.1f));
  // Relu and Abs are plain vector ops: f16.
  EXPECT_EQ(ops::relu(x).to_floats(), (std::vector<float>{round_to_half(0.1f), 0}));
  EXPECT_EQ(ops::abs(x).to_floats(), (std::vector<float>{round_to_half(0.1f), round_to_half(0.3f)}));
  EXPECT_NE(round_to_half(0.1f), 0.1f);
}

TEST(PrecisionModeTest, MustKeepOriginDtypeKeepsF32) {
  Runtime::configure(RuntimeOptions{.precision_mode = PrecisionMode::kMustKeepOriginDtype});
  const Tensor x = npu_tensor({0.1f, -0.3f}, DType::kF32);
  EXPECT_EQ(ops::exp(x).to_floats(), (std::vector<float>{std::exp(0.1f), std::exp(-0.3f)}));
  EXPECT_EQ(ops::abs(x).to_floats(), (std::vector<float>{0.1f, 0.3f}));
}

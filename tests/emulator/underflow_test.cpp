// Underflow counts (Note [Underflow counts] in emulator/src/kernels/kernel_util.h): a task records
// the output elements whose finite non-zero result the narrowing to f16/bf16 flushed to zero or
// left subnormal, beside the overflow flag, which they leave alone.
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "emulator/op_test_util.h"
#include "emulator/task_end_records.h"
#include "npuscope/emulator/float16.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

Tensor npu_tensor(const std::vector<float>& v, DType dtype) {
  return Tensor::from_floats(v, {static_cast<std::int64_t>(v.size())}, dtype, DeviceRef::npu());
}

struct Counts {
  int overflow = -1;
  std::uint32_t underflow = 0, subnormal = 0;
};

// The end record of every task, by op type (each op type runs once per test).
struct TaskLog {
  npuscope::emulator::testing::EndRecords records;

  Counts of(const std::string& op_type) {
    Runtime::get().synchronize_all();
    std::lock_guard lock(records.mutex);
    for (const auto& r : records.ends) {
      if (op_type == r.op_type) return {r.overflow, r.underflow, r.subnormal};
    }
    return {};
  }
};

}  // namespace

// 1e-4 * 1e-4 = 1e-8 is below half of f16's smallest subnormal (5.96e-8): 0. 1e-4 * 1e-3 = 1e-7 is
// subnormal. 1e-4 * 1 stays normal, and 1e-4 * 0 is an exact zero, not an underflow.
TEST(UnderflowTest, ForceFp16CountsFlushedAndSubnormalResults) {
  Runtime::configure(RuntimeOptions{.precision_mode = PrecisionMode::kForceFp16});
  TaskLog log;
  const Tensor a = npu_tensor({1e-4f, 1e-4f, 1e-4f, 1e-4f}, DType::kF32);
  const Tensor b = npu_tensor({1e-4f, 1e-3f, 1.0f, 0.0f}, DType::kF32);
  const std::vector<double> y = to_vec(ops::mul(a, b));
  EXPECT_EQ(y[0], 0.0);
  EXPECT_GT(y[1], 0.0);
  const Counts c = log.of("Mul");
  EXPECT_EQ(c.underflow, 1u);
  EXPECT_EQ(c.subnormal, 1u);
  EXPECT_EQ(c.overflow, 0);  // a flushed value is no overflow
}

TEST(UnderflowTest, ValuesThatStayNormalCountNothing) {
  Runtime::configure(RuntimeOptions{.precision_mode = PrecisionMode::kForceFp16});
  TaskLog log;
  const Tensor a = npu_tensor({0.5f, -3.0f, 1e-2f, 0.0f}, DType::kF32);
  ops::mul(a, a);
  const Counts c = log.of("Mul");
  EXPECT_EQ(c.overflow, 0);
  EXPECT_EQ(c.underflow, 0u);
  EXPECT_EQ(c.subnormal, 0u);
}

// An f16 op computing in f16 (the bulk conversion path) and a bf16 one count the same way; bf16's
// range reaches 1e-38, so 1e-8 is no underflow there.
TEST(UnderflowTest, F16AndBf16OutputsCount) {
  Runtime::configure(RuntimeOptions{.precision_mode = PrecisionMode::kMustKeepOriginDtype});
  {
    TaskLog log;
    ops::mul(npu_tensor({1e-4f, 2.0f}, DType::kF16), npu_tensor({1e-4f, 2.0f}, DType::kF16));
    EXPECT_EQ(log.of("Mul").underflow, 1u);
  }
  {
    TaskLog log;
    // 1e-20 * 3e-21 = 3e-41 is an f32 subnormal, below half of bf16's smallest (9.2e-41): 0.
    ops::mul(npu_tensor({1e-4f, 1e-20f}, DType::kBF16), npu_tensor({1e-4f, 3e-21f}, DType::kBF16));
    const Counts c = log.of("Mul");
    EXPECT_EQ(c.underflow, 1u);  // 3e-41 flushes; 1e-8 does not
    EXPECT_EQ(c.subnormal, 0u);
  }
  {
    TaskLog log;  // f32 kept in f32: nothing narrowed
    ops::mul(npu_tensor({1e-4f}, DType::kF32), npu_tensor({1e-4f}, DType::kF32));
    EXPECT_EQ(log.of("Mul").underflow, 0u);
  }
}

// A value is counted by the op that flushed it: the next op reads a zero and is not counted, and an
// input rounded to f16 on load is not the op's result.
TEST(UnderflowTest, OnlyTheOpThatFlushesCounts) {
  Runtime::configure(RuntimeOptions{.precision_mode = PrecisionMode::kForceFp16});
  TaskLog log;
  const Tensor x = npu_tensor({1e-4f, 1e-4f}, DType::kF32);
  const Tensor y = ops::mul(x, x);  // flushes both
  ops::relu(y);
  ops::exp(npu_tensor({1e-9f}, DType::kF32));  // its input rounds to 0 on load: exp(0) = 1
  EXPECT_EQ(log.of("Mul").underflow, 2u);
  EXPECT_EQ(log.of("Relu").underflow, 0u);
  EXPECT_EQ(log.of("Exp").underflow, 0u);
}

// A cast to f16 narrows too; the cpu device's f16 kernels count in the conversion.
TEST(UnderflowTest, CastsAndTheCpuDeviceCount) {
  Runtime::configure(RuntimeOptions{});
  {
    TaskLog log;
    ops::cast(npu_tensor({1e-9f, 1e-6f, 1.0f}, DType::kF32), DType::kF16);
    const Counts c = log.of("Cast");
    EXPECT_EQ(c.underflow, 1u);
    EXPECT_EQ(c.subnormal, 1u);
  }
  {
    TaskLog log;
    const Tensor a = Tensor::from_floats(std::vector<float>{1e-4f, 3.0f}, {2}, DType::kF16);
    ops::mul(a, a);
    EXPECT_EQ(log.of("Mul").underflow, 1u);
  }
}

// The overflow modes are untouched: saturation still clamps and flags, and an underflow raises no
// float status.
TEST(UnderflowTest, OverflowModesUnaffected) {
  for (const OverflowMode mode : {OverflowMode::kSaturation, OverflowMode::kInfNan}) {
    Runtime::configure(RuntimeOptions{.precision_mode = PrecisionMode::kForceFp16, .overflow_mode = mode});
    Device& dev = Runtime::get().device();
    dev.clear_float_status();
    TaskLog log;
    const std::vector<double> y =
        to_vec(ops::mul(npu_tensor({1e-4f, 300.0f}, DType::kF32), npu_tensor({1e-4f, 300.0f}, DType::kF32)));
    EXPECT_EQ(y[0], 0.0) << overflow_mode_name(mode);
    EXPECT_EQ(y[1], mode == OverflowMode::kSaturation ? 65504.0 : std::numeric_limits<double>::infinity());
    const Counts c = log.of("Mul");
    EXPECT_EQ(c.overflow, 1) << overflow_mode_name(mode);
    EXPECT_EQ(c.underflow, 1u) << overflow_mode_name(mode);
    EXPECT_EQ(dev.float_status(), mode == OverflowMode::kSaturation);
    dev.clear_float_status();
    TaskLog quiet;
    ops::mul(npu_tensor({1e-4f}, DType::kF32), npu_tensor({1e-4f}, DType::kF32));
    EXPECT_EQ(quiet.of("Mul").overflow, 0) << overflow_mode_name(mode);
    EXPECT_FALSE(dev.float_status()) << overflow_mode_name(mode);
  }
}

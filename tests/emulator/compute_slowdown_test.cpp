// DeviceSpec::compute_slowdown and NPUSCOPE_COMPUTE_SLOWDOWN: a slowed device's compute tasks take
// that many times longer, its copies do not, and a bad factor is refused by name.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/ops.h"
#include "npuscope/emulator/runtime.h"

using namespace npuscope::emulator;

namespace {

struct Busy {
  std::uint64_t matmul_ns = 0, copy_ns = 0;
};

// The modelled device time of one upload and of one matmul, on a fresh runtime.
Busy measure(const RuntimeOptions& options) {
  Runtime::configure(options);
  Device& d = Runtime::get().device(0);
  const Tensor host = Tensor::randn({256, 256}, DType::kF16, DeviceRef::cpu(), 1);
  d.synchronize();
  std::uint64_t before = d.modelled_busy_ns();
  const Tensor x = host.to(DeviceRef::npu(0));
  d.synchronize();
  Busy b;
  b.copy_ns = d.modelled_busy_ns() - before;
  before = d.modelled_busy_ns();
  const Tensor y = ops::matmul(x, x);
  d.synchronize();
  b.matmul_ns = d.modelled_busy_ns() - before;
  return b;
}

class ComputeSlowdown : public ::testing::Test {
 protected:
  void TearDown() override {
    unsetenv("NPUSCOPE_COMPUTE_SLOWDOWN");
    Runtime::configure({});
  }
};

}  // namespace

TEST_F(ComputeSlowdown, MultipliesComputeTasksOnly) {
  const Busy normal = measure({});
  RuntimeOptions slowed;
  slowed.compute_slowdown = 3.0;
  const Busy slow = measure(slowed);
  ASSERT_GT(normal.matmul_ns, 0u);
  EXPECT_EQ(slow.matmul_ns, 3 * normal.matmul_ns);
  EXPECT_EQ(slow.copy_ns, normal.copy_ns);
  EXPECT_EQ(Runtime::get().device(0).spec().compute_slowdown, 3.0);
}

TEST_F(ComputeSlowdown, ReadFromTheEnvironmentAndRefusedOutOfRange) {
  setenv("NPUSCOPE_COMPUTE_SLOWDOWN", "2.5", 1);
  EXPECT_EQ(RuntimeOptions::from_environment().compute_slowdown, 2.5);
  for (const char* bad : {"0.5", "fast", "2x", "1e9"}) {
    setenv("NPUSCOPE_COMPUTE_SLOWDOWN", bad, 1);
    try {
      RuntimeOptions::from_environment();
      ADD_FAILURE() << bad << " accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("NPUSCOPE_COMPUTE_SLOWDOWN='" + std::string(bad) + "'"), std::string::npos)
          << e.what();
    }
  }
  // A spec file may set it too, within the documented range.
  DeviceSpec spec = preset_spec("ascend910b");
  spec.compute_slowdown = 0.5;
  EXPECT_THROW(validate_spec(spec), SpecError);
}

#include <gtest/gtest.h>

#include "emulator/op_test_util.h"

#include "npuscope/emulator/ops.h"
#include "npuscope/emulator/runtime.h"

using namespace npuscope::emulator;

TEST(Smoke, AddOnNpuMatchesCpu) {
  Runtime::configure({});
  auto a = Tensor::from_floats(std::vector<float>{1, 2, 3, 4}, {2, 2}, DType::kF16, DeviceRef::npu());
  auto b = Tensor::from_floats(std::vector<float>{0.5f}, {1}, DType::kF16, DeviceRef::npu());
  auto c = ops::add(a, b).to_floats();
  EXPECT_EQ(c, (std::vector<float>{1.5f, 2.5f, 3.5f, 4.5f}));
}

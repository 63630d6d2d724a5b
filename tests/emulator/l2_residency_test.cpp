// Note [L2 residency]: the LRU over a device's traffic, and the launches that read hot because of it.
#include "npuscope/emulator/l2_residency.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "npuscope/emulator/dispatch.h"
#include "npuscope/emulator/runtime.h"
#include "task_end_records.h"

using namespace npuscope;
using namespace npuscope::emulator;

namespace {

TEST(L2Residency, WhatWasTouchedLastStaysUntilTheTrafficPushesItOut) {
  L2Residency l2(100);
  EXPECT_FALSE(l2.resident(1, 40));  // never touched
  l2.touch(1, 40);
  l2.touch(2, 40);
  EXPECT_TRUE(l2.resident(1, 40));  // 40 bytes since, plus its own 40: fits in 100
  EXPECT_TRUE(l2.resident(2, 40));
  l2.touch(3, 40);
  EXPECT_FALSE(l2.resident(1, 40));  // 80 since + 40 > 100: evicted
  EXPECT_TRUE(l2.resident(2, 40));
  l2.touch(1, 40);  // read again: the newest
  EXPECT_TRUE(l2.resident(1, 40));
  EXPECT_FALSE(l2.resident(2, 40));
  EXPECT_FALSE(l2.resident(4, 200));  // bigger than the L2: never held
  l2.touch(4, 200);
  EXPECT_FALSE(l2.resident(4, 200));
  EXPECT_FALSE(l2.resident(1, 40));  // pushed out by the big one
}

TEST(L2Residency, ManyKeysAllHeldGrowTheTable) {
  L2Residency l2(1 << 30);
  for (std::uint64_t key = 0; key < 50000; ++key) l2.touch(key * 4096, 64);  // addresses a page apart; key 0 too
  for (std::uint64_t key = 0; key < 50000; ++key) ASSERT_TRUE(l2.resident(key * 4096, 64)) << key;
  EXPECT_FALSE(l2.resident(4096 * 50000, 64));
}

TEST(L2Residency, NoL2HoldsNothing) {
  L2Residency l2(0);
  l2.touch(1, 1);
  EXPECT_FALSE(l2.resident(1, 1));
}

TEST(L2Residency, PruningForgetsOnlyWhatIsGone) {
  L2Residency l2(1000);
  for (std::uint64_t key = 1; key <= 100000; ++key) l2.touch(key, 10);  // prunes many times on the way
  for (std::uint64_t key = 100000; key > 99900; --key) EXPECT_TRUE(l2.resident(key, 10)) << key;
  EXPECT_FALSE(l2.resident(99900, 10));
  EXPECT_FALSE(l2.resident(1, 10));
}

// The modelled device time of each task of `op_type`, in launch order.
std::vector<std::uint64_t> durations(emulator::testing::EndRecords& records, const std::string& op_type) {
  Runtime::get().synchronize_all();
  std::lock_guard lock(records.mutex);
  std::vector<std::uint64_t> out;
  for (const auto& r : records.ends) {
    if (r.op_type == op_type) out.push_back(r.end_ns - r.start_ns);
  }
  return out;
}

class L2Launches : public ::testing::Test {
 protected:
  std::string spec_path_ = "/tmp/npuscope_l2_test_" + std::to_string(::getpid()) + ".json";
  void TearDown() override {
    Runtime::configure({});
    std::remove(spec_path_.c_str());
  }
  // ascend910b with a 16 MiB L2, so that a few 8 MiB tensors push one out.
  void configure_small_l2() {
    std::ofstream(spec_path_) << R"({"base": "ascend910b", "l2_bytes": 16777216})";
    Runtime::configure({.spec = spec_path_});
  }
};

TEST_F(L2Launches, AnInputJustWrittenIsReadFasterThanOneTheTrafficPushedOut) {
  configure_small_l2();
  const DeviceRef npu = DeviceRef::npu(0);
  const Shape shape{2 * 1024 * 1024};  // 8 MiB of f32
  const Tensor a = Tensor::zeros(shape, DType::kF32, npu);
  emulator::testing::EndRecords records;
  const Tensor hot = call_op1("Abs", {a});
  call_op1("Relu", {hot});  // reads what Abs just wrote
  const Tensor cold = call_op1("Abs", {a});
  for (int i = 0; i < 3; ++i) call_op1("Neg", {Tensor::zeros(shape, DType::kF32, npu)});  // 48 MiB of traffic
  call_op1("Relu", {cold});
  const std::vector<std::uint64_t> relu = durations(records, "Relu");
  ASSERT_EQ(relu.size(), 2u);
  EXPECT_LT(relu[0], relu[1]) << "hot " << relu[0] << " ns, cold " << relu[1] << " ns";
}

TEST_F(L2Launches, ASpecWithoutAnL2TermTimesBothAlike) {
  Runtime::configure({.spec = "tiny"});
  const DeviceRef npu = DeviceRef::npu(0);
  const Shape shape{64 * 1024};
  const Tensor a = Tensor::zeros(shape, DType::kF32, npu);
  emulator::testing::EndRecords records;
  call_op1("Relu", {call_op1("Abs", {a})});
  const Tensor cold = call_op1("Abs", {a});
  for (int i = 0; i < 3; ++i) call_op1("Neg", {Tensor::zeros(shape, DType::kF32, npu)});
  call_op1("Relu", {cold});
  const std::vector<std::uint64_t> relu = durations(records, "Relu");
  ASSERT_EQ(relu.size(), 2u);
  EXPECT_EQ(relu[0], relu[1]);
}

}  // namespace

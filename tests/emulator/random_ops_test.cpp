// Bernoulli and Randperm: the same values for a seed on both backends and different ones for another
// seed; Randperm a permutation of every length (0, 1, many) in int32 and int64, an AI CPU task on the
// device; bad inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "emulator/ext_op_test_util.h"
#include "emulator/task_end_records.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

class RandomOpsTest : public OpTest {};

Tensor randperm(std::int64_t n, std::int64_t seed, DType dtype = DType::kI64, bool npu = false) {
  Tensor carrier = ints({0}, {1}, dtype);
  if (npu) carrier = on_npu({carrier})[0];
  return call_op1("Randperm", {carrier}, {{"n", n}, {"seed", seed}});
}

}  // namespace

TEST_F(RandomOpsTest, RandpermIsASeededPermutation) {
  for (std::int64_t n : {0, 1, 2, 7, 1000}) {
    for (DType dtype : {DType::kI64, DType::kI32}) {
      const Tensor p = randperm(n, 42, dtype);
      EXPECT_EQ(p.dtype(), dtype);
      EXPECT_EQ(p.shape(), (Shape{n}));
      I64s values = p.to_ints();
      std::sort(values.begin(), values.end());
      I64s want(static_cast<std::size_t>(n));
      std::iota(want.begin(), want.end(), 0);
      EXPECT_EQ(values, want) << n;
      EXPECT_EQ(randperm(n, 42, dtype, true).to_ints(), p.to_ints()) << n;  // the same on the device
    }
  }
  EXPECT_NE(randperm(1000, 42).to_ints(), randperm(1000, 43).to_ints());
  I64s identity(1000);
  std::iota(identity.begin(), identity.end(), 0);
  EXPECT_NE(randperm(1000, 42).to_ints(), identity);
}

TEST_F(RandomOpsTest, RandpermRunsAsAnAiCpuTask) {
  EndRecords log;
  (void)randperm(16, 1, DType::kI64, true).cpu();
  ASSERT_EQ(log.ends.size(), 1u);
  EXPECT_EQ(std::string(log.ends[0].op_type), "Randperm");
  EXPECT_EQ(log.ends[0].task_type, npuscope::TaskType::kAiCpu);
}

TEST_F(RandomOpsTest, RandpermBadInputsNameTheProblem) {
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("Randperm", {ints({0}, {1})}, {{"seed", std::int64_t{1}}});
                       }),
                       {"Randperm", "'n'"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("Randperm", {floats({0}, {1})}, {{"n", std::int64_t{3}}});
                       }),
                       {"Randperm", "int32 or int64"}));
}

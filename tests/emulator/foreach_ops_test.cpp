// ForeachAddList and ForeachMulScalar: hand values on both backends, NPU vs CPU in f32/f16, one task
// for a whole list with the bytes of every list (Note [Foreach launches]), in place, bad inputs.
#include <gtest/gtest.h>

#include <vector>

#include "emulator/ext_op_test_util.h"
#include "emulator/task_end_records.h"
#include "npuscope/emulator/dispatch.h"
#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/runtime.h"

using namespace npuscope;
using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

class ForeachOpsTest : public OpTest {};

}  // namespace

TEST_F(ForeachOpsTest, AddListHandValues) {
  const Tensor a0 = floats({1.5f, -2.0f, 0.25f, 3.0f}, {2, 2}), a1 = floats_1d({10.0f, -1.0f});
  const Tensor b0 = floats({0.5f, 4.0f, -1.0f, 2.0f}, {2, 2}), b1 = floats_1d({2.0f, 8.0f});
  const BothBackends r = run_both("ForeachAddList", {a0, a1, b0, b1}, {{"alpha", -0.5}});
  ASSERT_EQ(r.cpu.size(), 2u);
  ASSERT_EQ(r.npu.size(), 2u);
  EXPECT_EQ(r.npu[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(r.npu[1].shape(), (Shape{2}));
  for (const auto* side : {&r.cpu, &r.npu}) {
    EXPECT_TRUE(all_close(to_vec((*side)[0]), {1.25, -4.0, 0.75, 2.0}, 1e-7, 1e-7));
    EXPECT_TRUE(all_close(to_vec((*side)[1]), {9.0, -5.0}, 1e-7, 1e-7));
  }
  // alpha defaults to 1.
  EXPECT_TRUE(all_close(to_vec(call_op("ForeachAddList", {a1, b1}, {})[0]), {12.0, 7.0}, 0, 0));
}

TEST_F(ForeachOpsTest, MulScalarHandValues) {
  const Tensor x0 = floats({1.5f, -2.0f, 0.25f}, {3}), x1 = floats({4.0f, 8.0f}, {1, 2});
  const BothBackends r = run_both("ForeachMulScalar", {x0, x1}, {{"scalar", 0.9}});
  ASSERT_EQ(r.npu.size(), 2u);
  EXPECT_EQ(r.npu[1].shape(), (Shape{1, 2}));
  for (const auto* side : {&r.cpu, &r.npu}) {
    EXPECT_TRUE(all_close(to_vec((*side)[0]), {1.35, -1.8, 0.225}, 1e-6, 1e-7));
    EXPECT_TRUE(all_close(to_vec((*side)[1]), {3.6, 7.2}, 1e-6, 1e-7));
  }
}

TEST_F(ForeachOpsTest, NpuMatchesCpuInF32AndF16) {
  for (DType dt : {DType::kF32, DType::kF16, DType::kBF16}) {
    const Tensor a0 = Tensor::randn({8, 33}, dt, DeviceRef::cpu(), 1), a1 = Tensor::randn({5}, dt, DeviceRef::cpu(), 2);
    const Tensor b0 = Tensor::randn({8, 33}, dt, DeviceRef::cpu(), 3), b1 = Tensor::randn({5}, dt, DeviceRef::cpu(), 4);
    const Tolerance tol = default_tolerance(dt);
    const BothBackends add = run_both("ForeachAddList", {a0, a1, b0, b1}, {{"alpha", -0.01}});
    const BothBackends mul = run_both("ForeachMulScalar", {a0, a1}, {{"scalar", 0.9}});
    for (std::size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(add.npu[i].dtype(), dt);
      EXPECT_TRUE(all_close(to_vec(add.npu[i]), to_vec(add.cpu[i]), tol.rtol, tol.atol)) << dtype_name(dt) << i;
      EXPECT_TRUE(all_close(to_vec(mul.npu[i]), to_vec(mul.cpu[i]), tol.rtol, tol.atol)) << dtype_name(dt) << i;
    }
  }
}

// Note [Foreach launches]: one task for the list, its bytes those of every input and output.
TEST_F(ForeachOpsTest, OneTaskForTheWholeList) {
  Runtime::configure({});
  const std::vector<Tensor> in = on_npu({Tensor::randn({64, 3, 11, 11}, DType::kF32, DeviceRef::cpu(), 1),
                                         Tensor::randn({64}, DType::kF32, DeviceRef::cpu(), 2),
                                         Tensor::randn({64, 3, 11, 11}, DType::kF32, DeviceRef::cpu(), 3),
                                         Tensor::randn({64}, DType::kF32, DeviceRef::cpu(), 4)});
  EndRecords rec;
  const std::vector<Tensor> out = call_op("ForeachAddList", in, {{"alpha", 0.1}});
  const std::vector<Tensor> scaled = call_op("ForeachMulScalar", {in[0], in[1]}, {{"scalar", 2.0}});
  out[1].cpu();
  scaled[1].cpu();
  hooks::subscribe(nullptr);
  ASSERT_EQ(rec.ends.size(), 2u);
  const double list_bytes = (64 * 3 * 11 * 11 + 64) * 4.0;
  EXPECT_EQ(std::string(rec.ends[0].op_type), "ForeachAddList");
  EXPECT_EQ(rec.ends[0].bytes, static_cast<std::uint64_t>(3 * list_bytes));  // a, b read; out written
  EXPECT_EQ(rec.ends[0].task_type, npuscope::TaskType::kAiVectorCore);
  EXPECT_EQ(rec.ends[0].fallback, 0);
  EXPECT_EQ(std::string(rec.ends[1].op_type), "ForeachMulScalar");
  EXPECT_EQ(rec.ends[1].bytes, static_cast<std::uint64_t>(2 * list_bytes));
}

// The in-place overloads (_foreach_add_) pass each a_i as its own output.
TEST_F(ForeachOpsTest, InPlaceOutputsAliasInputs) {
  for (DeviceRef dev : {DeviceRef::cpu(), DeviceRef::npu()}) {
    Tensor a = floats_1d({1, 2, 3}).to(dev), b = floats_1d({1, 1, 1}).to(dev);
    Tensor x = floats_1d({2, 4}).to(dev);
    const std::vector<Tensor> a_out{a}, x_out{x};
    call_op("ForeachAddList", {a, b}, {{"alpha", 2.0}}, {.outputs = a_out});
    call_op("ForeachMulScalar", {x}, {{"scalar", 0.5}}, {.outputs = x_out});
    EXPECT_TRUE(all_close(to_vec(a), {3, 4, 5}, 0, 0));
    EXPECT_TRUE(all_close(to_vec(x), {1, 2}, 0, 0));
  }
}

TEST_F(ForeachOpsTest, BadInputsNameTheOp) {
  const Tensor f = floats_1d({1, 2}), g = floats_1d({1, 2, 3});
  EXPECT_THROW(call_op("ForeachAddList", {f, f, f}, {}), InvalidArgument);  // odd count
  EXPECT_THROW(call_op("ForeachAddList", {f, g}, {}), InvalidArgument);     // shapes differ
  EXPECT_THROW(call_op("ForeachAddList", {f, floats_1d({1, 2}, DType::kF16)}, {}), InvalidArgument);
  EXPECT_THROW(call_op("ForeachMulScalar", {ints_1d({1, 2}, DType::kI32)}, {}), InvalidArgument);
  try {
    call_op("ForeachAddList", {f, g}, {});
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("ForeachAddList"), std::string::npos) << e.what();
  }
}

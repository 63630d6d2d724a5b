// The foreach ops: hand values on both backends (ForeachAddList, ForeachMulScalar, and the Adam family:
// Addcmul, Sqrt, DivScalarList, AddScalar, AddcdivScalarList, ...), NPU vs CPU in f32/f16, one task
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

// Every op of the family on two positions of different shapes, against hand values, both backends.
TEST_F(ForeachOpsTest, EveryOpOfTheFamilyHandValues) {
  const Tensor x0 = floats({1, 4, 9, 16}, {2, 2}), x1 = floats_1d({0.25f, 2});
  const Tensor t0 = floats({2, -1, 0.5f, 3}, {2, 2}), t1 = floats_1d({4, -8});
  const Tensor u0 = floats({4, 2, 1, -6}, {2, 2}), u1 = floats_1d({0.5f, 2});
  const Attrs one{{"scalar", 0.5}}, each{{"scalars", std::vector<double>{2.0, -1.0}}};
  struct Case {
    const char* op;
    std::vector<Tensor> in;
    Attrs attrs;
    Doubles want0, want1;
  };
  const std::vector<Case> cases{
      {"ForeachMulList", {x0, x1, t0, t1}, {}, {2, -4, 4.5, 48}, {1, -16}},
      {"ForeachDivList", {x0, x1, t0, t1}, {}, {0.5, -4, 18, 16.0 / 3}, {0.0625, -0.25}},
      {"ForeachAddScalar", {x0, x1}, one, {1.5, 4.5, 9.5, 16.5}, {0.75, 2.5}},
      {"ForeachDivScalar", {x0, x1}, one, {2, 8, 18, 32}, {0.5, 4}},
      {"ForeachAddScalarList", {x0, x1}, each, {3, 6, 11, 18}, {-0.75, 1}},
      {"ForeachMulScalarList", {x0, x1}, each, {2, 8, 18, 32}, {-0.25, -2}},
      {"ForeachDivScalarList", {x0, x1}, each, {0.5, 2, 4.5, 8}, {-0.25, -2}},
      {"ForeachSqrt", {x0, x1}, {}, {1, 2, 3, 4}, {0.5, 1.4142135381698608}},
      {"ForeachAddcmulScalar", {x0, x1, t0, t1, u0, u1}, one, {5, 3, 9.25, 7}, {1.25, -6}},
      {"ForeachAddcmulScalarList", {x0, x1, t0, t1, u0, u1}, each, {17, 0, 10, -20}, {-1.75, 18}},
      {"ForeachAddcdivScalar", {x0, x1, t0, t1, u0, u1}, one, {1.25, 3.75, 9.25, 15.75}, {4.25, 0}},
      {"ForeachAddcdivScalarList", {x0, x1, t0, t1, u0, u1}, each, {2, 3, 10, 15}, {-7.75, 6}},
  };
  for (const Case& c : cases) {
    const BothBackends r = run_both(c.op, c.in, c.attrs);
    ASSERT_EQ(r.npu.size(), 2u) << c.op;
    EXPECT_EQ(r.npu[0].shape(), (Shape{2, 2})) << c.op;
    for (const auto* side : {&r.cpu, &r.npu}) {
      EXPECT_TRUE(all_close(to_vec((*side)[0]), c.want0, 1e-6, 1e-7)) << c.op;
      EXPECT_TRUE(all_close(to_vec((*side)[1]), c.want1, 1e-6, 1e-7)) << c.op;
    }
  }
}

TEST_F(ForeachOpsTest, ScalarListsAndListCountsAreChecked) {
  const Tensor f = floats_1d({1, 2});
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op("ForeachDivScalarList", {f, f}, {{"scalars", std::vector<double>{1.0}}});
                       }),
                       {"ForeachDivScalarList", "2 tensors, 1 scalars"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op("ForeachAddcdivScalar", {f, f, f, f}, {});
                       }),
                       {"ForeachAddcdivScalar", "3 lists"}));
  EXPECT_TRUE(mentions(error_of([&] { call_op("ForeachSqrt", {ints_1d({4}, DType::kI64)}, {}); }),
                       {"ForeachSqrt", "floating"}));
}

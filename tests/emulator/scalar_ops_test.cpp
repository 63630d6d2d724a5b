// Adds, Muls, Axpy, Addcmul, Addcdiv, Lerp, MaskedFill, Fill: values from PyTorch 1.13 CPU, NPU vs
// CPU in f32/f16, exact integers, in-place runs (output 0 == input 0) and bad inputs; Rsqrt, Sqrt
// and Reciprocal in place.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "emulator/alias_test_util.h"
#include "emulator/ext_op_test_util.h"
#include "npuscope/emulator/dispatch.h"
#include "npuscope/emulator/runtime.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

class ScalarOpsTest : public OpTest {};

const std::vector<float> kX{1.5f, -2.0f, 0.25f, 3.0f}, kY{0.5f, 4.0f, -1.0f, 2.0f}, kZ{2.0f, 0.5f, 4.0f, -8.0f};

Tensor vec(const std::vector<float>& v, DType dt = DType::kF32) { return floats(v, {4}, dt); }

}  // namespace

TEST_F(ScalarOpsTest, FloatValuesMatchPyTorch) {
  const Tensor x = vec(kX), y = vec(kY), z = vec(kZ);
  struct Case {
    const char* op;
    std::vector<Tensor> in;
    Attrs attrs;
    Doubles want;
  };
  const std::vector<Case> cases{
      {"Adds", {x}, {{"value", 0.5}}, {2.0, -1.5, 0.75, 3.5}},
      {"Muls", {x}, {{"value", -2.0}}, {-3.0, 4.0, -0.5, -6.0}},
      {"Axpy", {x, y}, {{"alpha", -0.5}}, {1.25, -4.0, 0.75, 2.0}},
      {"Addcmul", {x, y, z}, {{"value", std::int64_t{-2}}}, {-0.5, -6, 8.25, 35}},
      {"Addcdiv", {x, y, z}, {{"value", 0.5}}, {1.625, 2, 0.125, 2.875}},
      {"Lerp", {x, y}, {{"weight", 0.3}}, {1.2, -0.2, -0.125, 2.7}},
      {"Lerp", {x, y}, {{"weight", 0.8}}, {0.7, 2.8, -0.75, 2.2}},
      {"Fill", {x}, {{"value", 7.25}}, {7.25, 7.25, 7.25, 7.25}},
  };
  for (const Case& c : cases) {
    const BothBackends r = run_both(c.op, c.in, c.attrs);
    EXPECT_TRUE(all_close(to_vec(r.cpu[0]), c.want, 1e-7, 1e-12)) << c.op;  // f32 storage
    EXPECT_TRUE(all_close(to_vec(r.npu[0]), c.want, 1e-6, 1e-6)) << c.op;
  }
}

TEST_F(ScalarOpsTest, BroadcastsAndKeepsInputZerosDtype) {
  const Tensor x = Tensor::randn({3, 4}, DType::kF32, DeviceRef::cpu(), 1);
  const Tensor row = floats({1, 2, 3, 4}, {4});
  const Tensor y = call_op1("Axpy", {x, row}, {{"alpha", 2.0}});
  EXPECT_EQ(y.shape(), (Shape{3, 4}));
  const Doubles xv = to_vec(x);
  Doubles want(12);
  for (int i = 0; i < 12; ++i) want[i] = xv[i] + 2.0 * (i % 4 + 1);
  EXPECT_TRUE(all_close(to_vec(y), want, 1e-6, 1e-6));
  // A f16 second input is converted; the result is input 0's f32.
  EXPECT_EQ(call_op1("Axpy", {x, floats({1, 2, 3, 4}, {4}, DType::kF16)}, {{"alpha", 2.0}}).dtype(), DType::kF32);
}

TEST_F(ScalarOpsTest, NpuMatchesCpuInF32AndF16) {
  for (DType dt : {DType::kF32, DType::kF16, DType::kBF16}) {
    const Tensor x = Tensor::randn({8, 33}, dt, DeviceRef::cpu(), 1);
    const Tensor y = Tensor::randn({8, 33}, dt, DeviceRef::cpu(), 2);
    const Tensor z = Tensor::uniform({33}, dt, DeviceRef::cpu(), 3, 0.5f, 2.0f);
    const Tolerance tol = default_tolerance(dt);
    EXPECT_TRUE(npu_close_to_cpu("Adds", {x}, {{"value", 0.1}}, tol.rtol, tol.atol));
    EXPECT_TRUE(npu_close_to_cpu("Muls", {x}, {{"value", 0.9}}, tol.rtol, tol.atol));
    EXPECT_TRUE(npu_close_to_cpu("Axpy", {x, y}, {{"alpha", -0.01}}, tol.rtol, tol.atol));
    EXPECT_TRUE(npu_close_to_cpu("Addcmul", {x, y, z}, {{"value", 0.1}}, tol.rtol, tol.atol));
    EXPECT_TRUE(npu_close_to_cpu("Addcdiv", {x, y, z}, {{"value", -0.001}}, tol.rtol, tol.atol));
    EXPECT_TRUE(npu_close_to_cpu("Lerp", {x, y}, {{"weight", 0.1}}, tol.rtol, tol.atol));
    EXPECT_TRUE(npu_close_to_cpu("Lerp", {x, y}, {{"weight", 0.9}}, tol.rtol, tol.atol));
    EXPECT_EQ(call_op1("Muls", {x.to(DeviceRef::npu())}, {{"value", 2.0}}).dtype(), dt);
  }
}

TEST_F(ScalarOpsTest, IntegersAreExact) {
  const std::int64_t big = (std::int64_t{1} << 60) + 1;
  const Tensor x = ints({big, -3, 7}, {3});
  for (bool npu : {false, true}) {
    auto run = [&](const char* op, std::vector<Tensor> in, const Attrs& a) {
      return call_op1(op, npu ? on_npu(in) : in, a).cpu().to_ints();
    };
    EXPECT_EQ(run("Adds", {x}, {{"value", std::int64_t{2}}}), (I64s{big + 2, -1, 9}));
    EXPECT_EQ(run("Muls", {x}, {{"value", std::int64_t{-1}}}), (I64s{-big, 3, -7}));
    EXPECT_EQ(run("Axpy", {x, ints({1, 2, 3}, {3})}, {{"alpha", std::int64_t{3}}}), (I64s{big + 3, 3, 16}));
    EXPECT_EQ(run("Addcmul", {x, ints({1, 2, 3}, {3}), ints({2, 2, 2}, {3})}, {{"value", std::int64_t{1}}}),
              (I64s{big + 2, 1, 13}));
    EXPECT_EQ(run("Fill", {x}, {{"value", big}}), (I64s{big, big, big}));
    const Tensor mask = ints({1, 0, 1}, {3}, DType::kBool);
    EXPECT_EQ(run("MaskedFill", {x, mask}, {{"value", std::int64_t{-5}}}), (I64s{-5, -3, -5}));
    // int32 wraps as a C cast; bool stores != 0.
    EXPECT_EQ(run("Adds", {ints({2147483647}, {1}, DType::kI32)}, {{"value", std::int64_t{1}}}), (I64s{-2147483648}));
    EXPECT_EQ(run("Muls", {ints({1, 0, 1}, {3}, DType::kBool)}, {{"value", std::int64_t{0}}}), (I64s{0, 0, 0}));
    EXPECT_EQ(run("Fill", {ints({0, 0}, {2}, DType::kBool)}, {{"value", std::int64_t{1}}}), (I64s{1, 1}));
  }
}

TEST_F(ScalarOpsTest, MaskedFillBroadcastsTheMask) {
  const Tensor x = floats({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor mask = ints({0, 1, 0}, {3}, DType::kBool);
  const BothBackends r = run_both("MaskedFill", {x, mask}, {{"value", -1.5}});
  EXPECT_EQ(to_vec(r.cpu[0]), (Doubles{1, -1.5, 3, 4, -1.5, 6}));
  EXPECT_EQ(to_vec(r.npu[0]), (Doubles{1, -1.5, 3, 4, -1.5, 6}));
  // -inf, as attention masks use.
  const Tensor inf = call_op1("MaskedFill", {x, mask}, {{"value", -INFINITY}});
  EXPECT_EQ(to_vec(inf)[1], -INFINITY);
}

// Note [Filling infinities]: an infinity the program writes is moved, not an overflow: saturation
// mode keeps it and raises no float status; a finite value too large for the dtype still overflows.
TEST_F(ScalarOpsTest, FillingAnInfinityIsNotAnOverflow) {
  Runtime::configure(RuntimeOptions{.overflow_mode = OverflowMode::kSaturation});
  Device& dev = Runtime::get().device(0);
  const Tensor x = floats({1, 2, 3}, {3}, DType::kF16).to(DeviceRef::npu());
  const Tensor mask = ints({0, 1, 0}, {3}, DType::kBool).to(DeviceRef::npu());
  EXPECT_EQ(to_vec(call_op1("MaskedFill", {x, mask}, {{"value", -INFINITY}}))[1], -INFINITY);
  EXPECT_TRUE(std::isinf(to_vec(call_op1("Fill", {x}, {{"value", INFINITY}}))[0]));
  EXPECT_FALSE(dev.float_status());
  EXPECT_EQ(to_vec(call_op1("Fill", {x}, {{"value", 1e6}}))[0], 65504.0);  // saturated
  EXPECT_TRUE(dev.float_status());
}

TEST_F(ScalarOpsTest, InPlaceMatchesOutOfPlace) {
  const Tensor x = Tensor::randn({5, 7}, DType::kF32, DeviceRef::cpu(), 1);
  const Tensor y = Tensor::randn({5, 7}, DType::kF32, DeviceRef::cpu(), 2);
  const Tensor z = Tensor::uniform({5, 7}, DType::kF32, DeviceRef::cpu(), 3, 0.5f, 2.0f);
  const Tensor mask = Tensor::from_ints(I64s(35, 1), {5, 7}, DType::kBool);
  struct Case {
    const char* op;
    std::vector<Tensor> in;
    Attrs attrs;
  };
  const std::vector<Case> cases{
      {"Adds", {x}, {{"value", 0.5}}},
      {"Muls", {x}, {{"value", 3.0}}},
      {"Axpy", {x, y}, {{"alpha", -0.1}}},
      {"Addcmul", {x, y, z}, {{"value", 0.5}}},
      {"Addcdiv", {x, y, z}, {{"value", 0.5}}},
      {"Lerp", {x, y}, {{"weight", 0.7}}},
      {"MaskedFill", {x, mask}, {{"value", 2.0}}},
      {"Fill", {x}, {{"value", 0.0}}},
      {"Rsqrt", {z}, {}},
      {"Sqrt", {z}, {}},
      {"Reciprocal", {z}, {}},
  };
  for (const Case& c : cases) {
    const Doubles want = to_vec(call_op1(c.op, c.in, c.attrs));
    EXPECT_EQ(to_vec(run_in_place(c.op, c.in, c.attrs, Backend::kCpu)), want) << c.op;
    const Doubles npu = to_vec(call_op1(c.op, on_npu(c.in), c.attrs).cpu());
    EXPECT_EQ(to_vec(run_in_place(c.op, c.in, c.attrs, Backend::kNpu)), npu) << c.op;
  }
  // Axpy into its second input (x.add_(y) written to y's memory: a torch out= of the same shape).
  EXPECT_EQ(to_vec(run_in_place("Axpy", {x, y}, {{"alpha", 2.0}}, Backend::kCpu, 1)),
            to_vec(call_op1("Axpy", {x, y}, {{"alpha", 2.0}})));
}

TEST_F(ScalarOpsTest, BadInputsNameTheOp) {
  const Tensor x = floats({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_TRUE(mentions(error_of([&] { call_op1("Axpy", {x, floats({1, 2}, {2})}); }), {"Axpy", "[2, 3]", "[2]"}));
  EXPECT_TRUE(mentions(error_of([&] { call_op1("MaskedFill", {x, ints({1, 0, 1}, {3})}); }), {"MaskedFill", "bool"}));
  EXPECT_TRUE(
      mentions(error_of([&] {
                 call_op1("MaskedFill", {floats({1, 2, 3}, {3}), ints({1, 0, 1, 0, 1, 0}, {2, 3}, DType::kBool)});
               }),
               {"MaskedFill", "does not broadcast"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("Addcdiv", {ints({1}, {1}), ints({1}, {1}), ints({1}, {1})});
                       }),
                       {"Addcdiv", "floating"}));
  EXPECT_TRUE(mentions(error_of([&] { call_op1("Adds", {x}, {{"value", std::string("one")}}); }), {"value"}));
}

// Note [Direct f32 maps]: the one-pass f32 path applies the overflow mode as store<float> does.
TEST_F(ScalarOpsTest, OverflowModesOnTheF32Path) {
  const float kMax = std::numeric_limits<float>::max();
  const std::vector<float> big{1e10f, 1.0f, NAN};
  Runtime::configure(RuntimeOptions{.overflow_mode = OverflowMode::kSaturation});
  Device& dev = Runtime::get().device();
  const Doubles sat = to_vec(call_op1("Muls", {floats(big, {3}).to(DeviceRef::npu())}, {{"value", 1e30}}).cpu());
  EXPECT_EQ(sat, (Doubles{kMax, 1e30f, 0}));
  EXPECT_TRUE(dev.float_status());
  dev.clear_float_status();
  EXPECT_EQ(to_vec(call_op1("Adds", {floats({1, 2, 3}, {3}).to(DeviceRef::npu())}, {{"value", 1.0}}).cpu()),
            (Doubles{2, 3, 4}));
  EXPECT_FALSE(dev.float_status());
  EXPECT_EQ(to_vec(call_op1("Fill", {floats({1, 2}, {2}).to(DeviceRef::npu())}, {{"value", 1e40}}).cpu()),
            (Doubles{kMax, kMax}));
  EXPECT_TRUE(dev.float_status());
  dev.clear_float_status();
  Runtime::configure(RuntimeOptions{.overflow_mode = OverflowMode::kInfNan});
  const Doubles ieee = to_vec(call_op1("Muls", {floats(big, {3}).to(DeviceRef::npu())}, {{"value", 1e30}}).cpu());
  EXPECT_EQ(ieee[0], INFINITY);
  EXPECT_TRUE(std::isnan(ieee[2]));
  EXPECT_FALSE(Runtime::get().device().float_status());
}

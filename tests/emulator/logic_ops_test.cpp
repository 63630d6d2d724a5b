// Equal, Less, Greater, LessOrEqual, GreaterOrEqual, Not, And, Or, Xor: hand-computed truth values
// on both backends, exact bool bytes, broadcasting, NaN, exact integer and f16 comparisons, the
// precision mode's lowering of f32 comparisons on the NPU, and bad inputs.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "emulator/op_test_util.h"
#include "npuscope/emulator/dispatch.h"
#include "npuscope/emulator/errors.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

class LogicOpsTest : public OpTest {};

using Bytes = std::vector<std::uint8_t>;

// The output bytes on the cpu and on the npu (they must agree: comparisons are exact).
Bytes run(const char* op, const std::vector<Tensor>& in) {
  const Tensor cpu = call_op1(op, in), npu = call_op1(op, on_npu(in));
  EXPECT_EQ(cpu.dtype(), DType::kBool) << op;
  EXPECT_EQ(npu.dtype(), DType::kBool) << op;
  const Bytes b = bytes_of(cpu);
  EXPECT_EQ(bytes_of(npu), b) << op;
  return b;
}

const char* const kCompares[] = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"};

}  // namespace

TEST_F(LogicOpsTest, ComparisonsOfFloats) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (DType dt : {DType::kF32, DType::kF16, DType::kBF16}) {
    const std::vector<Tensor> in{floats_1d({1, 2, 3, nan, -inf, -0.0f}, dt), floats_1d({2, 2, 2, nan, -inf, 0}, dt)};
    EXPECT_EQ(run("Equal", in), (Bytes{0, 1, 0, 0, 1, 1})) << dtype_name(dt);
    EXPECT_EQ(run("Less", in), (Bytes{1, 0, 0, 0, 0, 0})) << dtype_name(dt);
    EXPECT_EQ(run("Greater", in), (Bytes{0, 0, 1, 0, 0, 0})) << dtype_name(dt);
    EXPECT_EQ(run("LessOrEqual", in), (Bytes{1, 1, 0, 0, 1, 1})) << dtype_name(dt);
    EXPECT_EQ(run("GreaterOrEqual", in), (Bytes{0, 1, 1, 0, 1, 1})) << dtype_name(dt);
  }
}

TEST_F(LogicOpsTest, ComparisonsBroadcast) {
  const Tensor a = Tensor::from_floats(std::vector<float>{1, 5, 3, 4, 2, 6}, {2, 3}, DType::kF32);
  const Tensor b = floats_1d({2, 5, 4});
  EXPECT_EQ(run("Less", {a, b}), (Bytes{1, 0, 1, 0, 1, 0}));
  EXPECT_EQ(run("GreaterOrEqual", {b, a}), (Bytes{1, 1, 1, 0, 1, 0}));
  const Tensor col = Tensor::from_floats(std::vector<float>{3, 1}, {2, 1}, DType::kF32);
  const Tensor y = call_op1("Greater", on_npu({col, floats_1d({0, 2, 4})}));
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(bytes_of(y), (Bytes{1, 1, 0, 1, 0, 0}));
}

TEST_F(LogicOpsTest, IntegerComparisonsAreExact) {
  constexpr std::int64_t k53 = std::int64_t{1} << 53;  // k53 + 1 rounds to k53 in f64
  const std::vector<Tensor> in{ints_1d({k53 + 1, k53, -k53 - 1, std::numeric_limits<std::int64_t>::min()}, DType::kI64),
                               ints_1d({k53, k53, -k53, std::numeric_limits<std::int64_t>::min()}, DType::kI64)};
  EXPECT_EQ(run("Equal", in), (Bytes{0, 1, 0, 1}));
  EXPECT_EQ(run("Greater", in), (Bytes{1, 0, 0, 0}));
  EXPECT_EQ(run("Less", in), (Bytes{0, 0, 1, 0}));
  // ONNX's test_equal_bcast: int32 with a broadcast row.
  const Tensor m = Tensor::from_ints(std::vector<std::int64_t>{1, 2, 3, 3, 2, 1}, {2, 3}, DType::kI32);
  EXPECT_EQ(run("Equal", {m, ints_1d({1, 2, 1}, DType::kI32)}), (Bytes{1, 1, 0, 0, 1, 1}));
  EXPECT_EQ(run("LessOrEqual", {ints_1d({0, 200, 255}, DType::kU8), ints_1d({1, 200, 254}, DType::kU8)}),
            (Bytes{1, 1, 0}));
  // Equal also takes bool.
  EXPECT_EQ(run("Equal", {ints_1d({1, 1, 0, 0}, DType::kBool), ints_1d({1, 0, 1, 0}, DType::kBool)}),
            (Bytes{1, 0, 0, 1}));
}

TEST_F(LogicOpsTest, F16ValuesCompareExactly) {
  // 1 and the next f16 (1 + 2^-10) differ; so do the two smallest subnormals.
  const std::vector<Tensor> in{floats_1d({1, 5.9604645e-8f}, DType::kF16),
                               floats_1d({1.0009765625f, 1.1920929e-7f}, DType::kF16)};
  EXPECT_EQ(run("Less", in), (Bytes{1, 1}));
  EXPECT_EQ(run("Equal", in), (Bytes{0, 0}));
}

TEST_F(LogicOpsTest, NpuMatchesCpuOnRandomInputs) {
  for (DType dt : {DType::kF32, DType::kF16, DType::kBF16}) {
    // A coarse range so that equal pairs occur too.
    const Tensor a = Tensor::uniform({4, 33}, dt, DeviceRef::cpu(), 1, -2, 2);
    const Tensor b = Tensor::uniform({33}, dt, DeviceRef::cpu(), 2, -2, 2);
    for (const char* op : kCompares) run(op, {a, b});
    run("Equal", {a, a});
  }
}

TEST_F(LogicOpsTest, ForceFp16DoesNotLowerAComparison) {
  // 1.0001 rounds to 1 in f16: a lowered comparison would call them equal. Comparisons follow their
  // input dtype, as CANN's do.
  Runtime::configure({.precision_mode = PrecisionMode::kForceFp16});
  const std::vector<Tensor> in{floats_1d({1, 1}), floats_1d({1.0001f, 2})};
  EXPECT_EQ(bytes_of(call_op1("Equal", in)), (Bytes{0, 0}));
  EXPECT_EQ(bytes_of(call_op1("Equal", on_npu(in))), (Bytes{0, 0}));
}

TEST_F(LogicOpsTest, LogicTruthTables) {
  const Tensor a = Tensor::from_ints(std::vector<std::int64_t>{0, 0, 1, 1}, {2, 2}, DType::kBool);
  const Tensor b = ints_1d({0, 1}, DType::kBool);
  EXPECT_EQ(run("And", {a, b}), (Bytes{0, 0, 0, 1}));
  EXPECT_EQ(run("Or", {a, b}), (Bytes{0, 1, 1, 1}));
  EXPECT_EQ(run("Xor", {a, b}), (Bytes{0, 1, 1, 0}));
  EXPECT_EQ(run("Not", {a}), (Bytes{1, 1, 0, 0}));
  const Tensor wide = call_op1("Or", on_npu({Tensor::zeros({3, 1, 2}, DType::kBool), b}));
  EXPECT_EQ(wide.shape(), (Shape{3, 1, 2}));
  EXPECT_EQ(bytes_of(wide), (Bytes{0, 1, 0, 1, 0, 1}));
}

TEST_F(LogicOpsTest, CategoriesAndCosts) {
  const OpRegistry& r = OpRegistry::instance();
  const std::vector<TensorMeta> in{{{16}, DType::kF16}, {{16}, DType::kF16}}, out{{{16}, DType::kBool}};
  for (const char* op : kCompares) {
    EXPECT_EQ(r.schema(op).category, OpCategory::kDataMovement) << op;
    const KernelCost c = r.schema(op).cost(in, out, {});
    EXPECT_EQ(c.unit, ComputeUnit::kVector) << op;
    EXPECT_DOUBLE_EQ(c.flops, 16) << op;
    EXPECT_DOUBLE_EQ(c.bytes, 2 * 16 * 2 + 16) << op;
  }
  for (const char* op : {"Not", "And", "Or", "Xor"}) EXPECT_EQ(r.schema(op).category, OpCategory::kDataMovement) << op;
}

TEST_F(LogicOpsTest, BadInputsAreRejected) {
  const Tensor f = floats_1d({1, 2}), flags = ints_1d({1, 0}, DType::kBool);
  for (const char* op : kCompares) {
    EXPECT_THROW(call_op1(op, {f, floats_1d({1, 2}, DType::kF16)}), InvalidArgument) << op;
    EXPECT_THROW(call_op1(op, {f, floats_1d({1, 2, 3})}), InvalidArgument) << op;
    EXPECT_THROW(call_op1(op, {f}), InvalidArgument) << op;
  }
  for (const char* op : {"Less", "Greater", "LessOrEqual", "GreaterOrEqual"}) {
    EXPECT_THROW(call_op1(op, {flags, flags}), InvalidArgument) << op;
  }
  for (const char* op : {"And", "Or", "Xor"}) {
    EXPECT_THROW(call_op1(op, {f, f}), InvalidArgument) << op;
    EXPECT_THROW(call_op1(op, {flags, ints_1d({1, 0}, DType::kU8)}), InvalidArgument) << op;
    EXPECT_THROW(call_op1(op, {flags, ints_1d({1, 0, 1}, DType::kBool)}), InvalidArgument) << op;
  }
  EXPECT_THROW(call_op1("Not", {ints_1d({1, 0}, DType::kI32)}), InvalidArgument);
  EXPECT_THROW(call_op1("Not", {flags, flags}), InvalidArgument);
}

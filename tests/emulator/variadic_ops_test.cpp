// Min, Max, Sum, Mean (variadic, multidirectional broadcasting) and Clip: CPU golden vs
// hand-computed values, NPU vs CPU in f32, f16 and bf16, NaN propagation, exact integer paths with
// wrap-around, Clip's defaults and bounds, the ONNX Clip adapter (attributes before opset 11,
// optional inputs from 11), and bad inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "emulator/op_test_util.h"
#include "npuscope/emulator/dispatch.h"
#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/onnx_model.h"
#include "onnx_test_util.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

class VariadicOpsTest : public OpTest {};

// Both backends' results, cpu first.
std::vector<std::vector<double>> both(const char* op, const std::vector<Tensor>& in, const Attrs& attrs = {}) {
  return {op_values(op, in, attrs), op_values(op, on_npu(in), attrs)};
}

// Runs a one-node Clip model (opset `opset`) on the cpu and the npu; returns both outputs.
std::vector<Tensor> run_clip_model(npuscope::testing::ModelBuilder& b, const std::string& name,
                                   const std::map<std::string, Tensor>& inputs) {
  const auto model = OnnxModel::load(b.save(npuscope::testing::temp_dir(name) / "clip.onnx"));
  return {model.run(inputs)[0], model.run(inputs, {.device = DeviceRef::npu()})[0]};
}

constexpr std::int64_t kI64Min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kI64Max = std::numeric_limits<std::int64_t>::max();

}  // namespace

TEST_F(VariadicOpsTest, OnnxExamples) {
  const std::vector<Tensor> in{floats_1d({3, 2, 1}), floats_1d({1, 4, 4}), floats_1d({2, 5, 0})};
  for (const auto& r : both("Max", in)) EXPECT_EQ(r, (std::vector<double>{3, 5, 4}));
  for (const auto& r : both("Min", in)) EXPECT_EQ(r, (std::vector<double>{1, 2, 0}));
  for (const auto& r : both("Sum", in)) EXPECT_EQ(r, (std::vector<double>{6, 11, 5}));
  for (const auto& r : both("Mean", in)) EXPECT_TRUE(all_close(r, {2, 11.0 / 3, 5.0 / 3}, 1e-7, 0));
  // One input: a copy.
  for (const char* op : {"Max", "Min", "Sum", "Mean"}) {
    for (const auto& r : both(op, {in[0]})) EXPECT_EQ(r, (std::vector<double>{3, 2, 1})) << op;
  }
}

TEST_F(VariadicOpsTest, AllInputsBroadcastTogether) {
  const Tensor a = Tensor::from_floats(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}, DType::kF32);
  const std::vector<Tensor> in{a, floats_1d({0, 10, -1}), floats_1d({2.5f})};
  for (const auto& r : both("Max", in)) EXPECT_EQ(r, (std::vector<double>{2.5, 10, 3, 4, 10, 6}));
  for (const auto& r : both("Min", in)) EXPECT_EQ(r, (std::vector<double>{0, 2, -1, 0, 2.5, -1}));
  for (const auto& r : both("Sum", in)) EXPECT_EQ(r, (std::vector<double>{3.5, 14.5, 4.5, 6.5, 17.5, 7.5}));
  for (const auto& r : both("Mean", in)) {
    EXPECT_TRUE(all_close(r, {3.5 / 3, 14.5 / 3, 1.5, 6.5 / 3, 17.5 / 3, 2.5}, 1e-7, 0));
  }
  // The small inputs may come first: the output takes the broadcast shape of all of them.
  const Tensor y = call_op1("Sum", on_npu({floats_1d({1}), Tensor::zeros({4, 1}, DType::kF32), floats_1d({1, 2, 3})}));
  EXPECT_EQ(y.shape(), (Shape{4, 3}));
  EXPECT_EQ(to_vec(y), (std::vector<double>{2, 3, 4, 2, 3, 4, 2, 3, 4, 2, 3, 4}));
}

TEST_F(VariadicOpsTest, NpuMatchesCpuInEveryFloatDtype) {
  for (DType dt : {DType::kF32, DType::kF16, DType::kBF16}) {
    const auto tol = default_tolerance(dt);
    const std::vector<Tensor> in{Tensor::uniform({4, 1, 5}, dt, DeviceRef::cpu(), 1, -3, 3),
                                 Tensor::uniform({3, 1}, dt, DeviceRef::cpu(), 2, -3, 3),
                                 Tensor::uniform({5}, dt, DeviceRef::cpu(), 3, -3, 3)};
    for (const char* op : {"Max", "Min", "Sum", "Mean"}) {
      const auto r = both(op, in);
      EXPECT_EQ(r[0].size(), 60u);
      EXPECT_TRUE(all_close(r[1], r[0], tol.rtol, tol.atol)) << op << " " << dtype_name(dt);
    }
    const Attrs bounds{{"min", -1.0}, {"max", 0.5}};
    const auto c = both("Clip", {in[0]}, bounds);
    EXPECT_TRUE(all_close(c[1], c[0], tol.rtol, tol.atol)) << dtype_name(dt);
  }
}

TEST_F(VariadicOpsTest, MinAndMaxPropagateNaNAsNumpyDoes) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const float fnan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<Tensor> in{floats_1d({1, fnan, 3, 4}), floats_1d({fnan, 2, 1, 5})};
  for (const auto& r : both("Max", in)) EXPECT_TRUE(all_close(r, {nan, nan, 3, 5}, 0, 0));
  for (const auto& r : both("Min", in)) EXPECT_TRUE(all_close(r, {nan, nan, 1, 4}, 0, 0));
  for (const auto& r : both("Sum", in)) EXPECT_TRUE(all_close(r, {nan, nan, 4, 9}, 0, 0));
}

TEST_F(VariadicOpsTest, IntegersAreExactAndSumWraps) {
  constexpr std::int64_t kBig = (std::int64_t{1} << 60) + 1;  // not representable in f64
  constexpr std::int64_t kI32Max = std::numeric_limits<std::int32_t>::max();
  for (bool npu : {false, true}) {
    const auto put = [&](std::vector<Tensor> in) { return npu ? on_npu(in) : in; };
    const auto in64 = put({ints_1d({kBig, -kBig, 5}, DType::kI64), ints_1d({kBig - 1, -kBig + 1, 5}, DType::kI64)});
    EXPECT_EQ(call_op1("Max", in64).to_ints(), (std::vector<std::int64_t>{kBig, -kBig + 1, 5}));
    EXPECT_EQ(call_op1("Min", in64).to_ints(), (std::vector<std::int64_t>{kBig - 1, -kBig, 5}));
    EXPECT_EQ(call_op1("Sum", in64).to_ints(), (std::vector<std::int64_t>{2 * kBig - 1, -2 * kBig + 1, 10}));
    EXPECT_EQ(call_op1("Sum", put({ints_1d({kI64Max}, DType::kI64), ints_1d({1}, DType::kI64)})).to_ints(),
              (std::vector<std::int64_t>{kI64Min}));
    const Tensor s32 = call_op1("Sum", put({ints_1d({kI32Max, 7}, DType::kI32), ints_1d({1, -9}, DType::kI32)}));
    EXPECT_EQ(s32.dtype(), DType::kI32);
    EXPECT_EQ(s32.to_ints(), (std::vector<std::int64_t>{std::numeric_limits<std::int32_t>::min(), -2}));
    EXPECT_EQ(call_op1("Sum", put({ints_1d({200, 3}, DType::kU8), ints_1d({100, 4}, DType::kU8)})).to_ints(),
              (std::vector<std::int64_t>{44, 7}));
    EXPECT_EQ(call_op1("Max", put({ints_1d({-128, 5}, DType::kI8), ints_1d({3, -7}, DType::kI8)})).to_ints(),
              (std::vector<std::int64_t>{3, 5}));
  }
}

TEST_F(VariadicOpsTest, ClipBoundsAndDefaults) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor x = floats_1d({-3, -1, 0, 1, 3, std::numeric_limits<float>::quiet_NaN()});
  for (const auto& r : both("Clip", {x}, {{"min", -1.5}, {"max", 2.0}})) {
    EXPECT_TRUE(all_close(r, {-1.5, -1, 0, 1, 2, nan}, 0, 0));
  }
  for (const auto& r : both("Clip", {x}, {{"min", -1.5}})) EXPECT_TRUE(all_close(r, {-1.5, -1, 0, 1, 3, nan}, 0, 0));
  for (const auto& r : both("Clip", {x}, {{"max", 0.5}})) EXPECT_TRUE(all_close(r, {-3, -1, 0, 0.5, 0.5, nan}, 0, 0));
  for (const auto& r : both("Clip", {x})) EXPECT_TRUE(all_close(r, {-3, -1, 0, 1, 3, nan}, 0, 0));
  // min > max: every value becomes max (ONNX: min(max(x, min), max)).
  for (const auto& r : both("Clip", {x}, {{"min", 2.0}, {"max", 1.0}})) {
    EXPECT_TRUE(all_close(r, {1, 1, 1, 1, 1, nan}, 0, 0));
  }
  // f16 data keeps its dtype; the bound is rounded with the result.
  const Tensor h = call_op1("Clip", on_npu({floats_1d({-3, 0.3f, 3}, DType::kF16)}), {{"min", -0.1}, {"max", 1.0}});
  EXPECT_EQ(h.dtype(), DType::kF16);
  EXPECT_EQ(to_vec(h), (std::vector<double>{-0.0999755859375, 0.300048828125, 1}));
}

TEST_F(VariadicOpsTest, ClipOnIntegersIsExact) {
  constexpr std::int64_t kBig = (std::int64_t{1} << 60) + 1;
  const Tensor i8 = ints_1d({-128, -5, 0, 5, 127}, DType::kI8);
  const Tensor i64 = ints_1d({kI64Min, -kBig - 1, 0, kBig + 1, kI64Max}, DType::kI64);
  for (bool npu : {false, true}) {
    const Tensor a = npu ? on_npu({i8})[0] : i8;
    const Tensor b = npu ? on_npu({i64})[0] : i64;
    EXPECT_EQ(call_op1("Clip", {a}, {{"min", std::int64_t{-4}}, {"max", std::int64_t{4}}}).to_ints(),
              (std::vector<std::int64_t>{-4, -4, 0, 4, 4}));
    // Float bounds on integers round inwards: x >= -4.5 is x >= -4.
    EXPECT_EQ(call_op1("Clip", {a}, {{"min", -4.5}, {"max", 4.5}}).to_ints(),
              (std::vector<std::int64_t>{-4, -4, 0, 4, 4}));
    EXPECT_EQ(call_op1("Clip", {a}).to_ints(), (std::vector<std::int64_t>{-128, -5, 0, 5, 127}));
    EXPECT_EQ(call_op1("Clip", {b}, {{"min", -kBig}, {"max", kBig}}).to_ints(),
              (std::vector<std::int64_t>{-kBig, -kBig, 0, kBig, kBig}));
    EXPECT_EQ(call_op1("Clip", {b}, {{"max", -1e30}}).to_ints(), (std::vector<std::int64_t>(5, kI64Min)));
  }
}

TEST_F(VariadicOpsTest, CategoriesAndCosts) {
  const OpRegistry& r = OpRegistry::instance();
  const std::vector<TensorMeta> three{{{8}, DType::kF32}, {{8}, DType::kF32}, {{8}, DType::kF32}};
  const std::vector<TensorMeta> out{{{8}, DType::kF32}};
  for (const char* op : {"Min", "Max", "Sum", "Mean", "Clip"}) {
    EXPECT_EQ(r.schema(op).category, OpCategory::kVector) << op;
    EXPECT_EQ(r.schema(op).cost(three, out, {}).unit, ComputeUnit::kVector) << op;
  }
  EXPECT_EQ(r.schema("Sum").max_inputs, -1);
  EXPECT_DOUBLE_EQ(r.schema("Sum").cost(three, out, {}).flops, 16);  // two adds per element
  EXPECT_DOUBLE_EQ(r.schema("Mean").cost(three, out, {}).flops, 24);
  EXPECT_DOUBLE_EQ(r.schema("Max").cost(three, out, {}).bytes, 4 * 8 * 4);
}

TEST_F(VariadicOpsTest, BadInputsAreRejected) {
  const Tensor f = floats_1d({1, 2}), i = ints_1d({1, 2}, DType::kI32), flags = ints_1d({1, 0}, DType::kBool);
  for (const char* op : {"Min", "Max", "Sum", "Mean"}) {
    EXPECT_THROW(call_op1(op, {}), InvalidArgument) << op;
    EXPECT_THROW(call_op1(op, {f, floats_1d({1, 2, 3})}), InvalidArgument) << op;  // [2] vs [3]
    EXPECT_THROW(call_op1(op, {f, floats_1d({1, 2}, DType::kF16)}), InvalidArgument) << op;
    EXPECT_THROW(call_op1(op, {flags, flags}), InvalidArgument) << op;
  }
  EXPECT_THROW(call_op1("Mean", {i, i}), InvalidArgument);  // ONNX Mean is floating only
  EXPECT_THROW(call_op1("Clip", {flags}), InvalidArgument);
  EXPECT_THROW(call_op1("Clip", {f, f}), InvalidArgument);  // bounds are attributes here
  EXPECT_THROW(call_op1("Clip", {f}, {{"min", std::nan("")}}), InvalidArgument);
}

TEST_F(VariadicOpsTest, OnnxClipBeforeOpset11TakesAttributes) {
  using onnx::TensorProto;
  npuscope::testing::ModelBuilder b(6);
  b.input("x", TensorProto::FLOAT, {4}).output("y", TensorProto::FLOAT, {4});
  auto* max = b.node("Clip", {"x"}, {"y"}).add_attribute();
  max->set_name("max");
  max->set_type(onnx::AttributeProto::FLOAT);
  max->set_f(2);
  const float inf = std::numeric_limits<float>::infinity();
  // No min: Clip-6's default is the lowest float, so -inf becomes -FLT_MAX.
  const double lowest = std::numeric_limits<float>::lowest();
  for (const Tensor& y : run_clip_model(b, "clip6", {{"x", floats_1d({-inf, -1, 3, inf})}})) {
    EXPECT_EQ(to_vec(y), (std::vector<double>{lowest, -1, 2, 2}));
  }
}

TEST_F(VariadicOpsTest, OnnxClipFromOpset11TakesOptionalInputs) {
  using onnx::TensorProto;
  npuscope::testing::ModelBuilder b(13);
  b.input("x", TensorProto::FLOAT, {4}).input("hi", TensorProto::FLOAT, {}).output("y", TensorProto::FLOAT, {4});
  b.node("Clip", {"x", "", "hi"}, {"y"});  // min left out
  for (const Tensor& y :
       run_clip_model(b, "clip13", {{"x", floats_1d({-5, -1, 3, 7})}, {"hi", floats_1d({2.5f}).view({})}})) {
    EXPECT_EQ(to_vec(y), (std::vector<double>{-5, -1, 2.5, 2.5}));
  }
  // int64 bounds reach the kernel exactly.
  constexpr std::int64_t kBig = (std::int64_t{1} << 60) + 1;
  npuscope::testing::ModelBuilder c(13);
  c.input("x", TensorProto::INT64, {3}).input("lo", TensorProto::INT64, {}).input("hi", TensorProto::INT64, {});
  c.output("y", TensorProto::INT64, {3});
  c.node("Clip", {"x", "lo", "hi"}, {"y"});
  const std::map<std::string, Tensor> in{{"x", ints_1d({-kBig - 1, 0, kBig + 1}, DType::kI64)},
                                         {"lo", ints_1d({-kBig}, DType::kI64).view({})},
                                         {"hi", ints_1d({kBig}, DType::kI64).view({})}};
  for (const Tensor& y : run_clip_model(c, "clip13i", in)) {
    EXPECT_EQ(y.to_ints(), (std::vector<std::int64_t>{-kBig, 0, kBig}));
  }
  // A bound must be one value.
  npuscope::testing::ModelBuilder d(13);
  d.input("x", TensorProto::FLOAT, {2}).input("lo", TensorProto::FLOAT, {2}).output("y", TensorProto::FLOAT, {2});
  d.node("Clip", {"x", "lo"}, {"y"});
  EXPECT_THROW(run_clip_model(d, "clip13bad", {{"x", floats_1d({1, 2})}, {"lo", floats_1d({0, 0})}}), ModelError);
}

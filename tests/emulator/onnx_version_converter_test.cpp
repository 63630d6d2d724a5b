// Models of opset < 7 brought forward to opset 7 (Note [Bringing old opsets forward]): each rule on a
// hand-built old model, run on cpu and npu:0 against the old semantics; the forms that cannot be
// brought forward fail with a ModelError naming the node and the opset.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "emulator/op_test_util.h"
#include "npuscope/emulator/onnx_model.h"
#include "onnx_test_util.h"

using namespace npuscope::emulator;
using npuscope::testing::ModelBuilder;
using npuscope::testing::temp_dir;
using onnx::AttributeProto;
using onnx::TensorProto;

namespace {

class OnnxVersionConverterTest : public npuscope::emulator::testing::OpTest {};

void attr(onnx::NodeProto& n, const std::string& name, std::int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(AttributeProto::INT);
  a->set_i(v);
}
void attr(onnx::NodeProto& n, const std::string& name, float v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(AttributeProto::FLOAT);
  a->set_f(v);
}
void attr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(AttributeProto::STRING);
  a->set_s(v);
}
void attr(onnx::NodeProto& n, const std::string& name, const std::vector<std::int64_t>& v) {
  npuscope::testing::ints_attribute(n, name, v);
}

void int64_initializer(ModelBuilder& b, const std::string& name, Shape dims, const std::vector<std::int64_t>& values) {
  auto* t = b.proto().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(TensorProto::INT64);
  for (auto d : dims) t->add_dims(d);
  for (auto v : values) t->add_int64_data(v);
}

Tensor floats(std::vector<float> v, Shape shape) { return Tensor::from_floats(v, shape, DType::kF32); }
Tensor iota(Shape shape) {
  std::vector<float> v(static_cast<std::size_t>(shape_numel(shape)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  return floats(v, shape);
}

OnnxModel load(ModelBuilder& b, const std::string& name) {
  return OnnxModel::load(b.save(temp_dir("version_converter_" + name) / "m.onnx"));
}

// Output 0 on cpu, after checking that npu:0 gives the same.
std::vector<double> run(const OnnxModel& m, const std::map<std::string, Tensor>& feeds) {
  const auto cpu = m.run(feeds)[0].cpu().to_doubles();
  EXPECT_EQ(m.run(feeds, {.device = DeviceRef::npu()})[0].cpu().to_doubles(), cpu);
  return cpu;
}

// What loading throws ("" if it loads).
std::string load_error(ModelBuilder& b, const std::string& name) {
  try {
    load(b, name);
  } catch (const ModelError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

// Add-6 with broadcast = 1, axis = 1: B [3] lines up with A's dim 1, not its last dim.
TEST_F(OnnxVersionConverterTest, AxisBroadcastBecomesAnUnsqueeze) {
  ModelBuilder b(6);
  b.input("a", TensorProto::FLOAT, {2, 3, 2}).input("b", TensorProto::FLOAT, {3}).output("y", TensorProto::FLOAT);
  b.node("Relu", {"a"}, {"r"});  // A's rank comes from shape inference through the Relu
  auto& add = b.node("Add", {"r", "b"}, {"y"}, "add");
  attr(add, "broadcast", std::int64_t{1});
  attr(add, "axis", std::int64_t{1});
  const auto m = load(b, "axis");
  EXPECT_EQ(m.opset(), 7);
  EXPECT_EQ(m.declared_opset(), 6);
  EXPECT_EQ(m.node_count(), 3u);  // the Unsqueeze of B
  const auto y = run(m, {{"a", iota({2, 3, 2})}, {"b", floats({100, 200, 300}, {3})}});
  EXPECT_EQ(y, (std::vector<double>{100, 101, 202, 203, 304, 305, 106, 107, 208, 209, 310, 311}));
}

// A trailing broadcast (axis = rank(A) - rank(B), or no axis) is numpy's already: nothing is inserted.
TEST_F(OnnxVersionConverterTest, TrailingBroadcastStaysAsItIs) {
  ModelBuilder b(6);
  b.input("a", TensorProto::FLOAT, {2, 3}).input("b", TensorProto::FLOAT, {3}).output("y", TensorProto::FLOAT);
  auto& mul = b.node("Mul", {"a", "b"}, {"y"});
  attr(mul, "broadcast", std::int64_t{1});
  const auto m = load(b, "trailing");
  EXPECT_EQ(m.node_count(), 1u);
  EXPECT_EQ(run(m, {{"a", iota({2, 3})}, {"b", floats({1, 10, 100}, {3})}}),
            (std::vector<double>{0, 10, 200, 3, 40, 500}));
}

// The comparison and logic ops had the same broadcast: Greater-1 with axis 0.
TEST_F(OnnxVersionConverterTest, ComparisonsBroadcastAlongTheAxisToo) {
  ModelBuilder b(6);
  b.input("a", TensorProto::FLOAT, {2, 3}).input("b", TensorProto::FLOAT, {2}).output("y", TensorProto::BOOL);
  auto& gt = b.node("Greater", {"a", "b"}, {"y"});
  attr(gt, "broadcast", std::int64_t{1});
  attr(gt, "axis", std::int64_t{0});
  EXPECT_EQ(run(load(b, "greater"), {{"a", iota({2, 3})}, {"b", floats({1, 4}, {2})}}),
            (std::vector<double>{0, 0, 1, 0, 0, 1}));
}

// PRelu-6's slope [C] is per channel (dim 1) of an NCHW input.
TEST_F(OnnxVersionConverterTest, PReluSlopeIsPerChannel) {
  ModelBuilder b(6);
  b.input("x", TensorProto::FLOAT, {1, 2, 1, 3}).output("y", TensorProto::FLOAT);
  b.initializer("slope", {2}, {0.5f, 2.0f});
  b.node("PRelu", {"x", "slope"}, {"y"});
  const auto x = floats({-2, -4, 6, -2, 8, -6}, {1, 2, 1, 3});
  EXPECT_EQ(run(load(b, "prelu"), {{"x", x}}), (std::vector<double>{-1, -2, 6, -4, 8, -12}));
}

// Reshape-1: the shape attribute becomes an input (4 -> 5); consumed_inputs goes (5 -> 6).
TEST_F(OnnxVersionConverterTest, ReshapeShapeAttributeBecomesAnInput) {
  ModelBuilder b(1);
  b.input("x", TensorProto::FLOAT, {2, 3}).output("y", TensorProto::FLOAT);
  auto& r = b.node("Reshape", {"x"}, {"y"});
  attr(r, "shape", std::vector<std::int64_t>{3, -1});
  attr(r, "consumed_inputs", std::vector<std::int64_t>{0});
  const auto m = load(b, "reshape");
  EXPECT_EQ(m.run({{"x", iota({2, 3})}})[0].shape(), (Shape{3, 2}));
}

// Concat-1 without an axis concatenates along dim 1 (3 -> 4).
TEST_F(OnnxVersionConverterTest, ConcatWithoutAxisUsesDimOne) {
  ModelBuilder b(3);
  b.input("a", TensorProto::FLOAT, {2, 1}).input("b", TensorProto::FLOAT, {2, 2}).output("y", TensorProto::FLOAT);
  b.node("Concat", {"a", "b"}, {"y"});
  EXPECT_EQ(run(load(b, "concat"), {{"a", floats({1, 2}, {2, 1})}, {"b", floats({3, 4, 5, 6}, {2, 2})}}),
            (std::vector<double>{1, 3, 4, 2, 5, 6}));
}

// Pad-1's `paddings` is Pad-2's `pads` (1 -> 2).
TEST_F(OnnxVersionConverterTest, PadPaddingsBecomePads) {
  ModelBuilder b(1);
  b.input("x", TensorProto::FLOAT, {1, 2}).output("y", TensorProto::FLOAT);
  auto& p = b.node("Pad", {"x"}, {"y"});
  attr(p, "paddings", std::vector<std::int64_t>{0, 1, 0, 2});
  attr(p, "value", 9.0f);
  EXPECT_EQ(run(load(b, "pad"), {{"x", floats({1, 2}, {1, 2})}}), (std::vector<double>{9, 1, 2, 9, 9}));
}

// Split-1's sizes as a constant input become the attribute (1 -> 2).
TEST_F(OnnxVersionConverterTest, SplitSizesInputBecomesTheAttribute) {
  ModelBuilder b(1);
  b.input("x", TensorProto::FLOAT, {5}).output("y0", TensorProto::FLOAT).output("y1", TensorProto::FLOAT);
  int64_initializer(b, "sizes", {2}, {2, 3});
  auto& s = b.node("Split", {"x", "sizes"}, {"y0", "y1"});
  attr(s, "axis", std::int64_t{0});
  const auto out = load(b, "split").run({{"x", iota({5})}});
  EXPECT_EQ(out[0].shape(), (Shape{2}));
  EXPECT_EQ(out[1].to_doubles(), (std::vector<double>{2, 3, 4}));
}

// Cast-1's `to` is a type name (5 -> 6).
TEST_F(OnnxVersionConverterTest, CastTypeNameBecomesTheTypeNumber) {
  ModelBuilder b(5);
  b.input("x", TensorProto::FLOAT, {2}).output("y", TensorProto::INT32);
  attr(b.node("Cast", {"x"}, {"y"}), "to", std::string("INT32"));
  const auto y = load(b, "cast").run({{"x", floats({1.5f, -2.5f}, {2})}})[0];
  EXPECT_EQ(y.dtype(), DType::kI32);
  EXPECT_EQ(y.to_doubles(), (std::vector<double>{1, -2}));
}

// Tile-1's tiles and axis inputs become Tile-6's repeats (5 -> 6).
TEST_F(OnnxVersionConverterTest, TileCountAndAxisBecomeRepeats) {
  ModelBuilder b(5);
  b.input("x", TensorProto::FLOAT, {2, 1}).output("y", TensorProto::FLOAT);
  int64_initializer(b, "tiles", {}, {3});
  auto& axis = b.node("Constant", {}, {"axis"});  // a constant operand may come from a Constant node
  auto* value = axis.add_attribute();
  value->set_name("value");
  value->set_type(AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(TensorProto::INT64);
  value->mutable_t()->add_int64_data(1);
  b.node("Tile", {"x", "tiles", "axis"}, {"y"});
  EXPECT_EQ(run(load(b, "tile"), {{"x", floats({1, 2}, {2, 1})}}), (std::vector<double>{1, 1, 1, 2, 2, 2}));
}

// BatchNormalization-6's is_test = 1 is inference, opset 7's only mode; consumed_inputs goes too.
TEST_F(OnnxVersionConverterTest, BatchNormIsTestIsDropped) {
  ModelBuilder b(5);
  b.input("x", TensorProto::FLOAT, {1, 2, 1, 1}).output("y", TensorProto::FLOAT);
  b.initializer("s", {2}, {1, 2}).initializer("bias", {2}, {0, 1});
  b.initializer("mean", {2}, {0, 0}).initializer("var", {2}, {1, 1});
  auto& bn = b.node("BatchNormalization", {"x", "s", "bias", "mean", "var"}, {"y"});
  attr(bn, "is_test", std::int64_t{1});
  attr(bn, "epsilon", 0.0f);
  attr(bn, "consumed_inputs", std::vector<std::int64_t>{0, 0, 0, 1, 1});
  EXPECT_EQ(run(load(b, "bn"), {{"x", floats({3, 4}, {1, 2, 1, 1})}}), (std::vector<double>{3, 9}));
}

// Gemm-6's broadcast attribute goes: C [3] broadcasts as numpy's from opset 7.
TEST_F(OnnxVersionConverterTest, GemmBroadcastIsDropped) {
  ModelBuilder b(6);
  b.input("a", TensorProto::FLOAT, {1, 2}).output("y", TensorProto::FLOAT);
  b.initializer("w", {2, 3}, {1, 0, 0, 0, 1, 0}).initializer("c", {3}, {10, 20, 30});
  attr(b.node("Gemm", {"a", "w", "c"}, {"y"}), "broadcast", std::int64_t{1});
  EXPECT_EQ(run(load(b, "gemm"), {{"a", floats({1, 2}, {1, 2})}}), (std::vector<double>{11, 22, 30}));
}

// Upsample-1's height_scale and width_scale become scales [1, 1, h, w] (6 -> 7).
TEST_F(OnnxVersionConverterTest, UpsampleScalesBecomeTheList) {
  ModelBuilder b(6);
  b.input("x", TensorProto::FLOAT, {1, 1, 1, 2}).output("y", TensorProto::FLOAT);
  auto& u = b.node("Upsample", {"x"}, {"y"});
  attr(u, "height_scale", 2.0f);
  attr(u, "width_scale", 2.0f);
  attr(u, "mode", std::string("nearest"));
  EXPECT_EQ(run(load(b, "upsample"), {{"x", floats({1, 2}, {1, 1, 1, 2})}}),
            (std::vector<double>{1, 1, 2, 2, 1, 1, 2, 2}));
}

TEST_F(OnnxVersionConverterTest, TrainingModeIsRefusedNamingTheNode) {
  ModelBuilder b(6);
  b.input("x", TensorProto::FLOAT, {2}).output("y", TensorProto::FLOAT);
  attr(b.node("Dropout", {"x"}, {"y"}, "drop"), "is_test", std::int64_t{0});
  const std::string e = load_error(b, "training");
  EXPECT_NE(e.find("node 'drop' (Dropout, opset 6) cannot be brought forward to opset 7"), std::string::npos) << e;
  EXPECT_NE(e.find("is_test = 0"), std::string::npos) << e;
}

// A model older than the step that fails: the message names its opset and the step.
TEST_F(OnnxVersionConverterTest, TheErrorNamesTheModelsOpsetAndTheStep) {
  ModelBuilder b(4);
  b.input("x", TensorProto::FLOAT, {2}).output("y", TensorProto::FLOAT);
  attr(b.node("BatchNormalization", {"x", "x", "x", "x", "x"}, {"y"}, "bn"), "is_test", std::int64_t{0});
  const std::string e = load_error(b, "step");
  EXPECT_NE(e.find("node 'bn' (BatchNormalization, opset 4) cannot be brought forward to opset 7 (at the step 6 -> 7)"),
            std::string::npos)
      << e;
}

TEST_F(OnnxVersionConverterTest, ComputedSplitSizesAreRefusedNamingTheNode) {
  ModelBuilder b(1);
  b.input("x", TensorProto::FLOAT, {4}).input("sizes", TensorProto::INT64, {2});
  b.output("y0", TensorProto::FLOAT).output("y1", TensorProto::FLOAT);
  b.node("Split", {"x", "sizes"}, {"y0", "y1"});  // unnamed: named Split_0 in the error
  const std::string e = load_error(b, "split_input");
  EXPECT_NE(e.find("node 'Split_0' (Split, opset 1)"), std::string::npos) << e;
  EXPECT_NE(e.find("'sizes' must be a constant"), std::string::npos) << e;
}

TEST_F(OnnxVersionConverterTest, UnknownRankIsRefusedNamingTheInput) {
  ModelBuilder b(6);
  b.input("a", TensorProto::FLOAT, {2, 3}).input("b", TensorProto::FLOAT, {3}).output("y", TensorProto::FLOAT);
  b.proto().mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  auto& add = b.node("Add", {"a", "b"}, {"y"}, "add");
  attr(add, "broadcast", std::int64_t{1});
  attr(add, "axis", std::int64_t{0});
  const std::string e = load_error(b, "rank");
  EXPECT_NE(e.find("node 'add' (Add, opset 6)"), std::string::npos) << e;
  EXPECT_NE(e.find("the rank of input 'a' is unknown"), std::string::npos) << e;
}

// Opset 7 and later run as they are.
TEST_F(OnnxVersionConverterTest, NewerModelsAreLeftAlone) {
  ModelBuilder b(7);
  b.input("a", TensorProto::FLOAT, {2, 3}).input("b", TensorProto::FLOAT, {3}).output("y", TensorProto::FLOAT);
  b.node("Add", {"a", "b"}, {"y"});
  const auto m = load(b, "new");
  EXPECT_EQ(m.opset(), 7);
  EXPECT_EQ(m.node_count(), 1u);
}

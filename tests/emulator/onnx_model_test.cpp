// The ONNX importer: loading, input checks, symbolic dims, node naming, errors.
#include "npuscope/emulator/onnx_model.h"

#include <gtest/gtest.h>

#include <set>

#include "emulator/op_test_util.h"
#include "npuscope/emulator/npy.h"
#include "npuscope/runtime_hooks/hook_api.h"
#include "onnx_test_util.h"

using namespace npuscope::emulator;
using npuscope::testing::ModelBuilder;
using npuscope::testing::temp_dir;
using onnx::TensorProto;

namespace {

class OnnxModelTest : public npuscope::emulator::testing::OpTest {};

// y = Relu(x · W + b) with x [N, 2] (N symbolic), W and b initializers; one unnamed node.
std::string small_mlp(const std::filesystem::path& dir) {
  ModelBuilder b;
  b.input("x", TensorProto::FLOAT, {-1, 2}, {"N"}).output("y", TensorProto::FLOAT, {-1, 3});
  b.initializer("W", {2, 3}, {1, 0, -1, 0, 1, 2});
  b.initializer("b", {3}, {0.5f, -10, 0});
  b.node("MatMul", {"x", "W"}, {"xw"}, "fc");
  b.node("Add", {"xw", "b"}, {"z"}, "bias");
  b.node("Relu", {"z"}, {"y"});  // unnamed: becomes Relu_2
  return b.save(dir / "mlp.onnx");
}

std::vector<std::string> captured_names;
void on_task(void*, const npuscope::hooks::TaskRecord& r) {
  if (r.phase == npuscope::hooks::TaskPhase::kEnd) captured_names.emplace_back(r.name);
}

}  // namespace

TEST_F(OnnxModelTest, RunsOnCpuAndNpuWithSymbolicBatch) {
  const auto model = OnnxModel::load(small_mlp(temp_dir("mlp")));
  ASSERT_EQ(model.inputs().size(), 1u);  // initializers are not inputs
  EXPECT_EQ(model.inputs()[0].shape, (Shape{-1, 2}));
  EXPECT_EQ(model.inputs()[0].dim_params[0], "N");
  EXPECT_EQ(model.opset(), 13);
  EXPECT_EQ(model.node_count(), 3u);

  const auto x = Tensor::from_floats(std::vector<float>{1, 2, 3, 4, -1, -1}, {3, 2}, DType::kF32);
  const std::vector<double> want = {1.5, 0, 3, 3.5, 0, 5, 0, 0, 0};  // relu([x0, x1, 2x1 - x0] + b)
  EXPECT_EQ(model.run({{"x", x}})[0].to_doubles(), want);
  EXPECT_EQ(model.run({{"x", x}}, {.device = DeviceRef::npu()})[0].to_doubles(), want);
}

TEST_F(OnnxModelTest, NodeNamesBecomeOpNames) {
  const auto model = OnnxModel::load(small_mlp(temp_dir("names")));
  npuscope::hooks::SubscriberTable table;
  table.on_task = on_task;
  captured_names.clear();
  npuscope::hooks::subscribe(&table);
  model.run({{"x", Tensor::zeros({1, 2}, DType::kF32)}}, {.device = DeviceRef::npu()});
  Runtime::get().synchronize_all();
  npuscope::hooks::subscribe(nullptr);
  EXPECT_EQ(captured_names, (std::vector<std::string>{"fc", "bias", "Relu_2"}));
}

TEST_F(OnnxModelTest, InputErrorsNameTheInput) {
  const auto model = OnnxModel::load(small_mlp(temp_dir("errors")));
  EXPECT_THROW(model.run({}), ModelError);  // missing
  try {
    model.run({{"x", Tensor::zeros({2, 5}, DType::kF32)}});
    FAIL() << "wrong shape accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("input 'x' dim 1 must be 2"), std::string::npos) << e.what();
  }
  try {
    model.run({{"x", Tensor::zeros({2, 2}, DType::kF16)}});
    FAIL() << "wrong dtype accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("must be f32"), std::string::npos) << e.what();
  }
  try {
    model.run({{"x", Tensor::zeros({2, 2}, DType::kF32)}, {"nope", Tensor::zeros({1}, DType::kF32)}});
    FAIL() << "unknown input accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("no input 'nope'"), std::string::npos) << e.what();
  }
}

TEST_F(OnnxModelTest, SymbolicDimsBindConsistently) {
  ModelBuilder b;
  b.input("a", TensorProto::FLOAT, {-1}, {"L"}).input("c", TensorProto::FLOAT, {-1}, {"L"});
  b.output("s", TensorProto::FLOAT, {-1});
  b.node("Add", {"a", "c"}, {"s"}, "add");
  const auto model = OnnxModel::load(b.save(temp_dir("bind") / "bind.onnx"));
  EXPECT_NO_THROW(model.run({{"a", Tensor::zeros({4}, DType::kF32)}, {"c", Tensor::zeros({4}, DType::kF32)}}));
  try {
    model.run({{"a", Tensor::zeros({4}, DType::kF32)}, {"c", Tensor::zeros({3}, DType::kF32)}});
    FAIL() << "inconsistent symbolic dim accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("'L'"), std::string::npos) << e.what();
  }
}

TEST_F(OnnxModelTest, AllUnsupportedOpsListedBeforeRunning) {
  ModelBuilder b;
  b.input("x", TensorProto::FLOAT, {2}).output("y", TensorProto::FLOAT, {2});
  b.node("FrobnicateA", {"x"}, {"t"});
  b.node("Relu", {"t"}, {"u"});
  b.node("FrobnicateB", {"u"}, {"y"});
  try {
    OnnxModel::load(b.save(temp_dir("unsupported") / "m.onnx"));
    FAIL() << "unsupported ops accepted";
  } catch (const ModelError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("FrobnicateA"), std::string::npos) << what;
    EXPECT_NE(what.find("FrobnicateB"), std::string::npos) << what;
  }
}

TEST_F(OnnxModelTest, BadFilesAreClearErrors) {
  const auto dir = temp_dir("badfiles");
  EXPECT_THROW(OnnxModel::load((dir / "missing.onnx").string()), ModelError);
  { std::ofstream((dir / "junk.onnx").string()) << "definitely not protobuf \x01\x02\x03"; }
  EXPECT_THROW(OnnxModel::load((dir / "junk.onnx").string()), ModelError);
  // Truncated: a valid model cut in half.
  const std::string path = small_mlp(dir);
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::ofstream((dir / "cut.onnx").string(), std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  EXPECT_THROW(OnnxModel::load((dir / "cut.onnx").string()), ModelError);

  ModelBuilder future(99);
  future.input("x", TensorProto::FLOAT, {1}).output("x", TensorProto::FLOAT, {1});
  future.node("Identity", {"x"}, {"y"});
  EXPECT_THROW(OnnxModel::load(future.save(dir / "future.onnx")), ModelError);
}

TEST_F(OnnxModelTest, ConstantAndCastAdapters) {
  ModelBuilder b;
  b.input("x", TensorProto::FLOAT, {2}).output("y", TensorProto::INT32, {2});
  auto& c = b.node("Constant", {}, {"k"}, "k");
  auto* attr = c.add_attribute();
  attr->set_name("value_float");
  attr->set_type(onnx::AttributeProto::FLOAT);
  attr->set_f(2.5f);
  b.node("Mul", {"x", "k"}, {"m"}, "mul");
  auto& cast = b.node("Cast", {"m"}, {"y"}, "cast");
  auto* to = cast.add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(TensorProto::INT32);  // ONNX 6, not our DType numbering
  const auto model = OnnxModel::load(b.save(temp_dir("const") / "c.onnx"));
  const auto y = model.run({{"x", Tensor::from_floats(std::vector<float>{1, -3}, {2}, DType::kF32)}})[0];
  EXPECT_EQ(y.dtype(), DType::kI32);
  EXPECT_EQ(y.to_ints(), (std::vector<std::int64_t>{2, -7}));  // 2.5 and -7.5 truncated
}

TEST_F(OnnxModelTest, NpyRoundTrip) {
  const auto dir = temp_dir("npy");
  for (DType t :
       {DType::kF32, DType::kF16, DType::kF64, DType::kI8, DType::kU8, DType::kI32, DType::kI64, DType::kBool}) {
    const auto x = Tensor::from_floats(std::vector<float>{0, 1, 0, 1, 1, 0}, {2, 3}, t);
    save_npy((dir / "x.npy").string(), x);
    const auto y = load_npy((dir / "x.npy").string());
    EXPECT_EQ(y.dtype(), t);
    EXPECT_EQ(y.shape(), x.shape());
    EXPECT_EQ(y.to_doubles(), x.to_doubles());
  }
  save_npy((dir / "s.npy").string(), Tensor::from_floats(std::vector<float>{3}, {}, DType::kF32));
  EXPECT_EQ(load_npy((dir / "s.npy").string()).shape(), Shape{});
  std::ofstream((dir / "bad.npy").string()) << "nope";
  EXPECT_THROW(load_npy((dir / "bad.npy").string()), ModelError);
}

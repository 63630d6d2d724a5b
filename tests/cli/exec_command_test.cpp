// `npuscope exec`, called as a user would.
#include <gtest/gtest.h>

#include <filesystem>

#include "cli_test_util.h"
#include "npuscope/emulator/npy.h"
#include "npuscope/emulator/onnx_model.h"
#include "onnx_test_util.h"

using namespace npuscope::testing;
namespace emu = npuscope::emulator;
namespace fs = std::filesystem;

namespace {

const fs::path kNodeData = "/usr/share/libonnx-testdata/data/node";

std::vector<double> values(const std::string& npy) { return emu::load_npy(npy).to_doubles(); }

}  // namespace

TEST(ExecCommand, RunsAnOnnxTestCaseOnBothBackends) {
  const fs::path c = kNodeData / "test_softmax_axis_1";
  if (!fs::exists(c)) GTEST_SKIP() << "libonnx-testdata not installed";
  const auto expected = emu::load_tensor_proto_file((c / "test_data_set_0/output_0.pb").string()).to_doubles();
  for (const char* device : {"cpu", "npu"}) {
    const auto dir = temp_dir(std::string("exec_") + device);
    const auto r = run_command(npuscope_cmd("exec --model " + (c / "model.onnx").string() +
                                            " --input x=" + (c / "test_data_set_0/input_0.pb").string() + " --device " +
                                            device + " --output-dir " + dir.string()));
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("output_0.npy"), std::string::npos) << r.output;
    const auto got = values((dir / "output_0.npy").string());
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-6);
  }
}

TEST(ExecCommand, NpyInputsGeneratedInputsAndIterations) {
  const auto dir = temp_dir("exec_npy");
  ModelBuilder b;
  b.input("a", onnx::TensorProto::FLOAT, {-1, 3}, {"B"}).input("c", onnx::TensorProto::FLOAT, {-1, 3}, {"B"});
  b.output("s", onnx::TensorProto::FLOAT);
  b.node("Add", {"a", "c"}, {"s"}, "add");
  const std::string model = b.save(dir / "add.onnx");
  emu::save_npy((dir / "a.npy").string(),
                emu::Tensor::from_floats(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}, emu::DType::kF32));
  emu::save_npy((dir / "c.npy").string(),
                emu::Tensor::from_floats(std::vector<float>{1, 1, 1, 1, 1, 1}, {2, 3}, emu::DType::kF32));
  auto r = run_command(npuscope_cmd("exec --model " + model + " --input a=" + (dir / "a.npy").string() +
                                    " --input c=" + (dir / "c.npy").string() + " --iterations 3 --output-dir " +
                                    (dir / "out").string()));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(values((dir / "out/output_0.npy").string()), (std::vector<double>{2, 3, 4, 5, 6, 7}));
  EXPECT_NE(r.output.find("3 iterations"), std::string::npos) << r.output;

  // No inputs given: generated from the declared shapes, the symbolic dim from --dim.
  r = run_command(npuscope_cmd("exec --model " + model + " --dim B=5 --seed 7 --output-dir " + (dir / "gen").string()));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(emu::load_npy((dir / "gen/output_0.npy").string()).shape(), (emu::Shape{5, 3}));
  // Same seed, same outputs.
  r = run_command(
      npuscope_cmd("exec --model " + model + " --dim B=5 --seed 7 --output-dir " + (dir / "gen2").string()));
  EXPECT_EQ(values((dir / "gen/output_0.npy").string()), values((dir / "gen2/output_0.npy").string()));
}

TEST(ExecCommand, ErrorsAreClearAndNonZero) {
  const auto dir = temp_dir("exec_errors");
  auto r = run_command(npuscope_cmd("exec --model " + (dir / "missing.onnx").string()));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("npuscope: error: cannot open ONNX model"), std::string::npos) << r.output;

  r = run_command(npuscope_cmd("exec"));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("--model"), std::string::npos) << r.output;

  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {2}).output("y", onnx::TensorProto::FLOAT, {2});
  b.node("Relu", {"x"}, {"y"}, "relu");
  const std::string model = b.save(dir / "relu.onnx");
  r = run_command(npuscope_cmd("exec --model " + model + " --input nope=" + (dir / "x.npy").string()));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("no input 'nope'"), std::string::npos) << r.output;

  emu::save_npy((dir / "wrong.npy").string(), emu::Tensor::zeros({3}, emu::DType::kF32));
  r = run_command(npuscope_cmd("exec --model " + model + " --input x=" + (dir / "wrong.npy").string()));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("input 'x'"), std::string::npos) << r.output;

  r = run_command(npuscope_cmd("exec --model " + model + " --device gpu"));
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("unknown device 'gpu'"), std::string::npos) << r.output;
}

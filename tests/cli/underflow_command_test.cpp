// A force_fp16 model whose activations underflow, as a user meets it: x * 1e-4 * 1e-4 * 1e4 * 1e4
// is x in the f32 golden run, but on the NPU x * 1e-8 falls below f16's smallest subnormal
// (5.96e-8) and flushes to zero. `npuscope compare` names underflow as the reason and `npuscope
// analyze` names the first underflowing op (Note [Underflow counts] in kernel_util.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "onnx_test_util.h"

using namespace npuscope::testing;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// A float32 .npy of shape [4, 64]: the ramp 0.5 .. 3.2. Times 1e-8 it is below 2.98e-8 (half of
// f16's smallest subnormal: rounds to 0) up to x = 2.98, and rounds to 5.96e-8 above: most of it
// flushes, none of it survives exactly. Times 1e-4 it is in f16's range (partly subnormal).
std::string ramp_input(const fs::path& dir) {
  const std::string path = (dir / "x.npy").string();
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 64), }";
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const auto len = static_cast<std::uint16_t>(header.size());
  out.write(reinterpret_cast<const char*>(&len), 2);
  out << header;
  std::vector<float> data(256);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = 0.5f + 2.7f * static_cast<float>(i) / 255.0f;
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size() * 4));
  return path;
}

std::string scale_model(const fs::path& dir) {
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {4, 64}).output("y", onnx::TensorProto::FLOAT);
  b.initializer("down", {}, {1e-4f}).initializer("up", {}, {1e4f});
  b.node("Mul", {"x", "down"}, {"a"}, "scale_down1");
  b.node("Mul", {"a", "down"}, {"b"}, "scale_down2");
  b.node("Mul", {"b", "up"}, {"c"}, "scale_up1");
  b.node("Mul", {"c", "up"}, {"y"}, "scale_up2");
  return b.save(dir / "scale.onnx");
}

const json* output_row(const json& j, const std::string& op) {
  for (const json& r : j["rows"]) {
    if (r["op_name"] == op && r["tensor"] == "output.0") return &r;
  }
  return nullptr;
}

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

}  // namespace

TEST(UnderflowCommand, CompareAndAnalyzeNameTheUnderflow) {
  const fs::path dir = temp_dir("underflow_command");
  const std::string keep = (dir / "traces").string(), out = (dir / "compare.json").string();
  auto r = run_command(npuscope_cmd("compare --model " + scale_model(dir) + " --input x=" + ramp_input(dir) +
                                    " --precision-mode force_fp16 --keep-traces " + keep + " --format json -o " + out));
  ASSERT_EQ(r.status, 0) << r.output;
  const json j = json::parse(read_file(out));

  // compare: the op that flushed is the first failing one, and the reason says underflow.
  ASSERT_FALSE(j["first_failing_op"].is_null()) << j.dump();
  EXPECT_EQ(j["first_failing_op"]["op_name"], "scale_down2");
  EXPECT_EQ(j["first_introducing_op"]["op_name"], "scale_down2");
  EXPECT_GT(j["first_failing_op"]["npu_underflow"].get<int>(), 200);
  const json* flushed = output_row(j, "scale_down2");
  ASSERT_NE(flushed, nullptr);
  EXPECT_EQ((*flushed)["verdict"], "fail");
  const std::string reason = (*flushed)["reason"];
  EXPECT_TRUE(has(reason, "underflow: ")) << reason;
  EXPECT_TRUE(has(reason, "below f16's smallest normal")) << reason;
  EXPECT_TRUE(has(reason, "; cosine ")) << reason;  // msprobe's reason follows
  // The zeros travel on: the ops after it fail by inheritance, and say where the zeros are from.
  const json* last = output_row(j, "scale_up2");
  ASSERT_NE(last, nullptr);
  EXPECT_EQ((*last)["origin"], "inherited");
  EXPECT_TRUE(has((*last)["reason"], "underflow: ")) << (*last)["reason"];
  EXPECT_TRUE(has((*last)["reason"], "zeros from an earlier op")) << (*last)["reason"];
  // The op before it only lost precision (subnormals): it passes, and no reason mentions it.
  EXPECT_EQ((*output_row(j, "scale_down1"))["verdict"], "pass");

  // The text report of the kept traces says it too.
  r = run_command(npuscope_cmd("compare " + keep + "/npu.db " + keep + "/cpu.db"));
  EXPECT_TRUE(has(r.output, "underflowed on the NPU")) << r.output;
  EXPECT_TRUE(has(r.output, "underflow: ")) << r.output;

  // analyze: the first underflowing op, how much of its output was flushed, how many ops.
  const std::string analysis = (dir / "analyze.json").string();
  r = run_command(npuscope_cmd("analyze " + keep + "/npu.db --format json -o " + analysis));
  ASSERT_EQ(r.status, 0) << r.output;
  const json a = json::parse(read_file(analysis));
  const json& u = a["underflow_summary"];
  EXPECT_EQ(u["first_op_name"], "scale_down2") << u.dump();
  EXPECT_EQ(u["first_op_type"], "Mul");
  EXPECT_EQ(u["first_compute_dtype"], "f16");
  EXPECT_EQ(u["count"], 1) << "only the op that flushed counts: the others read zeros";
  EXPECT_EQ(u["first_flushed"], j["first_failing_op"]["npu_underflow"]);
  const double ratio = u["first_flushed_ratio"];  // the trace has the tensors: the share is known
  EXPECT_GT(ratio, 0.8);
  EXPECT_LT(ratio, 1.0);
  ASSERT_EQ(a["underflows"].size(), 1u);
  EXPECT_EQ(a["underflows"][0]["op_name"], "scale_down2");

  r = run_command(npuscope_cmd("analyze " + keep + "/npu.db"));
  EXPECT_TRUE(has(r.output, "first underflowing op: scale_down2")) << r.output;
  EXPECT_TRUE(has(r.output, "keep the first op in f32")) << r.output;
  if (!HasFailure()) fs::remove_all(dir);
}

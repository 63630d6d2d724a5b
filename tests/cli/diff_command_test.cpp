// `npuscope diff` on pairs of runs whose difference is known (samples/diff_cases.cpp), each profiled
// with `npuscope run` and diffed as a user would, the JSON read back.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_test_util.h"
#include "onnx_test_util.h"

using namespace npuscope::testing;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kCases = std::string(NPUSCOPE_SAMPLES_DIR) + "/diff_cases";

// The test's own directory, made empty on its first use (tests run side by side).
fs::path test_dir() {
  static std::string made_for;
  const std::string name = std::string("diff_") + ::testing::UnitTest::GetInstance()->current_test_info()->name();
  static fs::path dir;
  if (made_for != name) {
    dir = temp_dir(name);
    made_for = name;
  }
  return dir;
}

// Profiles `diff_cases FLAGS` into DIR/NAME.db.
std::string profile(const std::string& name, const std::string& flags) {
  const std::string db = (test_dir() / (name + ".db")).string();
  const auto r = run_command(npuscope_cmd("run --force -o " + db + " -- " + kCases + " " + flags));
  EXPECT_EQ(r.status, 0) << r.output;
  return db;
}

json diff_json(const std::string& base, const std::string& next, const std::string& flags = "") {
  const std::string out = (test_dir() / "diff.json").string();
  const auto r = run_command(npuscope_cmd("diff " + base + " " + next + " --format json -o " + out + " " + flags));
  EXPECT_EQ(r.status, 0) << r.output;
  return json::parse(read_file(out));
}

void write_file(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

const json& row(const json& table, const std::string& column, const std::string& value) {
  for (const json& r : table) {
    if (r[column] == value) return r;
  }
  ADD_FAILURE() << "no row with " << column << " = " << value << " in " << table.dump();
  static const json none = json::object();
  return none;
}

// One MatMul's K made 1030 (not a multiple of 16): that op is the diff's top row, with its shapes.
TEST(DiffCommand, MisalignedMatMulIsTheTopRowWithItsShapeChange) {
  const json d = diff_json(profile("base", "--variant base"), profile("misaligned", "--variant misaligned"));
  const json& top = d["diff_ops"][0];
  EXPECT_EQ(top["op"], "proj/MatMul") << d["diff_ops"].dump(1);
  EXPECT_GT(top["diff_ns"].get<std::int64_t>(), 0);
  EXPECT_EQ(top["match"], "name");
  EXPECT_EQ(top["base_shapes"], "512,1024;1024,256");
  EXPECT_EQ(top["new_shapes"], "512,1030;1030,256");
  EXPECT_EQ(top["change"], "shapes 512,1024;1024,256 -> 512,1030;1030,256");
  // Kernels by shape: the new shape is a row of its own, the old one gone.
  const json& k = row(d["diff_kernels"], "input_shapes", "512,1030;1030,256");
  EXPECT_EQ(k["base_calls"], 0);
  EXPECT_EQ(k["new_calls"], 1);
  EXPECT_EQ(k["ratio"], "inf");
  // Every other op is unchanged.
  for (const json& r : d["diff_ops"]) {
    if (r["op"] != "proj/MatMul") {
      EXPECT_EQ(r["diff_ns"], 0) << r.dump();
    }
  }
}

// f32 cube ops kept in f32 (HF32 on the 910B's cube, a quarter of f16's rate) against force_fp16.
TEST(DiffCommand, ForceFp16CutsCubeTime) {
  const std::string f32 = "--variant base --dtype f32 --precision-mode ";
  const json d = diff_json(profile("keep", f32 + "must_keep_origin_dtype"), profile("fp16", f32 + "force_fp16"));
  const json& cube = row(d["diff_overall"], "metric", "    Matmul (Cube)");
  EXPECT_LT(cube["new_ns"].get<std::int64_t>(), cube["base_ns"].get<std::int64_t>()) << cube.dump();
  EXPECT_LT(cube["ratio"].get<double>(), 1.0);
  // Element-wise vector ops keep f32 in both modes; softmax runs in f16 under force_fp16, and a
  // precision-sensitive op in f16 pays its casts to f32 and back (vector_f16_upcast): no faster.
  for (const json& r : d["diff_ops"]) {
    if (r["op_type"] == "Gelu" || r["op_type"] == "Add") {
      EXPECT_EQ(r["diff_ns"], 0) << r.dump();
    }
    if (r["op_type"] == "Softmax") {
      EXPECT_GE(r["diff_ns"].get<std::int64_t>(), 0) << r.dump();
    }
  }
  const json& mode = row(d["diff_runs"], "setting", "precision mode");
  EXPECT_EQ(mode["base"], "must_keep_origin_dtype");
  EXPECT_EQ(mode["new"], "force_fp16");
  EXPECT_EQ(mode["differs"], true);
  EXPECT_EQ(d["notes"][0], "the runs differ in precision mode: must_keep_origin_dtype -> force_fp16");
  // The MatMuls are the ops that changed, all faster.
  for (const json& r : d["diff_ops"]) {
    if (r["op_type"] == "MatMul") {
      EXPECT_LT(r["diff_ns"].get<std::int64_t>(), 0) << r.dump();
    }
  }
}

// mlp/gelu in f64, which no NPU kernel computes: an AI CPU task, the top row, and AI CPU time rises.
TEST(DiffCommand, ForcedFallbackRaisesThatOpAndAiCpuTime) {
  const json d = diff_json(profile("base", "--variant base"), profile("fallback", "--variant fallback"));
  const json& top = d["diff_ops"][0];
  EXPECT_EQ(top["op"], "mlp/gelu") << d["diff_ops"].dump(1);
  EXPECT_EQ(top["base_unit"], "AI_VECTOR_CORE");
  EXPECT_EQ(top["new_unit"], "AI_CPU");
  EXPECT_EQ(top["change"], "AI_VECTOR_CORE -> AI_CPU");
  const json& ai_cpu = row(d["diff_overall"], "metric", "  Other (AI CPU, host CPU)");
  EXPECT_EQ(ai_cpu["base_ns"], 0);
  EXPECT_GT(ai_cpu["new_ns"].get<std::int64_t>(), 0);
  EXPECT_EQ(ai_cpu["new_count"], 1);
  EXPECT_EQ(ai_cpu["ratio"], "inf");
  // The two Casts around it are new ops.
  EXPECT_EQ(row(d["diff_ops"], "op", "mlp/gelu/cast_in")["match"], "added");
  EXPECT_EQ(d["diff_matching"]["added"], 2);
}

// The mlp/ scope renamed ffn/: the name map pairs the ops it names; the rest pair by type and shape.
TEST(DiffCommand, RenamedOpsMatchThroughTheNameMap) {
  const std::string base = profile("base", "--variant base"), renamed = profile("renamed", "--variant renamed");
  const fs::path map = test_dir() / "map.yaml";
  // Both forms of the file: a map, and a list of {base, new} items.
  write_file(map, "mlp/fc1: ffn/fc1\nmlp/fc2: ffn/fc2\n");
  json d = diff_json(base, renamed, "--op-name-map " + map.string());
  EXPECT_EQ(d["diff_matching"]["by_name_map"], 2);
  EXPECT_EQ(d["diff_matching"]["by_type_shape"], 2);  // gelu and residual
  EXPECT_EQ(d["diff_matching"]["added"], 0);
  EXPECT_EQ(d["diff_matching"]["removed"], 0);
  const json& fc1 = row(d["diff_ops"], "op", "ffn/fc1");
  EXPECT_EQ(fc1["match"], "name map");
  EXPECT_EQ(fc1["base_op"], "mlp/fc1");
  EXPECT_EQ(fc1["diff_ns"], 0);
  write_file(map, "- {base: mlp/fc1, new: ffn/fc1}\n- {base: mlp/gelu, new: ffn/gelu}\n");
  d = diff_json(base, renamed, "--op-name-map " + map.string());
  EXPECT_EQ(row(d["diff_ops"], "op", "ffn/gelu")["match"], "name map");
  // A bad map file is named, with what is wrong in it.
  write_file(map, "- {base: mlp/fc1, golden: ffn/fc1}\n");
  const auto r = run_command(npuscope_cmd("diff " + base + " " + renamed + " --op-name-map " + map.string()));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("npuscope: error: --op-name-map: " + map.string() +
                          ": item 1 (line 1): unknown key \"golden\"; the keys are base and new"),
            std::string::npos)
      << r.output;
}

// Steps of one run: step 2 runs 3x the rows of step 0, so every op is slower, paired by name with
// call indexes counted from each step's first call.
TEST(DiffCommand, OneTrainingStepComparedWithAnother) {
  const std::string t = profile("steps", "--variant base --steps 3 --grow");
  const json d = diff_json(t, t, "--base-step 0 --new-step 2");
  EXPECT_EQ(d["diff_matching"]["base_ops"], 6);
  EXPECT_EQ(d["diff_matching"]["by_name"], 6);
  EXPECT_EQ(d["diff_matching"]["added"], 0);
  EXPECT_EQ(row(d["diff_runs"], "setting", "step")["new"], "2");
  const json& fc1 = row(d["diff_ops"], "op", "mlp/fc1");
  EXPECT_EQ(fc1["base_shapes"], "512,1024;1024,1024");
  EXPECT_EQ(fc1["new_shapes"], "1536,1024;1024,1024");
  EXPECT_GT(fc1["diff_ns"].get<std::int64_t>(), 0);
  // The same step of both: nothing changed.
  const json same = diff_json(t, t, "--base-step 1 --new-step 1");
  for (const json& r : same["diff_ops"]) EXPECT_EQ(r["diff_ns"], 0) << r.dump();
  // A step the trace does not have.
  const auto r = run_command(npuscope_cmd("diff " + t + " " + t + " --base-step 0 --new-step 9"));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("has no step 9; its steps are 0 to 2 (3 steps)"), std::string::npos) << r.output;
}

TEST(DiffCommand, TextCsvAndUsageErrors) {
  const std::string base = profile("base", "--variant base"), next = profile("misaligned", "--variant misaligned");
  auto r = run_command(npuscope_cmd("diff " + base + " " + next + " --top 3"));
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* heading : {"Runs compared", "Overall (where the device time went)", "Memory", "Op matching",
                              "Ops (what got slower, and by how much)", "Kernels by input shape"}) {
    EXPECT_NE(r.output.find(heading), std::string::npos) << heading << "\n" << r.output;
  }
  EXPECT_NE(r.output.find("diff_ops: the 3 rows adding the most time of 6"), std::string::npos) << r.output;
  // The tables fit $COLUMNS (the terminal's width on a terminal): wide enough, the shape change is whole.
  const std::string change = "shapes 512,1024;1024,256 -> 512,1030;1030,256";
  r = run_command("COLUMNS=220 " + npuscope_cmd("diff " + base + " " + next + " --top 3"));
  EXPECT_NE(r.output.find(change), std::string::npos) << r.output;
  r = run_command("COLUMNS=100 " + npuscope_cmd("diff " + base + " " + next + " --top 3"));
  EXPECT_EQ(r.output.find(change), std::string::npos) << r.output;
  const fs::path csv = test_dir() / "csv";
  r = run_command(npuscope_cmd("diff " + base + " " + next + " --format csv -o " + csv.string()));
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string ops = read_file(csv / "diff_ops.csv");
  EXPECT_EQ(ops.substr(0, ops.find(',')), "op");
  EXPECT_NE(ops.find("proj/MatMul"), std::string::npos);
  r = run_command(npuscope_cmd("diff " + base));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("give two traces, BASE and NEW"), std::string::npos) << r.output;
  r = run_command(npuscope_cmd("diff " + base + " " + next + " --base-step 1"));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("or of neither"), std::string::npos) << r.output;
  r = run_command(npuscope_cmd("diff " + base + " /nonexistent/new.db"));
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("/nonexistent/new.db"), std::string::npos) << r.output;
}

}  // namespace

// `npuscope compare -- CMD` as a user calls it (Note [One-shot comparison runs] in compare_runs.h):
// the llama_block sample, small and in f32 under must_keep_origin_dtype so that a perturbation is the
// only error, recorded as a golden run (NPUSCOPE_GOLDEN=1) and an NPU run, then compared.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_test_util.h"
#include "npuscope/collector/trace_reader.h"

using namespace npuscope::testing;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kLlama = std::string(NPUSCOPE_SAMPLES_DIR) +
                           "/llama_block --device npu --seq 8 --hidden 64 --heads 2 --ffn 96 --dtype f32 "
                           "--precision-mode must_keep_origin_dtype";

class CompareRuns : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("npuscope_test_compare_runs_" + std::string(info->name()) + "." + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // `npuscope compare FLAGS --format json -o OUT -- CMD`: the result and the JSON.
  std::pair<CommandResult, json> compare_json(const std::string& flags, const std::string& command) {
    const std::string out = (dir_ / "compare.json").string();
    fs::remove(out);
    const auto r = run_command(npuscope_cmd("compare " + flags + " --format json -o " + out + " -- " + command));
    json j;
    if (fs::exists(out)) j = json::parse(read_file(out));
    return {r, j};
  }

  fs::path dir_;
};

const json* output_row(const json& j, const std::string& op) {
  for (const json& r : j["rows"]) {
    if (r["op_name"] == op && r["tensor"] == "output.0") return &r;
  }
  return nullptr;
}

}  // namespace

TEST_F(CompareRuns, CleanProgramPassesEveryOpAndTheGoldenTraceSaysSo) {
  const std::string keep = (dir_ / "traces").string();
  const auto [r, j] = compare_json("--keep-traces " + keep + " --fail-on-mismatch", kLlama);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(j["summary"]["mode"], "tensor");
  EXPECT_GT(j["summary"]["ops_compared"].get<int>(), 15);
  EXPECT_EQ(j["summary"]["failed"], 0) << j["first_failing_op"].dump();
  EXPECT_EQ(j["summary"]["unmatched_npu"], 0);
  EXPECT_EQ(j["summary"]["unmatched_golden"], 0);
  for (const json& row : j["rows"]) EXPECT_EQ(row["match"], "name") << row["op_name"];
  EXPECT_NE(r.output.find("npuscope compare: running the golden run of '"), std::string::npos) << r.output;

  // golden.db is marked as a golden run, npu.db is not; the programs' output is in the logs.
  const auto golden = npuscope::collector::TraceReader::open(keep + "/golden.db");
  const auto npu = npuscope::collector::TraceReader::open(keep + "/npu.db");
  EXPECT_EQ(golden->meta("golden"), "1");
  EXPECT_FALSE(npu->meta("golden").has_value());
  ASSERT_FALSE(golden->rows<npuscope::collector::DeviceInfoRow>().empty());
  EXPECT_EQ(golden->rows<npuscope::collector::DeviceInfoRow>()[0].precision_mode, "golden");
  EXPECT_EQ(npu->rows<npuscope::collector::DeviceInfoRow>()[0].precision_mode, "must_keep_origin_dtype");
  EXPECT_NE(read_file(keep + "/golden.log").find("llama_block on npu:0"), std::string::npos);
  EXPECT_NE(read_file(keep + "/npu.log").find("npuscope: trace written to"), std::string::npos);
}

// A perturbed projection in the middle of the layer is the first introducing op; what follows it
// inherits; what precedes it passes. A C++ program's trace knows no model pass.
TEST_F(CompareRuns, PerturbedOpIsTheCulpritAndLaterOpsInherit) {
  const auto [r, j] = compare_json("--perturb 'layer0/attn/o_proj:noise=0.5' --fail-on-mismatch", kLlama);
  EXPECT_EQ(r.status, 1) << r.output;
  ASSERT_FALSE(j["first_introducing_op"].is_null()) << r.output;
  EXPECT_EQ(j["first_failing_op"]["op_name"], "layer0/attn/o_proj");
  EXPECT_EQ(j["first_introducing_op"]["op_name"], "layer0/attn/o_proj");
  EXPECT_EQ(j["first_introducing_op"]["op_type"], "MatMul");
  EXPECT_TRUE(j["first_introducing_op"]["pass"].is_null());
  for (const char* later : {"layer0/attn_residual", "layer0/mlp/gate_proj", "layer0/mlp/down_proj"}) {
    const json* row = output_row(j, later);
    ASSERT_NE(row, nullptr) << later;
    EXPECT_EQ((*row)["verdict"], "fail") << later;
    EXPECT_EQ((*row)["origin"], "inherited") << later;
  }
  for (const char* earlier : {"layer0/attn/q_proj", "layer0/attn/softmax", "layer0/attn/pv"}) {
    const json* row = output_row(j, earlier);
    ASSERT_NE(row, nullptr) << earlier;
    EXPECT_EQ((*row)["verdict"], "pass") << earlier;
  }

  // The text report names it, without a pass for a C++ program.
  const auto text = run_command(npuscope_cmd("compare --perturb 'layer0/attn/o_proj:bitflip' -- " + kLlama));
  EXPECT_EQ(text.status, 0) << text.output;
  EXPECT_NE(text.output.find("first op that introduced the error: layer0/attn/o_proj (MatMul, call 0, task "),
            std::string::npos)
      << text.output;
  EXPECT_EQ(text.output.find(" pass)"), std::string::npos) << text.output;
}

// A bad rule is a usage error before anything runs, in the emulator's words; a rule that matches
// nothing is said on stderr by the NPU run.
TEST_F(CompareRuns, BadAndUnmatchedPerturbations) {
  const auto bad = run_command(npuscope_cmd("compare --perturb 'layer0/*:wobble' -- " + kLlama));
  EXPECT_EQ(bad.status, 2) << bad.output;
  EXPECT_NE(bad.output.find("npuscope compare: error: --perturb: perturbation 'layer0/*:wobble': unknown mode "
                            "'wobble'"),
            std::string::npos)
      << bad.output;
  EXPECT_EQ(bad.output.find("running"), std::string::npos) << "nothing ran:\n" << bad.output;

  const auto [r, j] = compare_json("--perturb 'layer9/*:noise=0.5'", kLlama);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("npuscope: warning: perturbation 'layer9/*:noise=0.5' matched no op"), std::string::npos)
      << r.output;
  EXPECT_EQ(j["summary"]["failed"], 0);

  // The same rule in NPUSCOPE_PERTURB, for any program, in the same words.
  const auto env = run_command("NPUSCOPE_PERTURB='layer0/*:wobble' " + kLlama);
  EXPECT_NE(env.status, 0) << env.output;
  EXPECT_NE(env.output.find("NPUSCOPE_PERTURB line 1: perturbation 'layer0/*:wobble': unknown mode 'wobble'"),
            std::string::npos)
      << env.output;
}

TEST_F(CompareRuns, CommandErrorsAreClear) {
  // A program that fails: the run is named, and its log kept where the message says.
  const auto failed = run_command(npuscope_cmd("compare -- " + kLlama + " --heads 3"));
  EXPECT_EQ(failed.status, 2) << failed.output;
  const std::string needle = "npuscope: error: the golden run of '";
  const auto at = failed.output.find(needle);
  ASSERT_NE(at, std::string::npos) << failed.output;
  const auto log_at = failed.output.find("its output is in ", at);
  ASSERT_NE(log_at, std::string::npos) << failed.output;
  const auto log_start = log_at + std::string("its output is in ").size();
  const std::string log = failed.output.substr(log_start, failed.output.find(',', log_start) - log_start);
  EXPECT_TRUE(fs::exists(log)) << log;
  fs::remove_all(fs::path(log).parent_path());

  const auto usage = [](const std::string& args, const std::string& message) {
    const auto r = run_command(npuscope_cmd("compare " + args));
    EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << args << "\n" << r.output;
  };
  usage("--seed 3 -- " + kLlama, "--seed is a flag of --model");
  usage("--dump none -- " + kLlama, "--dump must be tensor or stats");
  usage("--steps 3-1 -- " + kLlama, "--steps");
  usage("--annotate -- " + kLlama, "--annotate with -- CMD needs --keep-traces DIR");
  usage("a.db b.db --ops 'x*'", "--ops records runs");
  usage("--", "no command after '--'");
}

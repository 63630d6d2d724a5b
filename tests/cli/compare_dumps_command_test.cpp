// `npuscope compare` of msprobe dumps as a user runs it, on the real ResNet-50 dump of
// shared/realdata/msprobe: the dump against itself passes entirely; a copy with a planted change in
// one entry's statistics names that entry first; msprobe's CSV; trees compared step by step.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../realdata_util.h"
#include "cli_test_util.h"
#include "profile_dir_test_util.h"

namespace {

namespace fs = std::filesystem;
using npuscope::testing::npuscope_cmd;
using npuscope::testing::read_file;
using npuscope::testing::run_command;

constexpr const char* kDump = "msprobe/resnet50_gpu/step0/proc2016";

class CompareDumpsCommandTest : public npuscope::testing::ProfileDirTest {};

TEST_F(CompareDumpsCommandTest, ARealDumpAgainstItselfPassesEntirely) {
  NPUSCOPE_REALDATA_OR_SKIP(src, kDump);
  const auto r = run_command(npuscope_cmd("compare " + src + " " + src + " --format json -o " + out("r.json")));
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(read_file(out("r.json")));
  const auto& s = j["dump_summary"];
  EXPECT_EQ(s["mode"], "statistics");
  EXPECT_EQ(s["entries_compared"], 760);
  EXPECT_EQ(s["failed"], 0);
  EXPECT_EQ(s["errors"], 0);
  EXPECT_EQ(s["warnings"], 0);
  EXPECT_EQ(s["unmatched_npu"], 0);
  EXPECT_EQ(s["unmatched_bench"], 0);
  EXPECT_EQ(s["first_failing"], "none");
  for (const auto& row : j["compare_result"]) EXPECT_EQ(row["Result"], "pass") << row["NPU Name"];
}

TEST_F(CompareDumpsCommandTest, APlantedChangeNamesItsEntryFirst) {
  NPUSCOPE_REALDATA_OR_SKIP(src, kDump);
  const std::string npu = planted_dump(src, "Functional.conv2d.20.forward", "npu");
  const auto r = run_command(npuscope_cmd("compare " + npu + " " + src + " --fail-on-mismatch"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(
      r.output.find("first failing entry: Functional.conv2d.20.forward (in Module.layer2.2.conv3.Conv2d.forward.0)"),
      std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("first entry that introduced the error: Functional.conv2d.20.forward"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("torchvision/models/resnet.py, line"), std::string::npos) << "its stack: " << r.output;
}

TEST_F(CompareDumpsCommandTest, CsvIsMsprobesCompareResult) {
  NPUSCOPE_REALDATA_OR_SKIP(src, kDump);
  const std::string npu = planted_dump(src, "Functional.conv2d.20.forward", "npu");
  const auto r = run_command(npuscope_cmd("compare " + npu + " " + src + " --format csv -o " + out("csv")));
  ASSERT_EQ(r.status, 0) << r.output;
  std::ifstream in(out("csv/compare_result.csv"));
  std::string header, line;
  std::getline(in, header);
  EXPECT_EQ(header.rfind("NPU Name,Bench Name,NPU Dtype,Bench Dtype,NPU Tensor Shape,Bench Tensor Shape,", 0), 0u)
      << header;
  bool found = false;
  while (std::getline(in, line)) {
    if (line.rfind("Functional.conv2d.20.forward.output.0,", 0) != 0) continue;
    found = true;
    EXPECT_NE(line.find(",error,"), std::string::npos) << line;
    EXPECT_NE(line.find("200.0%"), std::string::npos) << "its NormRelativeErr: " << line;
  }
  EXPECT_TRUE(found);
}

TEST_F(CompareDumpsCommandTest, FuzzyMatchIsSpelledAsMsprobeSpellsIt) {
  NPUSCOPE_REALDATA_OR_SKIP(src, kDump);
  for (const char* flag : {"-fm", "--fuzzy-match"}) {
    const auto r = run_command(npuscope_cmd("compare " + src + " " + src + " " + flag));
    ASSERT_EQ(r.status, 0) << flag << ": " << r.output;
    EXPECT_NE(r.output.find("fuzzy matching: entries paired by name whatever their call index"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("failed: 0"), std::string::npos) << r.output;
  }
}

TEST_F(CompareDumpsCommandTest, TreesCompareStepByStepAndSayWhatIsMissing) {
  NPUSCOPE_REALDATA_OR_SKIP(src, kDump);
  copy_dir(src, "npu/step0/rank0");
  copy_dir(src, "npu/step1/rank0");
  copy_dir(src, "bench/step0/rank0");
  const auto r =
      run_command(npuscope_cmd("compare " + out("npu") + " " + out("bench") + " --format json -o " + out("r.json")));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("step 1, rank 0: the NPU dump"), std::string::npos) << r.output;
  const auto j = nlohmann::json::parse(read_file(out("r.json")));
  ASSERT_EQ(j["comparisons"].size(), 1u);
  EXPECT_EQ(j["comparisons"][0]["step"], 0);
  EXPECT_EQ(j["comparisons"][0]["report"]["dump_summary"]["failed"], 0);
  EXPECT_EQ(j["unpaired"].size(), 1u);
}

TEST_F(CompareDumpsCommandTest, ATraceAgainstADumpIsNotSupportedYet) {
  NPUSCOPE_REALDATA_OR_SKIP(src, kDump);
  std::ofstream(out("t.db")) << "not a dump";
  const auto r = run_command(npuscope_cmd("compare " + out("t.db") + " " + src));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("npuscope: error: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("not supported yet"), std::string::npos) << r.output;
  const auto a = run_command(npuscope_cmd("compare " + src + " " + src + " --annotate"));
  EXPECT_EQ(a.status, 2) << a.output;
  EXPECT_NE(a.output.find("a dump comparison has no trace to store into"), std::string::npos) << a.output;
}

}  // namespace

// `npuscope compare` of msprobe dumps as a user runs it, on the real ResNet-50 dump of
// shared/realdata/msprobe: the dump against itself passes entirely; a copy with a planted change in
// one entry's statistics names that entry first; msprobe's CSV; trees compared step by step.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <regex>

#include "../realdata_util.h"
#include "cli_test_util.h"
#include "profile_dir_test_util.h"

namespace {

namespace fs = std::filesystem;
using npuscope::testing::npuscope_cmd;
using npuscope::testing::read_file;
using npuscope::testing::run_command;

constexpr const char* kDump = "msprobe/resnet50_gpu/step0/proc2016";

class CompareDumpsCommandTest : public npuscope::testing::ProfileDirTest {
 protected:
  // A writable copy of the dump at `src` whose dump.json's data `edit` changed.
  template <class Edit>
  std::string rewritten(const std::string& src, const std::string& as, Edit edit) {
    const std::string dir = copy_dir(src, as);
    nlohmann::ordered_json dump = nlohmann::ordered_json::parse(read_file(dir + "/dump.json"));
    edit(dump["data"]);
    std::ofstream(dir + "/dump.json") << dump.dump(1);
    return dir;
  }

  // `npuscope compare NPU BENCH FLAGS --format json`'s report; a failing test when it does not exit 0.
  nlohmann::json compare_json(const std::string& npu, const std::string& bench, const std::string& flags = "") {
    const auto r = run_command(
        npuscope_cmd("compare " + npu + " " + bench + " " + flags + " --format json -o " + out("report.json")));
    EXPECT_EQ(r.status, 0) << r.output;
    last_output = r.output;
    return r.status == 0 ? nlohmann::json::parse(read_file(out("report.json"))) : nlohmann::json::object();
  }
  std::string last_output;  // compare_json's stdout and stderr

  // The data with each entry renamed by `rename` (in place, in dump order).
  template <class Rename>
  static void rename_entries(nlohmann::ordered_json& data, Rename rename) {
    nlohmann::ordered_json renamed = nlohmann::ordered_json::object();
    for (auto& [name, entry] : data.items()) renamed[rename(name)] = std::move(entry);
    data = std::move(renamed);
  }

  // msprobe's summary_mode md5: every tensor given a CRC-32 (here a hash of its entry and place).
  static void add_md5(nlohmann::ordered_json& data) {
    for (auto& [name, entry] : data.items()) {
      int n = 0;
      const std::function<void(nlohmann::ordered_json&)> walk = [&](nlohmann::ordered_json& v) {
        if (v.is_object() && v.contains("dtype")) {
          char crc[9];
          std::snprintf(crc, sizeof crc, "%08zx", std::hash<std::string>{}(name + std::to_string(n++)) >> 32);
          v["md5"] = crc;
        } else if (v.is_structured()) {
          for (auto& item : v) walk(item);
        }
      };
      walk(entry);
    }
  }
};

TEST_F(CompareDumpsCommandTest, ARealDumpAgainstItselfPassesEntirely) {
  NPUSCOPE_REALDATA_OR_SKIP(src, kDump);
  const auto j = compare_json(src, src);
  const auto& s = j["dump_summary"];
  EXPECT_EQ(s["mode"], "statistics");
  EXPECT_EQ(s["entries_compared"], 760);
  EXPECT_EQ(s["failed"], 0);
  // Module.conv1.Conv2d.backward.0 has no outputs (the input image's gradient: "output": []).
  EXPECT_EQ(s["passed"], 759);
  EXPECT_EQ(s["not_applicable"], 1);
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
  const auto j = compare_json(out("npu"), out("bench"));
  EXPECT_NE(last_output.find("step 1, rank 0: the NPU dump"), std::string::npos) << last_output;
  ASSERT_EQ(j["comparisons"].size(), 1u);
  EXPECT_EQ(j["comparisons"][0]["step"], 0);
  EXPECT_EQ(j["comparisons"][0]["report"]["dump_summary"]["failed"], 0);
  EXPECT_EQ(j["unpaired"].size(), 1u);
}

TEST_F(CompareDumpsCommandTest, TreesWriteAFolderOfCsvFilesPerStepAndRank) {
  NPUSCOPE_REALDATA_OR_SKIP(src, kDump);
  copy_dir(src, "npu/step0/rank0");
  copy_dir(src, "npu/step1/rank0");
  copy_dir(src, "bench/step0/rank0");
  copy_dir(src, "bench/step1/rank0");
  const auto r =
      run_command(npuscope_cmd("compare " + out("npu") + " " + out("bench") + " --format csv -o " + out("csv")));
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* step : {"step0_rank0", "step1_rank0"}) {
    EXPECT_TRUE(fs::exists(out("csv/" + std::string(step) + "/compare_result.csv"))) << step;
    EXPECT_TRUE(fs::exists(out("csv/" + std::string(step) + "/dump_summary.csv"))) << step;
  }
}

// summary_mode md5: the CRC-32s compared; a changed one names its entry first.
TEST_F(CompareDumpsCommandTest, Md5DumpsCompareTheirCrcs) {
  NPUSCOPE_REALDATA_OR_SKIP(src, kDump);
  const std::string bench = rewritten(src, "bench", add_md5);
  const std::string npu = rewritten(src, "npu", [](nlohmann::ordered_json& data) {
    add_md5(data);
    data["Functional.relu.5.forward"]["output"][0]["md5"] = "0badc0de";
  });
  const auto j = compare_json(npu, bench);
  EXPECT_EQ(j["dump_summary"]["mode"], "md5");
  EXPECT_EQ(j["dump_summary"]["failed"], 1);
  EXPECT_EQ(j["first_failing_entry"]["entry"], "Functional.relu.5.forward");
  for (const auto& row : j["compare_result"]) {
    if (row["NPU Name"] != "Functional.relu.5.forward.output.0") continue;
    EXPECT_EQ(row["NPU MD5"], "0badc0de");
    EXPECT_EQ(row["Result"], "error");
  }
  const auto self = run_command(npuscope_cmd("compare " + bench + " " + bench + " --fail-on-mismatch"));
  EXPECT_EQ(self.status, 0) << self.output;
}

// The NPU run called Tensor.add_ once more before the model (every call index one higher): by name
// nothing pairs as it should; with -fm every entry pairs with its counterpart.
TEST_F(CompareDumpsCommandTest, FuzzyMatchPairsEntriesWhoseCallIndexesShifted) {
  NPUSCOPE_REALDATA_OR_SKIP(src, kDump);
  const std::string npu = rewritten(src, "npu", [](nlohmann::ordered_json& data) {
    const std::regex add(R"(^Tensor\.add_\.(\d+)\.forward$)");
    rename_entries(data, [&](const std::string& name) {
      std::smatch m;
      return std::regex_match(name, m, add) ? "Tensor.add_." + std::to_string(std::stoi(m[1]) + 1) + ".forward" : name;
    });
  });
  const auto n = compare_json(npu, src);
  EXPECT_GT(n["dump_summary"]["unmatched_npu"], 0);
  EXPECT_GT(n["dump_summary"]["unmatched_bench"], 0);
  const auto f = compare_json(npu, src, "-fm");
  EXPECT_EQ(f["dump_summary"]["entries_compared"], 760);
  EXPECT_EQ(f["dump_summary"]["failed"], 0);
  EXPECT_EQ(f["dump_summary"]["unmatched_npu"], 0);
  EXPECT_EQ(f["dump_summary"]["unmatched_bench"], 0);
  for (const auto& e : f["entries"]) EXPECT_EQ(e["match"], "fuzzy") << e["entry"];
}

// The NPU run's conv2d calls are torch_npu's (NPU.npu_conv2d.N.forward): a mapping file pairs them.
TEST_F(CompareDumpsCommandTest, AMappingFilePairsRenamedApis) {
  NPUSCOPE_REALDATA_OR_SKIP(src, kDump);
  const std::string npu = rewritten(src, "npu", [](nlohmann::ordered_json& data) {
    rename_entries(data, [](const std::string& name) {
      return name.starts_with("Functional.conv2d.") ? "NPU.npu_conv2d." + name.substr(18) : name;
    });
  });
  std::ofstream(out("mapping.yaml")) << "NPU.npu_conv2d: Functional.conv2d\n";
  EXPECT_GT(compare_json(npu, src)["dump_summary"]["unmatched_npu"], 0);
  const auto m = compare_json(npu, src, "--mapping " + out("mapping.yaml"));
  EXPECT_EQ(m["dump_summary"]["entries_compared"], 760);
  EXPECT_EQ(m["dump_summary"]["failed"], 0);
  EXPECT_EQ(m["dump_summary"]["unmatched_npu"], 0);
  int mapped = 0;
  for (const auto& e : m["entries"]) {
    if (e["entry"].get<std::string>().starts_with("NPU.npu_conv2d.")) {
      EXPECT_EQ(e["match"], "name map") << e["entry"];
      ++mapped;
    }
  }
  EXPECT_EQ(mapped, 106);  // 53 calls, forward and backward
}

// Tensor mode end to end: two runs of a tiny model dumped by Debian's torch in msprobe's layout
// (tests/cli/write_msprobe_tensor_dumps.py), one with a weight of fc2 perturbed; the .pt files
// read without Python; the linear that used the weight is the first failing entry.
TEST_F(CompareDumpsCommandTest, TensorDumpsOfATorchModelNameThePerturbedEntryFirst) {
  const fs::path script = fs::path(NPUSCOPE_SOURCE_DIR) / "tests/cli/write_msprobe_tensor_dumps.py";
  const auto py = run_command("/usr/bin/python3 " + script.string() + " " + out("dumps"));
  if (py.status == 3) GTEST_SKIP() << "/usr/bin/python3 has no torch";
  ASSERT_EQ(py.status, 0) << py.output;
  const auto j = compare_json(out("dumps/npu"), out("dumps/bench"));
  const auto& s = j["dump_summary"];
  EXPECT_EQ(s["mode"], "tensor");
  EXPECT_EQ(s["entries_compared"], 7);
  EXPECT_EQ(s["unmatched_npu"], 0);
  EXPECT_EQ(j["first_failing_entry"]["entry"], "Functional.linear.1.forward");
  EXPECT_EQ(j["first_failing_entry"]["module"], "Module.fc2.Linear.forward.0");
  bool saw_output = false;
  for (const auto& row : j["compare_result"]) {
    const std::string name = row["NPU Name"];
    EXPECT_EQ(row["Err_message"], "[]") << name << ": every tensor loaded and compared";
    if (name.starts_with("Functional.linear.0.forward") || name.starts_with("Functional.relu.0.forward.")) {
      if (row["NPU Dtype"] == "torch.float32") {
        EXPECT_EQ(row["Cosine"], "1.0") << name;
      }
    }
    if (name == "Functional.linear.1.forward.output.0") {
      saw_output = true;
      EXPECT_LT(std::stod(row["Cosine"].get<std::string>()), 0.999) << name;
      EXPECT_EQ(row["Data_name"],
                "['Functional.linear.1.forward.output.0.pt', 'Functional.linear.1.forward.output.0.pt']");
      EXPECT_EQ(row["Accuracy Reached or Not"], "No");
    }
  }
  EXPECT_TRUE(saw_output);
  // Against itself every tensor is equal.
  EXPECT_EQ(compare_json(out("dumps/bench"), out("dumps/bench"), "--fail-on-mismatch")["dump_summary"]["passed"], 7);
}

// A trace against a dump is compared as the trace's PyTorch dump (tests/pytorch/test_msprobe_names.py
// runs one); a side that is neither a dump nor a trace, or a trace without a PyTorch dump, is an error.
TEST_F(CompareDumpsCommandTest, ASideThatIsNeitherADumpNorATraceWithOneIsAnError) {
  NPUSCOPE_REALDATA_OR_SKIP(src, kDump);
  std::ofstream(out("t.db")) << "not a dump";
  const auto r = run_command(npuscope_cmd("compare " + out("t.db") + " " + src));
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("npuscope: error: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("not an npuscope trace"), std::string::npos) << r.output;
  const auto a = run_command(npuscope_cmd("compare " + src + " " + src + " --annotate"));
  EXPECT_EQ(a.status, 2) << a.output;
  EXPECT_NE(a.output.find("a dump comparison has no trace to store into"), std::string::npos) << a.output;
}

}  // namespace

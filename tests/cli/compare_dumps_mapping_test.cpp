// `npuscope compare NPU BENCH --mapping FILE` with msprobe's data_mapping and api_mapping files
// (Note [Dump mapping files]): two small dumps written here, the built CLI run as a user runs it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_test_util.h"
#include "profile_dir_test_util.h"

namespace {

using npuscope::testing::npuscope_cmd;
using npuscope::testing::read_file;
using npuscope::testing::run_command;

class CompareDumpsMappingTest : public npuscope::testing::ProfileDirTest {
 protected:
  // A statistics dump folder holding one entry `name` with two inputs and an output.
  std::string dump(const std::string& dir, const std::string& name) {
    const std::string t =
        R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2], "Max": 1.0, "Min": -1.0, "Mean": 0.0, "Norm": 1.4})";
    std::filesystem::create_directories(out(dir));
    std::ofstream(out(dir + "/dump.json")) << R"({"task": "statistics", "level": "L1", "framework": "pytorch",
        "dump_data_dir": null, "data": {")" + name +
                                                  R"(": {"input_args": [)" + t + ", " + t +
                                                  R"(], "input_kwargs": {}, "output": [)" + t + "]}}}";
    return out(dir);
  }
  std::string mapping(const std::string& text) {
    std::ofstream(out("mapping.yaml")) << text;
    return out("mapping.yaml");
  }
};

TEST_F(CompareDumpsMappingTest, DataAndApiMappingFilesPairRenamedValues) {
  const std::string npu = dump("npu", "Functional.myconv.0.forward"),
                    bench = dump("bench", "Functional.conv2d.0.forward");
  const auto run = [&](const std::string& file) {
    const auto r = run_command(npuscope_cmd("compare " + npu + " " + bench + " --mapping " + file +
                                            " --format json -o " + out("report.json")));
    EXPECT_EQ(r.status, 0) << r.output;
    return r.status == 0 ? nlohmann::json::parse(read_file(out("report.json"))) : nlohmann::json::object();
  };
  const auto data =
      run(mapping("Functional.myconv.0.forward.input.1: Functional.conv2d.0.forward.input.0\n"
                  "Functional.myconv.0.forward.output.0: Functional.conv2d.0.forward.output.0\n"));
  EXPECT_EQ(data["dump_summary"]["entries_compared"], 1);
  EXPECT_EQ(data["entries"][0]["match"], "name map");
  EXPECT_EQ(data["dump_summary"]["unmatched_npu"], 1) << "input.0: no line names it";
  const auto api =
      run(mapping("- ms_api: Functional.myconv\n  pt_api: Functional.conv2d\n"
                  "  ms_args: [0, 1]\n  pt_args: [1, 0]\n  ms_outputs: [0]\n  pt_outputs: [0]\n"));
  EXPECT_EQ(api["dump_summary"]["entries_compared"], 1);
  EXPECT_EQ(api["dump_summary"]["unmatched_npu"], 0);
  EXPECT_EQ(api["dump_summary"]["unmatched_bench"], 0);
}

TEST_F(CompareDumpsMappingTest, AFileOfNoKnownFormIsAnErrorNamingItsLine) {
  const std::string npu = dump("npu", "Functional.myconv.0.forward"),
                    bench = dump("bench", "Functional.conv2d.0.forward");
  const std::string file = mapping("Torch.add: Tensor.add\nFunctional.myconv.0.forward.input.0: Functional.conv2d\n");
  const auto r = run_command(npuscope_cmd("compare " + npu + " " + bench + " --mapping " + file));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("npuscope: error: --mapping " + file + ": line 2: "), std::string::npos) << r.output;
  const std::string api = mapping("- ms_api: Functional.myconv\n  pt_api: Functional.conv2d\n  ms_args: [0]\n");
  const auto a = run_command(npuscope_cmd("compare " + npu + " " + bench + " --mapping " + api));
  EXPECT_EQ(a.status, 2) << a.output;
  EXPECT_NE(a.output.find("ms_args has 1 items and pt_args 0"), std::string::npos) << a.output;
}

}  // namespace

// analyze, diff and cluster on real profiles of shared/realdata through the CLI: the cluster of a
// directory of real rank exports (Note [A cluster of real profiles] in cli/src/cluster_sources.h)
// and the GPU kernel classes of a diff across hardware (Note [Kernel classes] in
// analyzer/src/diff_side.cpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "../realdata_util.h"
#include "cli_test_util.h"
#include "profile_dir_test_util.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using npuscope::testing::npuscope_cmd;
using npuscope::testing::run_command;

// The JSON report after the import lines (stderr and stdout are read together).
json json_of(const std::string& output) {
  const std::size_t at = output.starts_with("{") ? 0 : output.find("\n{") + 1;
  return json::parse(output.substr(at));
}

class RealProfilesCommandTest : public npuscope::testing::ProfileDirTest {};

// Two of the 128 ranks of an A100 job (Kineto traces with distributedInfo): imported once each,
// the 126 others reported missing; run again, the cached imports are read and not counted twice.
TEST_F(RealProfilesCommandTest, ClusterOfADirectoryOfRealRankExports) {
  NPUSCOPE_REALDATA_OR_SKIP(rank0, "kineto/a100_sampled_128ranks/rank-0.json.gz");
  NPUSCOPE_REALDATA_OR_SKIP(rank1, "kineto/a100_sampled_128ranks/rank-1.json.gz");
  copy(rank0, "job/rank-0.json.gz");
  copy(rank1, "job/rank-1.json.gz");
  for (int run = 0; run < 2; ++run) {
    const auto r = run_command(npuscope_cmd("cluster " + (dir_ / "job").string() + " --format json"));
    ASSERT_EQ(r.status, 0) << r.output;
    const json doc = json_of(r.output);
    EXPECT_EQ(doc["cluster_summary"]["World Size"], 128) << "run " << run;
    EXPECT_EQ(doc["cluster_summary"]["Ranks Analysed"], 2) << "run " << run;
    EXPECT_EQ(doc["cluster_summary"]["Missing Ranks"].size(), 126u) << "run " << run;
  }
}

// The H100 and MI300X traces of one model: every kernel a GEMM, an elementwise kernel or another
// on both (cuBLAS/CUTLASS GEMMs against rocBLAS' Cijk_* ones).
TEST_F(RealProfilesCommandTest, DiffAcrossGpusSplitsTheirKernels) {
  NPUSCOPE_REALDATA_OR_SKIP(h100, "kineto/cross_hw/h100/gaunernst_bert-small-uncased__1016001.json.gz");
  NPUSCOPE_REALDATA_OR_SKIP(mi300, "kineto/cross_hw/mi300/gaunernst_bert-small-uncased__1016001.json.gz");
  const auto r = run_command(npuscope_cmd("diff " + copy(h100, "h100/bert.json.gz") + " " +
                                          copy(mi300, "mi300/bert.json.gz") + " --format json"));
  ASSERT_EQ(r.status, 0) << r.output;
  const json doc = json_of(r.output);
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> counts;  // metric -> (base n, new n)
  for (const json& row : doc["diff_overall"]) {
    if (row["base_count"].is_number()) counts[row["metric"]] = {row["base_count"], row["new_count"]};
  }
  EXPECT_EQ(counts["  GEMM (GPU)"], std::make_pair(std::int64_t{26}, std::int64_t{26}));
  EXPECT_EQ(counts["  Elementwise (GPU)"].first + counts["  Other kernels (GPU)"].first + 26, 60);
  EXPECT_EQ(counts["  Elementwise (GPU)"].second + counts["  Other kernels (GPU)"].second + 26, 60);
  EXPECT_EQ(doc["diff_matching"]["added"], 0);
  EXPECT_EQ(doc["diff_matching"]["removed"], 0);
}

}  // namespace

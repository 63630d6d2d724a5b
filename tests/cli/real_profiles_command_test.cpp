// analyze, diff and cluster on real profiles of shared/realdata through the CLI: the cluster of a
// directory of real rank exports (Note [A cluster of real profiles] in cli/src/cluster_sources.h)
// and the overall split of a diff across hardware, row by row (Note [Kernel classes] in
// npuscope/analyzer/diff_classes.h).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>

#include "../realdata_util.h"
#include "cli_test_util.h"
#include "profile_dir_test_util.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using npuscope::testing::npuscope_cmd;
using npuscope::testing::read_file;
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

// The two 910B ranks' text exports as a cluster: the communication matrix per op against each
// rank's own communication_matrix.json (torch_npu's: per step, its entries allreduce-top1@group,
// -middle, -bottom1..3, -total, each link with the op it picked): every entry and link there is a
// row here of the same transport and op, the sizes exact and the times within 0.5 %; and the op it
// picked is a per-op row of the same figures (Note [Communication matrix per op]).
TEST_F(RealProfilesCommandTest, ClusterMatrixPerOpIsTheRanksCommunicationMatrixJson) {
  NPUSCOPE_REALDATA_OR_SKIP(text, "ascend_pytorch_profiler/text/level1");
  for (const char* rank : {"rank0_ascend_pt", "rank1_ascend_pt"})
    copy_dir(text + "/" + rank, std::string("job/") + rank);
  const auto r = run_command(npuscope_cmd("cluster " + (dir_ / "job").string() + " --format json"));
  ASSERT_EQ(r.status, 0) << r.output;
  const json doc = json_of(r.output);
  std::map<std::tuple<std::string, std::string, std::string, std::string>, json> ours;  // step, type, key, link
  for (const json& row : doc["cluster_communication_matrix_ops"]) {
    const std::string step = row["Step"].is_null() ? "step" : "step" + std::to_string(row["Step"].get<int>());
    const std::string key = row["HCCL Op Name"].get<std::string>() + "@" + row["Group"].get<std::string>();
    ours[{step, row["Type"], key, row["Src-Dst"]}] = row;
  }
  const auto same = [](const json& want, const json& got, const std::string& at) {
    EXPECT_EQ(got["Transport Type"], want["Transport Type"]) << at;
    EXPECT_EQ(got["Transit Bytes"].get<std::int64_t>(), std::llround(want["Transit Size(MB)"].get<double>() * 1e6))
        << at;
    const double ms = want["Transit Time(ms)"];
    EXPECT_NEAR(got["Transit Time(ms)"].get<double>(), ms, ms * 0.005) << at;
  };
  int entries = 0, picked = 0;
  for (const char* rank : {"rank0_ascend_pt", "rank1_ascend_pt"}) {
    const json file = json::parse(read_file(text + "/" + rank + "/ASCEND_PROFILER_OUTPUT/communication_matrix.json"));
    for (const auto& [step, types] : file.items()) {
      for (const auto& [type, keys] : types.items()) {
        for (const auto& [key, links] : keys.items()) {
          for (const auto& [link, want] : links.items()) {
            const std::string at = std::string(rank) + " " + step + " " + key + " " + link;
            const auto it = ours.find({step, type, key, link});
            ASSERT_NE(it, ours.end()) << at;
            same(want, it->second, at);
            ++entries;
            if (!want.contains("Op Name")) continue;
            EXPECT_EQ(it->second["Op Name"], want["Op Name"]) << at;
            const std::string group = key.substr(key.find('@'));
            const auto op = ours.find({step, type, want["Op Name"].get<std::string>() + group, link});
            ASSERT_NE(op, ours.end()) << at;
            same(want, op->second, at + " (its op)");
            ++picked;
          }
        }
      }
    }
  }
  EXPECT_EQ(entries, 2 * 6 * 8);  // two ranks, six entries (allreduce top1 ... total), eight links
  EXPECT_EQ(picked, 2 * 5 * 8);
}

// The overall table's rows by metric: (base ns, base n, new ns, new n), a count -1 when none.
struct OverallRow {
  std::int64_t base_ns = 0, base_n = -1, new_ns = 0, new_n = -1;
};
std::map<std::string, OverallRow> overall(const json& doc) {
  std::map<std::string, OverallRow> out;
  for (const json& r : doc["diff_overall"]) {
    const auto n = [](const json& v) { return v.is_number() ? v.get<std::int64_t>() : std::int64_t{-1}; };
    out[r["metric"]] = {r["base_ns"], n(r["base_count"]), r["new_ns"], n(r["new_count"])};
  }
  return out;
}

// The task counts (base, new) of some rows.
void expect_counts(const std::map<std::string, OverallRow>& rows,
                   const std::map<std::string, std::pair<std::int64_t, std::int64_t>>& want) {
  for (const auto& [metric, n] : want) {
    const auto it = rows.find(metric);
    ASSERT_NE(it, rows.end()) << metric;
    EXPECT_EQ(std::make_pair(it->second.base_n, it->second.new_n), n) << metric;
  }
}

std::size_t indent(const std::string& metric) { return metric.find_first_not_of(' '); }

// On each side, Computing Time's leaf rows (a row with no deeper row under it) sum to it, and
// Computing, Uncovered Communication and Free Time to E2E Time.
void expect_rows_add_up(const json& doc) {
  const json& rows = doc["diff_overall"];
  for (const char* side : {"base_ns", "new_ns"}) {
    std::int64_t computing = -1, leaves = 0, top = 0, e2e = -1;
    std::string section;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const std::string metric = rows[i]["metric"];
      const std::int64_t ns = rows[i][side];
      if (indent(metric) == 0) {
        section = metric;
        if (metric == "E2E Time")
          e2e = ns;
        else
          top += ns;
        if (metric == "Computing Time") computing = ns;
        continue;
      }
      const bool leaf = i + 1 == rows.size() || indent(rows[i + 1]["metric"]) <= indent(metric);
      if (section == "Computing Time" && leaf) leaves += ns;
    }
    EXPECT_EQ(leaves, computing) << side << "\n" << rows.dump(1);
    EXPECT_EQ(top, e2e) << side;
  }
}

// The H100 and MI300X traces of one model: msprof-analyze's classes on both, row by row (cuBLAS and
// CUTLASS GEMMs against rocBLAS' Cijk_* ones, FlashAttention-2 against attn_fwd).
TEST_F(RealProfilesCommandTest, DiffAcrossGpusSplitsTheirKernels) {
  NPUSCOPE_REALDATA_OR_SKIP(h100, "kineto/cross_hw/h100/gaunernst_bert-small-uncased__1016001.json.gz");
  NPUSCOPE_REALDATA_OR_SKIP(mi300, "kineto/cross_hw/mi300/gaunernst_bert-small-uncased__1016001.json.gz");
  const auto r = run_command(npuscope_cmd("diff " + copy(h100, "h100/bert.json.gz") + " " +
                                          copy(mi300, "mi300/bert.json.gz") + " --format json"));
  ASSERT_EQ(r.status, 0) << r.output;
  const json doc = json_of(r.output);
  const auto rows = overall(doc);
  expect_counts(rows, {{"    Matmul (Cube)", {26, 26}},
                       {"    Flash Attention (Forward) (Cube)", {4, 4}},
                       {"    Vector (No Trans)", {30, 30}},
                       {"Computing Time", {60, 60}}});
  expect_rows_add_up(doc);
  EXPECT_EQ(doc["diff_matching"]["added"], 0);
  EXPECT_EQ(doc["diff_matching"]["removed"], 0);
}

// The 910B job's rank 0 (an AlexNet-like CNN, Ascend PyTorch Profiler text export) against the
// H100's ViT (its patch embedding a convolution): the NPU's kernels and the GPU's in the same rows.
// msprof's step_trace_time.csv for the NPU's step: Computing 8873.756 us, Communication(Not
// Overlapped) 101963.203, Free 25744.05.
TEST_F(RealProfilesCommandTest, DiffOfAnNpuProfileAgainstAGpuTraceLinesUpRowByRow) {
  NPUSCOPE_REALDATA_OR_SKIP(npu, "ascend_pytorch_profiler/text/level1/rank0_ascend_pt");
  NPUSCOPE_REALDATA_OR_SKIP(h100, "kineto/cross_hw/h100/Falconsai_nsfw_image_detection__1016002.json.gz");
  const auto r = run_command(
      npuscope_cmd("diff " + copy_dir(npu, "rank0_ascend_pt") + " " + copy(h100, "vit.json.gz") + " --format json"));
  ASSERT_EQ(r.status, 0) << r.output;
  const json doc = json_of(r.output);
  const auto rows = overall(doc);
  const auto near = [](std::int64_t ns, double us) { EXPECT_NEAR(static_cast<double>(ns) / 1e3, us, us * 0.005); };
  near(rows.at("Computing Time").base_ns, 8873.756);
  near(rows.at("Uncovered Communication Time").base_ns, 101963.203);
  near(rows.at("Free Time").base_ns, 25744.05);
  // NPU: Conv2D (AI_CORE) with the TransData around it (vector) in aten::conv2d; the backward convs
  // in aten::convolution_backward; MatMulV2/V3 in aten::addmm and aten::mm. GPU: the patch
  // embedding's fprop with cuDNN's layout kernels, the GEMMs in aten::addmm.
  expect_counts(rows, {{"    Conv (Forward) (Cube)", {5, 1}},
                       {"    Conv (Forward) (Vector)", {15, 4}},
                       {"    Conv (Backward) (Cube)", {9, 0}},
                       {"    Matmul (Cube)", {9, 73}},
                       {"    Flash Attention (Forward) (Cube)", {0, 12}},
                       {"    Vector (Trans)", {25, 0}},      // TransData, Transpose, Cast
                       {"  SDMA (Tensor Move)", {11, 0}}});  // aclnnInplaceCopy's TensorMove
  // The NPU's all-reduces on its one communicator, the wait from communication.json.
  EXPECT_EQ(rows.at("  17522688603477080586").base_n, 4);
  EXPECT_GT(rows.at("    Wait").base_ns, 0);
  EXPECT_GT(rows.at("    Transmit").base_ns, rows.at("    Wait").base_ns);
  expect_rows_add_up(doc);
}

}  // namespace

// Kineto traces through the CLI as a user runs it: `npuscope import`, and analyze, diff, view
// --screenshot and export --chrome given the .json.gz itself (each imports it once to a cached
// trace); the cross-hardware golden check: an H100 and an MI300X trace of one model diff with their
// ops paired by aten op and input shapes (Note [Kineto op types]).
#include <gtest/gtest.h>

#include <filesystem>

#include "../realdata_util.h"
#include "cli_test_util.h"
#include "profile_dir_test_util.h"

namespace {

namespace fs = std::filesystem;
using npuscope::testing::npuscope_cmd;
using npuscope::testing::read_file;
using npuscope::testing::run_command;

class KinetoCommandTest : public npuscope::testing::ProfileDirTest {};

TEST_F(KinetoCommandTest, ImportSaysWhatItImportedAndWhatItPassedOver) {
  NPUSCOPE_REALDATA_OR_SKIP(src, "kineto/a100_nccl_world2.json.gz");
  const auto r = run_command(npuscope_cmd("import " + src + " -o " + out("t.db")));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("(kineto)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("3774 tasks"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("event cat=ac2g"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(out("t.db")));
}

TEST_F(KinetoCommandTest, AnalyzeAndExportTakeTheTraceItself) {
  NPUSCOPE_REALDATA_OR_SKIP(src, "kineto/v100_resnet_rank0.pt.trace.json.gz");
  const std::string trace = copy(src, "v100.pt.trace.json.gz");
  const auto a = run_command(npuscope_cmd("analyze " + trace));
  ASSERT_EQ(a.status, 0) << a.output;
  EXPECT_NE(a.output.find("Tesla V100-SXM2-32GB"), std::string::npos) << a.output;
  EXPECT_TRUE(fs::exists(trace + ".npuscope.db"));
  const auto e = run_command(npuscope_cmd("export " + trace + " --chrome " + out("v100.json")));
  ASSERT_EQ(e.status, 0) << e.output;
  const std::string json = read_file(out("v100.json"));
  EXPECT_NE(json.find("traceEvents"), std::string::npos);
  EXPECT_NE(json.find("aten::"), std::string::npos);
}

// (Xvfb in the name: the ASan suite runs it without the leak check, as every viewer under Xvfb:
// scripts/sanitizers/run_tests.sh.)
TEST_F(KinetoCommandTest, ViewUnderXvfbDrawsAnImportedTrace) {
  NPUSCOPE_REALDATA_OR_SKIP(src, "kineto/mi250_minitoy_train.json.gz");
  ASSERT_EQ(run_command("command -v xvfb-run").status, 0) << "xvfb-run is missing (scripts/bootstrap.sh installs it)";
  const std::string trace = copy(src, "mi250.json.gz");
  const auto r = run_command(npuscope::testing::xvfb_run_prefix(4600, dir_) +
                             npuscope_cmd("view " + trace + " --screenshot " + out("mi250.png")));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_GT(fs::file_size(out("mi250.png")), 1000u);
}

// `npuscope diff h100/X.json.gz mi300/X.json.gz`: the kernels differ by name (cutlass / Cijk_...),
// the aten ops that launched them and their shapes do not.
TEST_F(KinetoCommandTest, CrossHardwareDiffPairsTheAtenOps) {
  NPUSCOPE_REALDATA_OR_SKIP(h100, "kineto/cross_hw/h100/gaunernst_bert-small-uncased__1016001.json.gz");
  NPUSCOPE_REALDATA_OR_SKIP(mi300, "kineto/cross_hw/mi300/gaunernst_bert-small-uncased__1016001.json.gz");
  const auto r =
      run_command(npuscope_cmd("diff " + copy(h100, "h100/bert.json.gz") + " " + copy(mi300, "mi300/bert.json.gz")));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("base ops: 60"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("new ops: 60"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("by name: 14"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("by type+shape: 46"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("added: 0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("removed: 0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("AMD Instinct MI300X VF"), std::string::npos) << r.output;
}

TEST_F(KinetoCommandTest, CrossHardwareDiffPairsVendorConvolutions) {
  NPUSCOPE_REALDATA_OR_SKIP(h100, "kineto/cross_hw/h100/Falconsai_nsfw_image_detection__1016002.json.gz");
  NPUSCOPE_REALDATA_OR_SKIP(mi300, "kineto/cross_hw/mi300/Falconsai_nsfw_image_detection__1016002.json.gz");
  const auto r =
      run_command(npuscope_cmd("diff " + copy(h100, "h100/vit.json.gz") + " " + copy(mi300, "mi300/vit.json.gz")));
  ASSERT_EQ(r.status, 0) << r.output;
  // 154 and 155 kernels: every H100 kernel pairs; MIOpen's convolution runs one kernel more than cuDNN's.
  EXPECT_NE(r.output.find("base ops: 154"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("new ops: 155"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("removed: 0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("added: 1"), std::string::npos) << r.output;
}

}  // namespace

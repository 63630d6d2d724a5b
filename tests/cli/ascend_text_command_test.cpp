// An Ascend PyTorch Profiler text export through the CLI as a user runs it: `npuscope import` on the
// folder, and `analyze` given the folder itself (imported once to a cached trace beside it).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "../realdata_util.h"
#include "cli_test_util.h"

namespace {

namespace fs = std::filesystem;
using npuscope::testing::npuscope_cmd;
using npuscope::testing::run_command;

class AscendTextCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("npuscope_asctext_cli_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
};

TEST_F(AscendTextCommandTest, ImportSaysWhatItImportedAndWhatItPassedOver) {
  NPUSCOPE_REALDATA_OR_SKIP(src, "ascend_pytorch_profiler/text/level1/rank0_ascend_pt");
  const auto r = run_command(npuscope_cmd("import " + src + " -o " + (dir_ / "t.db").string()));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("(ascend_pytorch_profiler_text)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("539 tasks"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("event Overlap Analysis Computing"), std::string::npos) << r.output;
}

TEST_F(AscendTextCommandTest, AnalyzeTakesTheFolderAndShowsItsStepTime) {
  NPUSCOPE_REALDATA_OR_SKIP(src, "ascend_pytorch_profiler/text/level1/rank0_ascend_pt");
  const fs::path copy = dir_ / "rank0_ascend_pt";
  fs::copy(src, copy, fs::copy_options::recursive);
  for (const auto& e : fs::recursive_directory_iterator(copy)) {
    fs::permissions(e.path(), fs::perms::owner_all, fs::perm_options::add);
  }
  fs::permissions(copy, fs::perms::owner_all, fs::perm_options::add);
  const auto a = run_command(npuscope_cmd("analyze " + copy.string()));
  ASSERT_EQ(a.status, 0) << a.output;
  EXPECT_NE(a.output.find("Ascend910B"), std::string::npos) << a.output;
  EXPECT_NE(a.output.find("101.96 ms"), std::string::npos) << a.output;  // Communication(Not Overlapped)
  EXPECT_NE(a.output.find("Ops holding the most memory"), std::string::npos) << a.output;  // OP_MEMORY
  EXPECT_NE(a.output.find("aten::_foreach_add"), std::string::npos) << a.output;           // its largest block
  EXPECT_TRUE(fs::exists(copy.string() + ".npuscope.db"));
}

TEST_F(AscendTextCommandTest, ABrokenExportIsAnErrorNamingTheFile) {
  const fs::path broken = dir_ / "w_ascend_pt" / "ASCEND_PROFILER_OUTPUT";
  fs::create_directories(broken);
  const auto r = run_command(npuscope_cmd("analyze " + (dir_ / "w_ascend_pt").string()));
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("npuscope: error:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("ASCEND_PROFILER_OUTPUT"), std::string::npos) << r.output;
}

}  // namespace

// The Ascend db exports through the CLI as a user runs it: `npuscope import` of a rank folder,
// `analyze` given the folder itself (imported once to its cached trace), msprof's db, `cluster DIR`
// on a directory of rank exports (the missing ranks of the world reported, the communication
// matrix from the link tasks), and a foreign SQLite: `npuscope: error:` naming the file.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "../realdata_util.h"
#include "cli_test_util.h"

namespace {

namespace fs = std::filesystem;
using npuscope::testing::npuscope_cmd;
using npuscope::testing::run_command;

constexpr const char* kLevel1 = "ascend_pytorch_profiler/db/level1";

class AscendDbCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("npuscope_ascend_db_cli_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // A copy in a writable folder: the cached trace goes beside it.
  std::string copy(const std::string& src, const std::string& name) {
    const fs::path to = dir_ / name;
    fs::create_directories(to.parent_path());
    fs::copy(src, to, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    return to.string();
  }
  std::string out(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(AscendDbCommandTest, ImportSaysWhatItImportedAndWhatItPassedOver) {
  NPUSCOPE_REALDATA_OR_SKIP(src, std::string(kLevel1) + "/rank0_ascend_pt");
  const auto r = run_command(npuscope_cmd("import " + src + " -o " + out("r0.db")));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("(ascend_pytorch_profiler_db)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("539 tasks"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("table OVERLAP_ANALYSIS"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(out("r0.db")));
}

TEST_F(AscendDbCommandTest, AnalyzeTakesTheRankFolderItself) {
  NPUSCOPE_REALDATA_OR_SKIP(src, std::string(kLevel1) + "/rank0_ascend_pt");
  const std::string folder = copy(src, "rank0_ascend_pt");
  const auto a = run_command(npuscope_cmd("analyze " + folder + " --rules summary,step_time,top_ops"));
  ASSERT_EQ(a.status, 0) << a.output;
  EXPECT_NE(a.output.find("Ascend910B"), std::string::npos) << a.output;
  EXPECT_NE(a.output.find("Step time"), std::string::npos) << a.output;
  EXPECT_NE(a.output.find("102.11 ms"), std::string::npos) << a.output;  // Communication, as analysis.db says
  EXPECT_TRUE(fs::exists(folder + ".npuscope.db"));
}

TEST_F(AscendDbCommandTest, AnalyzeTakesAnMsprofDb) {
  NPUSCOPE_REALDATA_OR_SKIP(src, "msprof/msprof_0.db");
  const std::string db = copy(src, "msprof_0.db");
  const auto a = run_command(npuscope_cmd("analyze " + db + " --rules summary,top_ops"));
  ASSERT_EQ(a.status, 0) << a.output;
  EXPECT_NE(a.output.find("(msprof_db)"), std::string::npos) << a.output;
  EXPECT_NE(a.output.find("Ascend910B"), std::string::npos) << a.output;
}

TEST_F(AscendDbCommandTest, ClusterOfRankExportsReportsTheMissingRanksAndTheMatrix) {
  NPUSCOPE_REALDATA_OR_SKIP(src, kLevel1);
  const std::string job = copy(src, "job");
  const auto c = run_command(npuscope_cmd("cluster " + job));
  ASSERT_EQ(c.status, 0) << c.output;
  EXPECT_NE(c.output.find("World Size: 8"), std::string::npos) << c.output;
  EXPECT_NE(c.output.find("Ranks Analysed: 2"), std::string::npos) << c.output;
  EXPECT_NE(c.output.find("Missing Ranks: 2, 3, 4, 5, 6, 7"), std::string::npos) << c.output;
  EXPECT_NE(c.output.find("Mismatched Collectives: 0"), std::string::npos) << c.output;
  // analysis.db's CommAnalyzerMatrix (allreduce-total): rank 0 sent 61.21 MB (10^6 bytes) to each peer
  // over HCCS, 60.33 MB to rank 7.
  // (a matrix row: Src-Dst, Communicator, Transport Type, Transit Size(MB), ...)
  const auto has_row = [&](const std::string& link, const std::string& transport, const std::string& mb) {
    return std::regex_search(c.output, std::regex("\\n  " + link + " +\\S+ +" + transport + " +" + mb + " "));
  };
  EXPECT_TRUE(has_row("0-1", "HCCS", "61\\.21")) << c.output;
  EXPECT_TRUE(has_row("0-7", "HCCS", "60\\.33")) << c.output;
  EXPECT_TRUE(has_row("1-1", "LOCAL", "61\\.21")) << c.output;
  // Again: the cached imports are read, not taken as ranks of their own.
  const auto again = run_command(npuscope_cmd("cluster " + job));
  ASSERT_EQ(again.status, 0) << again.output;
  EXPECT_NE(again.output.find("Ranks Analysed: 2"), std::string::npos) << again.output;
  EXPECT_EQ(again.output.find("duplicate rank"), std::string::npos) << again.output;
}

TEST_F(AscendDbCommandTest, AForeignSqliteIsAnErrorNamingTheFile) {
  const std::string db = out("msprof_7.db");
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(h, "CREATE TABLE t(a); INSERT INTO t VALUES (1);", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(h);
  const auto r = run_command(npuscope_cmd("analyze " + db));
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("npuscope: error: " + db), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("STRING_IDS"), std::string::npos) << r.output;
}

}  // namespace

// `npuscope cluster`, called as a user would: the real binary on rank traces written by the collector.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analyzer/cluster_trace_util.h"
#include "cli_test_util.h"

using namespace npuscope::testing;
namespace fs = std::filesystem;

namespace {

class ClusterCommandTest : public RankTracesTest {
 protected:
  CommandResult cluster(const std::string& args) { return run_command(npuscope_cmd("cluster " + args)); }

  const fs::path traces_ = dir_ / "traces";
};

}  // namespace

TEST_F(ClusterCommandTest, TextNamesTheSlowRankAndTheMissingOne) {
  write_cluster_traces(traces_, {.compute_factor = {1, 1, 2, 1}, .ring = true, .skip = {3}});
  const CommandResult r = cluster(traces_.string());
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* text :
       {"Cluster", "Slow Ranks: 2 (Computing, Communication Wait)", "Missing Ranks: 3", "Missing and mismatched ranks",
        "missing rank", "Step trace time", "Communication matrix", "Top collectives", "Wait Time Ratio"}) {
    EXPECT_NE(r.output.find(text), std::string::npos) << text << "\n" << r.output;
  }
}

TEST_F(ClusterCommandTest, JsonHasMsprofAnalyzeKeys) {
  write_cluster_traces(traces_, {.allreduce = false, .ring = true});
  const CommandResult r = cluster(traces_.string() + " --format json -o " + (dir_ / "c.json").string());
  ASSERT_EQ(r.status, 0) << r.output;
  const auto doc = nlohmann::json::parse(read_file(dir_ / "c.json"));
  ASSERT_EQ(doc["cluster_communication_matrix"].size(), 4u);
  const auto& link = doc["cluster_communication_matrix"][0];
  EXPECT_EQ(link["Src-Dst"], "0-1");
  EXPECT_EQ(link["Transport Type"], "HCCS");
  EXPECT_EQ(link["Transit Bytes"], 3 << 20);
  EXPECT_DOUBLE_EQ(link["Transit Size(MB)"].get<double>(), (3 << 20) / 1e6);  // msprof's MB: 10^6 bytes
  EXPECT_TRUE(link.contains("Bandwidth(GB/s)"));
  EXPECT_EQ(doc["cluster_communication"].size(), 4u);
  EXPECT_TRUE(doc["cluster_communication"][0].contains("Wait Time Ratio"));
  EXPECT_EQ(doc["cluster_step_trace_time"].size(), 12u);
  EXPECT_EQ(doc["cluster_summary"]["World Size"], 4);
}

TEST_F(ClusterCommandTest, CsvWritesOneFilePerTable) {
  write_cluster_traces(traces_, {.compute_factor = {1, 2}});
  const CommandResult r = cluster(traces_.string() + " --format csv -o " + (dir_ / "csv").string());
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string steps = read_file(dir_ / "csv" / "cluster_step_trace_time.csv");
  EXPECT_EQ(steps.substr(0, steps.find('\n')),
            "Step,Type,Index,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Overlap(%)");
  for (const char* file :
       {"cluster_communication_matrix.csv", "cluster_slow_rank.csv", "cluster_rank_step_time.csv",
        "cluster_top_collectives.csv", "cluster_communication.csv", "cluster_problems.csv", "cluster_slow_link.csv"}) {
    EXPECT_TRUE(fs::exists(dir_ / "csv" / file)) << file;
  }
}

TEST_F(ClusterCommandTest, NoRankTraceIsAnError) {
  fs::create_directories(traces_);
  std::ofstream(traces_ / "x.db") << "not a database";
  const CommandResult r = cluster(traces_.string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("npuscope: error: no rank trace in " + traces_.string()), std::string::npos) << r.output;
  const CommandResult usage = cluster("");
  EXPECT_EQ(usage.status, 2) << usage.output;
  const CommandResult help = cluster("--help");
  EXPECT_EQ(help.status, 0) << help.output;
  EXPECT_NE(help.output.find("--threads"), std::string::npos) << help.output;
}

// Note [Tools over MPI]: an MPI launcher's processes load the MPI module (tests/comm runs the real
// `mpirun -np 2 npuscope cluster`); alone, under torchrun, or as a launcher's single process, npuscope
// cluster never loads it. The launcher is mimicked by its variables, and the module named by
// NPUSCOPE_MPI_MODULE is missing: the command fails at once when it needs the module and runs when not.
TEST_F(ClusterCommandTest, UnderAnMpiLauncherWithoutItsModuleItSaysWhatToDo) {
  write_cluster_traces(traces_, {});
  const std::string missing = (dir_ / "missing_module.so").string();
  const CommandResult r = run_command(
      "env -u RANK -u SLURM_PROCID -u PMI_RANK OMPI_COMM_WORLD_RANK=0 "
      "OMPI_COMM_WORLD_SIZE=2 NPUSCOPE_MPI_MODULE=" +
      missing + " " + npuscope_cmd("cluster " + traces_.string()));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("npuscope: error: an MPI launcher started this command with others, and the MPI module " +
                          missing + " cannot be loaded"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("install OpenMPI"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("or run the command without the launcher"), std::string::npos) << r.output;
}

TEST_F(ClusterCommandTest, ALibraryThatIsNotTheMpiModuleIsRefused) {
  write_cluster_traces(traces_, {});
  const CommandResult r = run_command(
      "env -u RANK -u SLURM_PROCID -u PMI_RANK OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2 "
      "NPUSCOPE_MPI_MODULE=libm.so.6 " +
      npuscope_cmd("cluster " + traces_.string()));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("npuscope: error: libm.so.6 is not the MPI module of this npuscope (it has no "
                          "npuscope_tool_scaleout_join_v1): install npuscope again"),
            std::string::npos)
      << r.output;
}

TEST_F(ClusterCommandTest, AloneUnderTorchrunOrAsALaunchersOnlyProcessItNeverLoadsTheMpiModule) {
  write_cluster_traces(traces_, {.compute_factor = {1, 1, 2, 1}});
  const std::string no_module = "NPUSCOPE_MPI_MODULE=" + (dir_ / "missing_module.so").string() + " ";
  const std::string no_launcher = "env -u OMPI_COMM_WORLD_RANK -u RANK -u SLURM_PROCID -u PMI_RANK " + no_module;
  for (const std::string& launcher : {std::string(""), std::string("RANK=0 WORLD_SIZE=2 "),
                                      std::string("OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=1 ")}) {
    const CommandResult r = run_command(no_launcher + launcher + npuscope_cmd("cluster " + traces_.string()));
    EXPECT_EQ(r.status, 0) << launcher << r.output;
    EXPECT_NE(r.output.find("Slow Ranks: 2"), std::string::npos) << launcher << r.output;
  }
}

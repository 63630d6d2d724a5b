// Which processes join MPI (Note [Tools over MPI] in npuscope/tool_scaleout/processes.h): only those
// an MPI launcher started with others. tests/cli/cluster_command_test.cpp checks what the command
// says when the module cannot be loaded; tests/comm runs it under the real mpirun.
#include <gtest/gtest.h>

#include <cstdlib>

#include "npuscope/tool_scaleout/processes.h"

namespace {

class JoinTest : public ::testing::Test {
 protected:
  // Each test starts with no launcher's variable set (CTest runs each in a process of its own).
  void SetUp() override {
    for (const char* v : {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "RANK", "WORLD_SIZE", "SLURM_PROCID",
                          "SLURM_NTASKS", "PMI_RANK", "PMI_SIZE"})
      unsetenv(v);
  }
  static void launch(const char* rank, const char* size, const char* processes) {
    setenv(rank, "0", 1);
    setenv(size, processes, 1);
  }
};

TEST_F(JoinTest, AProcessAloneDoesNotJoin) { EXPECT_FALSE(npuscope::tool_scaleout::launched_over_mpi()); }

TEST_F(JoinTest, MpirunSrunAndHydraWithSeveralProcessesJoin) {
  launch("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "2");
  EXPECT_TRUE(npuscope::tool_scaleout::launched_over_mpi());
  SetUp();
  launch("SLURM_PROCID", "SLURM_NTASKS", "4");
  EXPECT_TRUE(npuscope::tool_scaleout::launched_over_mpi());
  SetUp();
  launch("PMI_RANK", "PMI_SIZE", "3");
  EXPECT_TRUE(npuscope::tool_scaleout::launched_over_mpi());
}

TEST_F(JoinTest, ALaunchersOnlyProcessAndTorchrunsProcessesDoNotJoin) {
  launch("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "1");
  EXPECT_FALSE(npuscope::tool_scaleout::launched_over_mpi());
  SetUp();
  launch("RANK", "WORLD_SIZE", "2");  // torchrun: its processes meet over its store, not MPI
  EXPECT_FALSE(npuscope::tool_scaleout::launched_over_mpi());
  SetUp();
  setenv("OMPI_COMM_WORLD_RANK", "0", 1);  // a size the launcher did not say
  EXPECT_FALSE(npuscope::tool_scaleout::launched_over_mpi());
}

}  // namespace

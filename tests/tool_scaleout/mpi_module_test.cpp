// The MPI module (tool_scaleout/src/mpi_module.cpp): the one part of the tools that links libmpi,
// exporting the one entry its loader looks for (Note [Tools over MPI] in
// npuscope/tool_scaleout/processes.h). tests/cli/headless_cli_test.cpp checks that npuscope itself
// links no MPI library.
#include <gtest/gtest.h>

#include <string>

#include "cli_test_util.h"

using npuscope::testing::run_command;

TEST(MpiModuleTest, LinksLibmpiAndExportsItsEntry) {
  const auto needed = run_command("readelf -d --wide " + std::string(NPUSCOPE_MPI_MODULE));
  ASSERT_EQ(needed.status, 0) << needed.output;
  EXPECT_NE(needed.output.find("Shared library: [libmpi.so"), std::string::npos) << needed.output;
  // Of the symbols it defines, ours are the entry alone (libstdc++'s templates keep their default
  // visibility; everything of npuscope's is hidden).
  EXPECT_EQ(npuscope::testing::exported_npuscope_symbols(NPUSCOPE_MPI_MODULE), "npuscope_tool_scaleout_join_v1\n");
}

// The MPI module (tool_scaleout/src/mpi_module.cpp): the one part of the tools that links libmpi,
// exporting the one entry its loader looks for (Note [Tools over MPI] in
// npuscope/tool_scaleout/processes.h). tests/cli/headless_cli_test.cpp checks that npuscope itself
// links no MPI library.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "cli_test_util.h"

using npuscope::testing::run_command;

TEST(MpiModuleTest, LinksLibmpiAndExportsItsEntry) {
  const auto needed = run_command("readelf -d --wide " + std::string(NPUSCOPE_MPI_MODULE));
  ASSERT_EQ(needed.status, 0) << needed.output;
  EXPECT_NE(needed.output.find("Shared library: [libmpi.so"), std::string::npos) << needed.output;
  // Of the symbols it defines, ours are the entry alone (libstdc++'s templates keep their default
  // visibility; everything of npuscope's is hidden).
  const auto symbols = run_command("nm -D --defined-only " + std::string(NPUSCOPE_MPI_MODULE));
  ASSERT_EQ(symbols.status, 0) << symbols.output;
  std::istringstream lines(symbols.output);
  std::string line, ours;
  while (std::getline(lines, line))
    if (line.find("npuscope") != std::string::npos) ours += line.substr(line.rfind(' ') + 1) + "\n";
  EXPECT_EQ(ours, "npuscope_tool_scaleout_join_v1\n") << symbols.output;
}

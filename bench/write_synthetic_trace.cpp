// Writes the synthetic trace the analyzer, viewer and diff benches read (bench/synthetic_trace.h), to a
// file that stays, so that a single command can be timed or profiled on it by hand:
//
//   write_synthetic_trace OUT.db TASKS [--no-host]
//   perf record BUILD/cli/npuscope analyze OUT.db
#include <cstdio>
#include <cstdlib>
#include <string>

#include "synthetic_trace.h"

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4 || (argc == 4 && std::string(argv[3]) != "--no-host")) {
    std::fprintf(stderr, "usage: write_synthetic_trace OUT.db TASKS [--no-host]\n");
    return 2;
  }
  const long long tasks = std::atoll(argv[2]);
  if (tasks <= 0) {
    std::fprintf(stderr, "write_synthetic_trace: TASKS must be a positive number, got '%s'\n", argv[2]);
    return 2;
  }
  npuscope::bench::write_synthetic_trace(argv[1], tasks, argc == 3);
  return 0;
}

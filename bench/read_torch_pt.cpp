// Reads a torch.save file RUNS times with read_torch_pt (importer/src/torch_pt_file.h), for the .pt
// bench (bench/torch_pt_bench.py): the CPU time (user + sys) of each read, the file in the page cache,
// into one buffer (the first run pays for its page faults).
//
//   read_torch_pt FILE [RUNS]      prints: bytes seconds_of_run_1 seconds_of_run_2 ...
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "../importer/src/torch_pt_file.h"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: read_torch_pt FILE [RUNS]\n");
    return 2;
  }
  const int runs = argc == 3 ? std::atoi(argv[2]) : 1;
  std::size_t bytes = 0;
  npuscope::collector::DumpTensorData t;  // reused from run to run, as a comparison reuses its buffers
  try {
    for (int i = 0; i < runs; ++i) {
      const std::clock_t start = std::clock();
      npuscope::importer::read_torch_pt(argv[1], t);
      const double s = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
      if (i == 0) std::printf("%zu", t.bytes.size());
      bytes = t.bytes.size();
      std::printf(" %.6f", s);
    }
  } catch (const npuscope::collector::MsprobeDumpError& e) {
    std::fprintf(stderr, "read_torch_pt: %s\n", e.what());
    return 1;
  }
  std::printf("\n");
  return bytes > 0 ? 0 : 1;
}

// Reads a Chrome-trace JSON file's events and nothing more (importer/src/chrome_events.h, what every
// JSON importer reads through), for the import bench (bench/import_bench.py): the JSON reading's
// share of `npuscope import`, beside the whole import (mapping and the trace written).
//
//   read_chrome_events TRACE(.json|.json.gz)      prints: events bytes cpu_seconds
#include <cstdio>
#include <ctime>

#include "../importer/src/chrome_events.h"
#include "npuscope/importer/import.h"

int main(int argc, char** argv) {
  using namespace npuscope::importer;
  if (argc != 2) {
    std::fprintf(stderr, "usage: read_chrome_events TRACE\n");
    return 2;
  }
  ChromeHandlers handlers;
  std::size_t args = 0;  // touched, so that the events are looked at
  handlers.event = [&](const ChromeEvent& e) { args += e.args.size(); };
  try {
    const std::clock_t start = std::clock();
    const ChromeStreamResult r = stream_chrome_events(argv[1], handlers);
    const double cpu = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
    std::printf("%lld %lld %.6f %zu\n", static_cast<long long>(r.events), static_cast<long long>(r.bytes), cpu, args);
  } catch (const ImportError& e) {
    std::fprintf(stderr, "read_chrome_events: %s\n", e.what());
    return 1;
  }
  return 0;
}

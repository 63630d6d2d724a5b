// Reads a trace through the installed SDK's static libraries (collector, analyzer) and prints one
// line per op type: "<op type> <task count>".
#include <cstdio>
#include <exception>

#include "npuscope/analyzer/analyze.h"
#include "npuscope/collector/op_statistic.h"
#include "npuscope/collector/trace_reader.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: trace_stats TRACE.db\n");
    return 2;
  }
  try {
    const auto trace = npuscope::collector::TraceReader::open(argv[1]);
    // The analyzer reports the collector's op statistics as one of its tables.
    if (npuscope::analyzer::analyze(*trace).find("op_statistics") == nullptr) {
      std::fprintf(stderr, "trace_stats: the analysis has no op_statistics table\n");
      return 1;
    }
    for (const auto& op : npuscope::collector::op_statistic(*trace)) {
      std::printf("%s %lld\n", op.op_type.c_str(), static_cast<long long>(op.count));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "trace_stats: error: %s\n", e.what());
    return 1;
  }
  return 0;
}

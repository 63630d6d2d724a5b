#include "open_trace.h"

#include <cstdio>

#include "npuscope/collector/trace_recovery.h"

namespace npuscope::cli {

std::string recover_trace_path(const std::string& path) {
  const collector::TraceRecovery r = collector::recover_trace(path);
  if (r.recovered) std::fprintf(stderr, "npuscope: %s\n", collector::describe(r).c_str());
  return r.trace;
}

std::unique_ptr<collector::TraceReader> open_trace(const std::string& path, const collector::ReaderOptions& options) {
  return collector::TraceReader::open(recover_trace_path(path), options);
}

}  // namespace npuscope::cli

#include "open_trace.h"

#include <cstdio>

#include "import_report.h"
#include "npuscope/collector/trace_recovery.h"
#include "npuscope/importer/import.h"

namespace npuscope::cli {

std::string recover_trace_path(const std::string& path) {
  if (const auto source = importer::detect(path)) {  // a real profile: its cached import
    const importer::CachedTrace cached = importer::cached_import(*source);
    if (cached.report) {
      print_import(stderr, *source, cached.path, *cached.report, false);
    } else {
      std::fprintf(stderr, "npuscope: reading %s, imported from %s\n", cached.path.c_str(), source->path.c_str());
    }
    return cached.path;
  }
  const collector::TraceRecovery r = collector::recover_trace(path);
  if (r.recovered) std::fprintf(stderr, "npuscope: %s\n", collector::describe(r).c_str());
  return r.trace;
}

std::unique_ptr<collector::TraceReader> open_trace(const std::string& path, const collector::ReaderOptions& options) {
  const std::string trace = recover_trace_path(path);
  try {
    return collector::TraceReader::open(trace, options);
  } catch (const collector::NotADatabaseError& e) {
    // Not a profile either (recover_trace_path asked the importer): say what a command does read
    // (a lone op_summary.csv, a notes file).
    throw collector::TraceError(std::string(e.what()) +
                                ", nor a profile npuscope imports (`npuscope import --help` lists those it reads)");
  }
}

}  // namespace npuscope::cli

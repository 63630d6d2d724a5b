#include "open_trace.h"

#include <cstdio>
#include <cstring>
#include <fstream>

#include "import_report.h"
#include "npuscope/collector/trace_recovery.h"
#include "npuscope/importer/import.h"

namespace npuscope::cli {
namespace {

// A file that is neither a profile the importer knows nor an SQLite database (a lone op_summary.csv,
// a notes file): the error says what a command does read, not only what the file is not.
void refuse_unknown_file(const std::string& path) {
  static constexpr char kSqliteMagic[] = "SQLite format 3";  // the first 16 bytes, NUL included
  std::ifstream in(path, std::ios::binary);
  char header[sizeof kSqliteMagic] = {};
  if (!in.read(header, sizeof header) && in.gcount() == 0) return;  // missing or empty: the reader says
  if (std::memcmp(header, kSqliteMagic, sizeof header) == 0) return;
  throw collector::TraceError(path +
                              ": not an npuscope trace (not an SQLite file), nor a profile npuscope imports "
                              "(`npuscope import --help` lists those it reads)");
}

}  // namespace

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
  refuse_unknown_file(r.trace);  // the trace a spool's path names, or the file given
  return r.trace;
}

std::unique_ptr<collector::TraceReader> open_trace(const std::string& path, const collector::ReaderOptions& options) {
  return collector::TraceReader::open(recover_trace_path(path), options);
}

}  // namespace npuscope::cli

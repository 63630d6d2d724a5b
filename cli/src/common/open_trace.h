// Opening the trace a command reads: recovered first if a killed `npuscope run` left only its spool
// (Note [Recovering a killed run] in npuscope/collector/trace_recovery.h), imported first if it is a
// real profile (Note [Importing a source] in npuscope/importer/import.h).
#pragma once

#include <memory>
#include <string>

#include "npuscope/collector/trace_reader.h"

namespace npuscope::cli {

// The trace to read for `path`: a trace; its spool OUT.db.spool, after recovering it; or a real
// profile (importer::detect), through its cached import. A recovery or an import is reported on
// stderr in one line ("npuscope: recovered ...", "npuscope: imported ..."). Throws TraceError,
// importer::ImportError.
std::string recover_trace_path(const std::string& path);

// TraceReader::open of recover_trace_path(path).
std::unique_ptr<collector::TraceReader> open_trace(const std::string& path, const collector::ReaderOptions& options);

}  // namespace npuscope::cli

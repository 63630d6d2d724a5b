// Real profiles in: the sources npuscope imports into an ordinary trace, so that every tool reads
// them unchanged (DESIGN.md "Real data"; docs/import.md has each source's mapping).
//
// Note [Importing a source]
// A source is what a user points a command at: a file or a folder another tool wrote (an Ascend
// PyTorch Profiler folder, an msprof output, a Kineto trace, ...). detect() names its format from
// what is on disk (never from a flag); import_source() streams it into a TraceWriter through one
// importer per format (src/formats.cpp lists them), in bounded memory whatever its size. What an
// importer passes over is counted in the trace's UNMAPPED table (never dropped silently); a source
// cut short (a killed profiler) imports what is there and the trace is marked incomplete.
// cached_import() is what every command calls with a path that is not an npuscope trace: the
// source is imported once, to a trace beside it (or under $TMPDIR when that is not writable), and
// imported again only when the source changed or another npuscope version made the cached trace.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "npuscope/collector/trace_writer.h"

namespace npuscope::importer {

// A source that cannot be imported: the message names the file and what is wrong with it.
class ImportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// X(enumerator, name (META `source`), what it is)
#define NPUSCOPE_IMPORT_FORMATS(X)                                                                                \
  X(kAscendPtDb, "ascend_pytorch_profiler_db",                                                                    \
    "Ascend PyTorch Profiler, db export: ascend_pytorch_profiler_{rank}.db (+ analysis.db)")                      \
  X(kAscendPtText, "ascend_pytorch_profiler_text",                                                                \
    "Ascend PyTorch Profiler, text export: ASCEND_PROFILER_OUTPUT/ trace_view.json, kernel_details.csv, ...")     \
  X(kMsprofDb, "msprof_db", "msprof's database export: msprof_*.db")                                              \
  X(kMsprofFolder, "msprof_folder", "an msprof PROF_* folder: mindstudio_profiler_output/ or device_N/timeline/") \
  X(kChromeJson, "ascend_chrome_json", "a bare trace_view.json or msprof_*.json (Chrome events)")                 \
  X(kKineto, "kineto", "a Kineto / torch.profiler trace: *.json or *.json.gz")

enum class Format : std::uint8_t {
#define NPUSCOPE_FORMAT_ENUM(e, name, doc) e,
  NPUSCOPE_IMPORT_FORMATS(NPUSCOPE_FORMAT_ENUM)
#undef NPUSCOPE_FORMAT_ENUM
};
std::string_view format_name(Format f);
std::string_view format_doc(Format f);

// A source found on disk.
struct Source {
  Format format;
  std::string path;  // what the user named: the file, or the folder (normalised: no trailing '/')
  // The files the importer reads, in the order it reads them (the rest of a folder is ignored).
  std::vector<std::string> files;
};

// The format of `path` (a file or a folder), or nullopt when it is none npuscope imports (an
// npuscope trace or spool among them). Looks at names and first bytes only: cheap to call on every
// path a command is given. Throws ImportError for a path that is recognisably a source but broken
// (an *_ascend_pt folder without ASCEND_PROFILER_OUTPUT nor a db, ...), naming what is missing.
std::optional<Source> detect(const std::string& path);

struct ImportOptions {
  // Called now and then with (bytes of the source read, bytes in all): a progress line.
  std::function<void(std::int64_t, std::int64_t)> progress;
};

struct Unmapped {
  std::string source;  // file
  std::string what;    // "event cat=Overlap Analysis", "column aic_l2_hit_rate", ...
  std::int64_t count = 0;
};

struct ImportReport {
  Format format{};
  std::int64_t tasks = 0, host_ops = 0, api_calls = 0, rows = 0;  // rows: every table's
  bool incomplete = false;  // the source was cut short (a killed profiler): what was there is in
  std::vector<Unmapped> unmapped;
  std::vector<std::string> notes;  // what a user should know (a missing optional file, ...)
};

// Imports `source` into `out` and finalizes it (complete, or incomplete when the source was cut
// short). Throws ImportError (the source), collector::TraceError (the output).
ImportReport import_source(const Source& source, collector::TraceWriter& out, const ImportOptions& options = {});

// Imports `source` into a new trace file `trace` (written under a temporary name, renamed when
// done: a killed import leaves no half trace). `overwrite`: replace an existing file.
ImportReport import_to_file(const Source& source, const std::string& trace, bool overwrite,
                            const ImportOptions& options = {});

struct CachedTrace {
  std::string path;                    // the trace to open
  std::optional<ImportReport> report;  // set when it was imported now (not taken from the cache)
};
// Where the cached trace of a source lives: `<source>.npuscope.db` beside it when its folder is
// writable both by access() and by its mode (root may write into an r-x folder, and must not), else
// under $TMPDIR/npuscope-imports (the name keyed by the source's absolute path).
std::string cache_path_of(const Source& source);
// The trace of `source`, imported now unless a cached one is up to date (newer than every file of
// the source, and written by this npuscope version).
CachedTrace cached_import(const Source& source, const ImportOptions& options = {});

}  // namespace npuscope::importer

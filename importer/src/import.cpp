// import_source and the cache of imported traces: Note [Importing a source] in import.h.
#include "npuscope/importer/import.h"

#include <unistd.h>

#include <filesystem>
#include <functional>
#include <system_error>

#include "formats.h"
#include "import_sink.h"
#include "npuscope/collector/trace_reader.h"

#ifndef NPUSCOPE_VERSION
#define NPUSCOPE_VERSION "unknown"
#endif

namespace npuscope::importer {
namespace fs = std::filesystem;

namespace {

struct FormatInfo {
  std::string_view name, doc;
};
constexpr FormatInfo kFormats[] = {
#define NPUSCOPE_FORMAT_INFO(e, name, doc) {name, doc},
    NPUSCOPE_IMPORT_FORMATS(NPUSCOPE_FORMAT_INFO)
#undef NPUSCOPE_FORMAT_INFO
};

const FormatImporter& importer_of(Format f) {
  for (const FormatImporter& i : format_importers()) {
    if (i.format == f) return i;
  }
  throw ImportError(std::string("no importer of ") + std::string(format_name(f)) + " in this build");
}

// The newest modification time of the source's files (the folder itself for a folder without files).
fs::file_time_type newest_of(const Source& source) {
  std::error_code ec;
  fs::file_time_type newest = fs::last_write_time(source.path, ec);
  for (const std::string& f : source.files) {
    const auto t = fs::last_write_time(f, ec);
    if (!ec && t > newest) newest = t;
  }
  return newest;
}

// Whether to write beside the source: the directory lets us write and its mode says it is meant to be
// written. root passes access(W_OK) on a read-only (r-x) folder, and must not litter a shared,
// read-only data tree with cached imports.
bool writable_dir(const fs::path& dir) {
  std::error_code ec;
  const fs::perms p = fs::status(dir, ec).permissions();
  constexpr fs::perms kAnyWrite = fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write;
  return !ec && (p & kAnyWrite) != fs::perms::none && ::access(dir.c_str(), W_OK) == 0;
}

// The cached trace still stands for the source: made by this version, from this source, after its
// files last changed, and complete (or as complete as the source was).
bool cache_is_current(const std::string& cache, const Source& source) {
  std::error_code ec;
  const auto cached = fs::last_write_time(cache, ec);
  if (ec || cached < newest_of(source)) return false;
  try {
    const auto reader = collector::TraceReader::open(cache, {.verify = false});
    return reader->meta("npuscope_version") == NPUSCOPE_VERSION &&
           reader->meta(std::string(collector::kMetaSourcePath)) == fs::absolute(source.path).string();
  } catch (const collector::TraceError&) {
    return false;
  }
}

}  // namespace

std::string_view format_name(Format f) { return kFormats[static_cast<std::size_t>(f)].name; }
std::string_view format_doc(Format f) { return kFormats[static_cast<std::size_t>(f)].doc; }

std::optional<Source> detect(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  std::error_code ec;
  if (!fs::exists(p, ec)) return std::nullopt;
  for (const FormatImporter& i : format_importers()) {
    if (auto source = i.detect(fs::path(p))) {
      source->path = p;
      return source;
    }
  }
  return std::nullopt;
}

ImportReport import_source(const Source& source, collector::TraceWriter& out, const ImportOptions& options) {
  (void)options;
  ImportSink sink(out, source);
  sink.meta(collector::kMetaSource, format_name(source.format));
  sink.meta(collector::kMetaSourcePath, fs::absolute(source.path).string());
  importer_of(source.format).import(source, sink);
  ImportReport report = sink.finish();
  out.finalize(report.incomplete ? collector::TraceStatus::kIncomplete : collector::TraceStatus::kComplete);
  return report;
}

ImportReport import_to_file(const Source& source, const std::string& trace, bool overwrite,
                            const ImportOptions& options) {
  std::error_code ec;
  if (!overwrite && fs::exists(trace, ec)) {
    throw collector::TraceError(trace + " already exists: remove it, choose another output file, or --force");
  }
  const std::string partial = trace + ".importing." + std::to_string(::getpid());
  fs::remove(partial, ec);
  ImportReport report;
  try {
    auto writer = collector::TraceWriter::create(partial, {.overwrite = true, .durable = false});
    report = import_source(source, *writer, options);
  } catch (...) {
    fs::remove(partial, ec);
    throw;
  }
  fs::rename(partial, trace, ec);
  if (ec) {
    fs::remove(partial, ec);
    throw collector::TraceError("cannot write " + trace + ": " + ec.message());
  }
  return report;
}

std::string cache_path_of(const Source& source) {
  const fs::path src = fs::absolute(source.path);
  const fs::path beside = src.string() + ".npuscope.db";
  if (writable_dir(src.parent_path())) return beside.string();
  const fs::path dir = fs::temp_directory_path() / "npuscope-imports";
  std::error_code ec;
  fs::create_directories(dir, ec);
  const std::size_t key = std::hash<std::string>{}(src.string());
  return (dir / (src.filename().string() + "." + std::to_string(key) + ".npuscope.db")).string();
}

CachedTrace cached_import(const Source& source, const ImportOptions& options) {
  const std::string cache = cache_path_of(source);
  if (cache_is_current(cache, source)) return {cache, std::nullopt};
  ImportReport report = import_to_file(source, cache, true, options);
  return {cache, std::move(report)};
}

}  // namespace npuscope::importer

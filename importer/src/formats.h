// The importers, one per format (Note [Importing a source] in npuscope/importer/import.h).
#pragma once

#include <filesystem>
#include <optional>
#include <span>

#include "import_sink.h"
#include "npuscope/importer/import.h"

namespace npuscope::importer {

struct FormatImporter {
  Format format;
  // The source at `path` if it is of this format (a cheap look at names and first bytes), else
  // nullopt; ImportError for one that is recognisably of it but broken.
  std::optional<Source> (*detect)(const std::filesystem::path& path);
  // Streams the source into `sink` (META, rows, what is not mapped); the caller finishes.
  void (*import)(const Source& source, ImportSink& sink);
};

// Every importer, in the order detect() asks them (the more specific first).
std::span<const FormatImporter> format_importers();

}  // namespace npuscope::importer

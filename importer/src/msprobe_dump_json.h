// One msprobe dump.json into collector::MsprobeDump's entries and values: the format's reading,
// without the folders around it (msprobe_dump_reader.cpp) or stack.json and construct.json
// (msprobe_side_files.h). See Note [Reading dump.json] in msprobe_dump_json.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <simdjson.h>

#include "npuscope/collector/msprobe_dump.h"

namespace npuscope::importer::msprobe {

// What was read but not understood, counted by kind ("unknown entry key 'foo'"), in the order first
// seen; a handful of distinct kinds in any dump, so a flat list.
class NoteCounts {
 public:
  void add(std::string_view what, std::int64_t n = 1);
  // One line per kind, "{count} {what}", appended to `notes`.
  void render(std::vector<std::string>& notes) const;

 private:
  std::vector<std::pair<std::string, std::int64_t>> counts_;
};

// Note [One buffer for every JSON file of a dump]
// A JSON file of a dump (dump.json, stack.json, construct.json) read whole into a buffer, and the
// simdjson document over it. One JsonFiles reads every file of every dump in turn, reusing its
// buffer and its parser's: their memory is allocated, and faulted in, once for the largest file
// (for a 150 MB dump.json, page faults were a fifth of the reading time when each file had its own).
class JsonFiles {
 public:
  // The root of the JSON file at `path`, valid until the next call. The text may be edited in
  // place: Note [NaN and Infinity in msprobe's JSON]. Throws ImportError naming the file when it
  // cannot be read, and the byte where the JSON is malformed or cut short.
  simdjson::dom::element parse(const std::string& path);

 private:
  void load(const std::string& path);
  // The parser's arrays for a document of `bytes`, in huge pages (Note [Huge pages for the JSON parser]).
  void allocate_parser(std::size_t bytes);

  std::unique_ptr<char[]> buffer_;
  std::size_t capacity_ = 0, size_ = 0;
  simdjson::dom::parser parser_;
};

// dump.json's text into `dump` (task, level, framework, entries with their values; notes for what
// was not understood); returns its dump_data_dir ("" when null). Throws ImportError naming the file when the JSON is
// malformed or truncated (with the byte) or when it is no msprobe dump.json (saying what it lacks).
std::string read_dump_json(JsonFiles& files, const std::string& path, collector::MsprobeDump& dump, NoteCounts& notes);

// Python's json writes NaN and +-Infinity as bare tokens, which Note [NaN and Infinity in msprobe's
// JSON] turns into these strings of the same length before simdjson reads the text again.
inline constexpr std::string_view kNanToken = "N", kInfToken = "Infini", kMinusInfToken = "-Infini";

}  // namespace npuscope::importer::msprobe

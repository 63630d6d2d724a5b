// The files of a source on disk, as every importer's detect() looks at them: never throwing (a
// path that cannot be read is simply not that format).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace npuscope::importer {

bool is_dir(const std::filesystem::path& p);
bool is_file(const std::filesystem::path& p);

// The regular files of `dir` whose name starts with `prefix` and ends with `suffix`, sorted by name.
std::vector<std::string> files_like(const std::filesystem::path& dir, std::string_view prefix, std::string_view suffix);

}  // namespace npuscope::importer

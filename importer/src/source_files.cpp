#include "source_files.h"

#include <algorithm>
#include <system_error>

namespace npuscope::importer {
namespace fs = std::filesystem;

bool is_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

std::vector<std::string> files_like(const fs::path& dir, std::string_view prefix, std::string_view suffix) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.starts_with(prefix) && name.ends_with(suffix) && is_file(it->path())) out.push_back(it->path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace npuscope::importer

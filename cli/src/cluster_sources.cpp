// Note [A cluster of real profiles] in cluster_sources.h.
#include "cluster_sources.h"

#include <stdlib.h>

#include <algorithm>
#include <set>
#include <system_error>
#include <vector>

#include "npuscope/importer/import.h"
#include "open_trace.h"

namespace npuscope::cli {
namespace fs = std::filesystem;

ClusterDir::ClusterDir(const std::string& dir) : path_(dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return;  // the analysis says what is wrong with it
  std::vector<fs::path> entries;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) entries.push_back(it->path());
  std::sort(entries.begin(), entries.end());
  std::vector<std::pair<std::string, fs::path>> links;  // name in the link directory, target
  std::set<fs::path> imported;                          // the cached traces of DIR's sources
  for (const fs::path& e : entries) {
    if (!importer::detect(e.string())) continue;
    const fs::path trace = fs::absolute(recover_trace_path(e.string()));
    imported.insert(fs::weakly_canonical(trace, ec));
    links.emplace_back(e.filename().string() + ".db", trace);
  }
  if (links.empty()) return;
  for (const fs::path& e : entries) {
    if (e.extension() != ".db" || !fs::is_regular_file(e, ec) || importer::detect(e.string())) continue;
    if (imported.contains(fs::weakly_canonical(fs::absolute(e), ec))) continue;
    links.emplace_back(e.filename().string(), fs::absolute(e));
  }
  std::string pattern = (fs::temp_directory_path() / "npuscope-cluster-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::system_error(errno, std::generic_category(), "mkdtemp");
  temp_ = pattern;
  for (const auto& [name, target] : links) fs::create_symlink(target, temp_ / name);
  path_ = temp_.string();
}

ClusterDir::~ClusterDir() {
  if (temp_.empty()) return;
  std::error_code ec;
  fs::remove_all(temp_, ec);
}

}  // namespace npuscope::cli

// Note [A cluster of real profiles] in cluster_sources.h.
#include "cluster_sources.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <system_error>

#include "import_report.h"
#include "npuscope/importer/import.h"

namespace npuscope::cli {
namespace fs = std::filesystem;

ClusterInputs cluster_inputs(const std::string& dir) {
  ClusterInputs in;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    in.traces = analyzer::list_rank_traces(dir);  // its error
    return in;
  }
  std::vector<fs::path> entries;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) entries.push_back(it->path());
  std::sort(entries.begin(), entries.end());
  std::set<fs::path> imported;  // the cached traces of DIR's sources
  for (const fs::path& e : entries) {
    const auto source = importer::detect(e.string());
    if (!source) continue;
    try {
      const importer::CachedTrace cached = importer::cached_import(*source);
      if (cached.report) print_import(stderr, *source, cached.path, *cached.report, false);
      in.traces.emplace_back(cached.path);
      imported.insert(fs::weakly_canonical(cached.path, ec));
    } catch (const std::exception& x) {  // reported with the ranks; the others go on
      in.unreadable.push_back(analyzer::RankSummary{analyzer::unreadable_rank_file(e.string(), x.what())});
    }
  }
  for (const fs::path& t : analyzer::list_rank_traces(dir)) {
    if (imported.contains(fs::weakly_canonical(t, ec)) || importer::detect(t.string())) continue;
    in.traces.push_back(t);
  }
  return in;
}

analyzer::ClusterReport analyze_cluster_inputs(const std::string& dir, ClusterInputs inputs,
                                               const analyzer::ClusterOptions& options) {
  const std::size_t files = inputs.files();
  std::vector<analyzer::RankSummary> summaries = analyzer::summarize_ranks(inputs.traces, options.threads);
  for (analyzer::RankSummary& u : inputs.unreadable) summaries.push_back(std::move(u));
  return analyzer::merge_directory(dir, files, std::move(summaries), options);
}

}  // namespace npuscope::cli

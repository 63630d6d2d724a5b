// analyze_cluster(): the one-machine driver of the cluster analysis (Note [Cluster analysis as map
// and merge] in cluster.h): the directory's rank traces (rank_set.h) summarized on a pool of threads,
// then merged.
#include <algorithm>
#include <atomic>
#include <thread>

#include "npuscope/analyzer/cluster.h"

namespace npuscope::analyzer {
namespace fs = std::filesystem;

// Each slot is written by the one worker that took its index: no lock.
std::vector<RankSummary> summarize_ranks(const std::vector<fs::path>& files, int threads) {
  std::vector<RankSummary> out(files.size());
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < files.size(); i = next++) {
      try {
        out[i] = summarize_rank(files[i]);
      } catch (const std::exception& e) {  // not a trace, or damaged: reported, the others go on
        out[i] = RankSummary{unreadable_rank_file(files[i].string(), e.what())};
      }
    }
  };
  const int hardware = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const int n = std::clamp(threads > 0 ? threads : hardware, 1, std::max(1, static_cast<int>(files.size())));
  std::vector<std::jthread> pool;
  for (int t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  return out;
}

ClusterReport merge_directory(const fs::path& dir, std::size_t files, std::vector<RankSummary> summaries,
                              const ClusterOptions& options) {
  if (std::none_of(summaries.begin(), summaries.end(), [](const RankSummary& s) { return s.rank >= 0; })) {
    throw RankSetError("no rank trace in " + dir.string() + " (" + std::to_string(files) +
                       " .db files): it needs the traces of a multi-rank job, one per rank, each with its rank in "
                       "META (mpirun -np N npuscope run -o DIR/rank_%r.db -- PROGRAM)");
  }
  return merge(std::move(summaries), options);
}

ClusterReport analyze_cluster(const fs::path& dir, const ClusterOptions& options) {
  const std::vector<fs::path> files = list_rank_traces(dir);
  return merge_directory(dir, files.size(), summarize_ranks(files, options.threads), options);
}

}  // namespace npuscope::analyzer

// analyze_cluster(): the one-machine driver of the cluster analysis (Note [Cluster analysis as map
// and merge] in cluster.h): the directory's *.db files summarized on a pool of threads, then merged.
#include <algorithm>
#include <atomic>
#include <optional>
#include <thread>

#include "npuscope/analyzer/cluster.h"
#include "npuscope/collector/trace_error.h"

namespace npuscope::analyzer {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> trace_files(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw ClusterError(dir.string() +
                       " is not a directory: give the directory holding one trace per rank "
                       "(npuscope run -o DIR/rank_%r.db)");
  }
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".db" && e.is_regular_file(ec)) files.push_back(e.path());
  }
  if (ec) throw ClusterError("cannot list " + dir.string() + ": " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

// One slot per file, each written by the one worker that took its index: no lock.
struct Slot {
  std::optional<RankSummary> summary;
  std::string error;
};

void summarize_all(const std::vector<fs::path>& files, int threads, std::vector<Slot>& slots) {
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < files.size(); i = next++) {
      try {
        slots[i].summary = summarize_rank(files[i]);
      } catch (const collector::TraceError& e) {
        slots[i].error = e.what();
      } catch (const std::exception& e) {  // e.g. out of memory on one huge file: the others go on
        slots[i].error = e.what();
      }
    }
  };
  std::vector<std::jthread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
}

}  // namespace

ClusterReport analyze_cluster(const fs::path& dir, const ClusterOptions& options) {
  const std::vector<fs::path> files = trace_files(dir);
  std::vector<Slot> slots(files.size());
  const int hardware = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const int threads =
      std::clamp(options.threads > 0 ? options.threads : hardware, 1, std::max(1, static_cast<int>(files.size())));
  summarize_all(files, threads, slots);

  std::vector<RankSummary> summaries;
  std::vector<ClusterProblem> problems;
  bool any_rank = false;
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (slots[i].summary) {
      any_rank = any_rank || slots[i].summary->rank >= 0;
      summaries.push_back(std::move(*slots[i].summary));
    } else {
      problems.push_back({"not a trace", -1, files[i].string(), slots[i].error});
    }
  }
  if (!any_rank) {
    throw ClusterError("no rank trace in " + dir.string() + " (" + std::to_string(files.size()) +
                       " .db files): write one trace per rank with npuscope run -o DIR/rank_%r.db under mpirun or "
                       "torchrun");
  }
  return merge(std::move(summaries), options, std::move(problems));
}

}  // namespace npuscope::analyzer

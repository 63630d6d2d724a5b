#include "cluster_over_mpi.h"

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace npuscope::cli {

std::optional<analyzer::ClusterReport> analyze_cluster_over_mpi(tool_scaleout::Processes& mpi, const std::string& dir,
                                                                ClusterInputs inputs,
                                                                const analyzer::ClusterOptions& options) {
  const std::vector<std::filesystem::path>& files = inputs.traces;
  std::vector<std::filesystem::path> share;
  for (std::size_t i = static_cast<std::size_t>(mpi.rank()); i < files.size();
       i += static_cast<std::size_t>(mpi.size()))
    share.push_back(files[i]);
  std::string mine;
  for (const analyzer::RankSummary& s : analyzer::summarize_ranks(share, options.threads)) {
    const std::string bytes = analyzer::serialize(s);
    const std::uint64_t n = bytes.size();
    mine.append(reinterpret_cast<const char*>(&n), sizeof n);
    mine += bytes;
  }
  const std::vector<std::string> all = mpi.gather(mine);
  if (mpi.rank() != 0) return std::nullopt;
  std::vector<analyzer::RankSummary> summaries;
  for (analyzer::RankSummary& u : inputs.unreadable) summaries.push_back(std::move(u));
  for (const std::string& blob : all) {
    std::string_view rest = blob;
    while (rest.size() >= sizeof(std::uint64_t)) {
      std::uint64_t n = 0;
      std::memcpy(&n, rest.data(), sizeof n);
      rest.remove_prefix(sizeof n);
      if (n > rest.size()) throw analyzer::SummaryFormatError("a process sent a summary cut short");
      summaries.push_back(analyzer::deserialize(rest.substr(0, n)));
      rest.remove_prefix(n);
    }
  }
  return analyzer::merge_directory(dir, inputs.files(), std::move(summaries), options);
}

}  // namespace npuscope::cli

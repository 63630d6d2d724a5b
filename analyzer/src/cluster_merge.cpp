// The reduce step of the cluster analysis (Note [Cluster analysis as map and merge] in cluster.h):
// which ranks are there (the rank set: Note [Rank set] in rank_set.h), then each part of the report.
#include "cluster_merge.h"

namespace npuscope::analyzer {
namespace cluster_detail {

std::string kind_name(std::int32_t kind) { return collector::stored_name<CollectiveKind>(kind, "kind"); }
std::string transport_name(std::int32_t transport) {
  return collector::stored_name<LinkTransport>(transport, "transport");
}

}  // namespace cluster_detail

ClusterReport merge(std::vector<RankSummary> summaries, const ClusterOptions& options) {
  std::vector<const RankFile*> files;
  for (const RankSummary& s : summaries) files.push_back(&s);
  RankSelection set = select_ranks(files);
  ClusterReport report{.world_size = set.world_size, .problems = std::move(set.problems)};
  std::vector<RankSummary> ranks;  // one per rank, ascending
  for (const std::size_t i : set.kept) {
    report.ranks.push_back(summaries[i].rank);
    ranks.push_back(std::move(summaries[i]));
  }
  for (const RankSummary& s : ranks) {
    for (const StepTimes& t : s.steps) report.step_trace.push_back({s.rank, t});
  }
  cluster_detail::slow_ranks(ranks, options, report);
  cluster_detail::links(ranks, options, report);
  cluster_detail::op_matrix(ranks, report);
  cluster_detail::collectives(ranks, options, report);
  return report;
}

}  // namespace npuscope::analyzer

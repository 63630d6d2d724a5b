// The reduce step of the cluster analysis (Note [Cluster analysis as map and merge] in cluster.h):
// which ranks are there (missing, duplicated, unranked traces reported), then each part of the report.
#include <algorithm>
#include <set>

#include "cluster_merge.h"

namespace npuscope::analyzer {
namespace cluster_detail {

std::string kind_name(std::int32_t kind) { return collector::stored_name<CollectiveKind>(kind, "kind"); }
std::string transport_name(std::int32_t transport) {
  return collector::stored_name<LinkTransport>(transport, "transport");
}

}  // namespace cluster_detail

namespace {

// One summary per rank, ascending; the others reported.
std::vector<RankSummary> ranked(std::vector<RankSummary> summaries, ClusterReport& report) {
  std::sort(summaries.begin(), summaries.end(), [](const RankSummary& a, const RankSummary& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.path < b.path;
  });
  std::vector<RankSummary> kept;
  for (RankSummary& s : summaries) {
    if (!s.error.empty()) {
      report.problems.push_back({"not a trace", -1, s.path, s.error});
    } else if (s.rank < 0) {
      report.problems.push_back(
          {"no rank", -1, s.path, "a trace without a rank in META: not a rank of a multi-rank job"});
    } else if (!kept.empty() && kept.back().rank == s.rank) {
      report.problems.push_back(
          {"duplicate rank", s.rank, s.path,
           "rank " + std::to_string(s.rank) + " is already " + kept.back().path + ": this file is left out"});
    } else {
      kept.push_back(std::move(s));
    }
  }
  return kept;
}

void world(const std::vector<RankSummary>& ranks, ClusterReport& report) {
  std::set<int> sizes;
  for (const RankSummary& s : ranks) {
    report.ranks.push_back(s.rank);
    if (s.world_size > 0) sizes.insert(s.world_size);
  }
  report.world_size = sizes.empty() ? 0 : *sizes.rbegin();
  if (sizes.size() > 1) {
    std::string list;
    for (const int n : sizes) list += (list.empty() ? "" : ", ") + std::to_string(n);
    report.problems.push_back({"world size", -1, "",
                               "the traces disagree on the world size (" + list +
                                   "): they may come from different jobs; " + std::to_string(report.world_size) +
                                   " is used"});
  }
  const std::set<int> found(report.ranks.begin(), report.ranks.end());
  for (int r = 0; r < report.world_size; ++r) {
    if (!found.contains(r)) {
      report.problems.push_back({"missing rank", r, "",
                                 "no trace of rank " + std::to_string(r) + " of a world of " +
                                     std::to_string(report.world_size) + ": the other ranks are analysed without it"});
    }
  }
  for (const RankSummary& s : ranks) {
    if (report.world_size > 0 && s.rank >= report.world_size) {
      report.problems.push_back(
          {"world size", s.rank, s.path,
           "rank " + std::to_string(s.rank) + " is outside the world of " + std::to_string(report.world_size)});
    }
  }
}

}  // namespace

ClusterReport merge(std::vector<RankSummary> summaries, const ClusterOptions& options) {
  ClusterReport report;
  const std::vector<RankSummary> ranks = ranked(std::move(summaries), report);
  world(ranks, report);
  for (const RankSummary& s : ranks) {
    for (const StepTimes& t : s.steps) report.step_trace.push_back({s.rank, t});
  }
  cluster_detail::slow_ranks(ranks, options, report);
  cluster_detail::links(ranks, options, report);
  cluster_detail::collectives(ranks, options, report);
  return report;
}

}  // namespace npuscope::analyzer

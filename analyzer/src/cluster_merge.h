// The pieces of merge() (cluster_merge.cpp), one file each: the ranks' step times and the slow rank
// (cluster_slow_rank.cpp), links (cluster_links.cpp), the matrix per op (cluster_op_matrix.cpp),
// collectives matched across ranks (cluster_collectives.cpp). Each fills its part of the report
// from the summaries of the ranks kept (one per rank, ascending).
#pragma once

#include <string>

#include "npuscope/analyzer/cluster.h"
#include "npuscope/collector/trace_rows.h"

namespace npuscope::analyzer::cluster_detail {

std::string kind_name(std::int32_t kind);            // "allreduce", ...
std::string transport_name(std::int32_t transport);  // "HCCS", ...

void slow_ranks(const std::vector<RankSummary>& ranks, const ClusterOptions& options, ClusterReport& report);
void links(const std::vector<RankSummary>& ranks, const ClusterOptions& options, ClusterReport& report);
void op_matrix(const std::vector<RankSummary>& ranks, ClusterReport& report);
void collectives(const std::vector<RankSummary>& ranks, const ClusterOptions& options, ClusterReport& report);

}  // namespace npuscope::analyzer::cluster_detail

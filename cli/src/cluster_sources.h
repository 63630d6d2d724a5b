// `npuscope cluster DIR` on a directory of real rank exports (rank0_ascend_pt/, msprof_*.db, Kineto
// traces, ...) beside or instead of npuscope traces.
//
// Note [A cluster of real profiles]
// The cluster analysis reads one npuscope trace per rank (*.db in DIR). A real job's ranks come as
// one source per rank: each entry of DIR importer::detect() knows is imported once, to its cached
// trace (Note [Importing a source]), said in one line on stderr. The rank traces are then those
// cached traces and DIR's own *.db traces, less the sources (an msprof_*.db is not a trace) and
// less the cached imports already counted (the same rank again). A source that does not import is
// reported as a rank trace that cannot be read, like any other, and the others go on; the report
// names DIR. Under mpirun every process lists and imports the same way (a cached import is
// written under a temporary name and renamed, so processes importing one source at once are safe)
// and summarizes its share.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "npuscope/analyzer/cluster.h"
#include "npuscope/analyzer/rank_set.h"

namespace npuscope::cli {

struct ClusterInputs {
  std::vector<std::filesystem::path> traces;      // one per rank (or what claims to be)
  std::vector<analyzer::RankSummary> unreadable;  // sources that did not import
  std::size_t files() const { return traces.size() + unreadable.size(); }
};

// DIR's rank traces, its sources imported first. A DIR that is no directory yields its own *.db
// listing (analyzer::list_rank_traces says what is wrong with it).
ClusterInputs cluster_inputs(const std::string& dir);

// The analysis of DIR in this process (threads: options.threads).
analyzer::ClusterReport analyze_cluster_inputs(const std::string& dir, ClusterInputs inputs,
                                               const analyzer::ClusterOptions& options);

}  // namespace npuscope::cli

// npuscope cluster under mpirun: each process analyses its share of the rank traces, rank 0 merges.
//
// Note [npuscope cluster over MPI]
// `mpirun -np P npuscope cluster DIR` (Note [Tools over MPI] in npuscope/tool_scaleout/processes.h): every
// process lists DIR the same way and summarizes the files i with i % P == its rank, on its own
// threads (--threads); the summaries travel serialized (analyzer::serialize, length-prefixed) to
// rank 0, which merges them exactly as one process would and alone writes the report. The others
// print nothing and exit 0. Run without mpirun, npuscope cluster never touches MPI.
#pragma once

#include <optional>
#include <string>

#include "cluster_sources.h"
#include "npuscope/analyzer/cluster.h"
#include "npuscope/tool_scaleout/processes.h"

namespace npuscope::cli {

// The merged report on rank 0, nullopt on the other processes. Throws analyzer::RankSetError as
// analyze_cluster does (analyzer::merge_directory, on rank 0, for a directory without any rank trace).
// `inputs`: cluster_inputs(dir), the same in every process.
std::optional<analyzer::ClusterReport> analyze_cluster_over_mpi(tool_scaleout::Processes& mpi, const std::string& dir,
                                                                ClusterInputs inputs,
                                                                const analyzer::ClusterOptions& options);

}  // namespace npuscope::cli

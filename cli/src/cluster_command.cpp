// npuscope cluster: the analysis of a multi-rank job from its rank traces (analyzer/cluster.h).
//
//   npuscope cluster DIR [--format text|json|csv] [--top N] [--threads N] [-o FILE|DIR]
//
// DIR holds one trace per rank (*.db with a rank in META), or a real job's rank exports (Note [A cluster
// of real profiles] in cluster_sources.h). text goes to stdout (colour on a
// terminal) or FILE; json likewise; csv writes one file per table into the directory -o names
// (cluster_step_trace_time.csv, cluster_communication_matrix.csv, ...). Missing, duplicated or
// unreadable rank traces and mismatched collectives are in the report (exit 0); a DIR without any
// rank trace is an error. Under mpirun the processes share the traces (Note [npuscope cluster over MPI]
// in cluster_over_mpi.h).

#include <string>

#include "cluster_over_mpi.h"
#include "cluster_sources.h"
#include "command.h"
#include "npuscope/analyzer/cluster.h"
#include "report_output.h"
#include "shipped_files.h"

namespace npuscope::cli {
namespace {

constexpr const char* kUsage = "npuscope cluster DIR [--format text|json|csv] [--top N] [--threads N] [-o FILE|DIR]";

struct ClusterFlags {
  std::string dir, format = "text", output;
  int top = 15;
  int threads = 0;
};

}  // namespace

int cluster_command(int argc, char** argv) {
  ClusterFlags f;
  po::options_description desc("options");
  desc.add_options()("help,h", "show this help")(
      "dir", po::value(&f.dir),
      "the directory of rank traces, one *.db per rank, or of a real job's rank exports (positional)")(
      "format", po::value(&f.format)->default_value(f.format), "text | json | csv")(
      "top", ranged_value(&f.top, "top", 1, 1'000'000)->default_value(f.top), "how many top collectives: 1 to 1000000")(
      "threads", ranged_value(&f.threads, "threads", 0, 4096)->default_value(f.threads),
      "threads reading traces: 0 to 4096 (0: one per core, at most one per trace)")(
      "output,o", po::value(&f.output),
      "write to FILE (text, json) or into DIR (csv: cluster_step_trace_time.csv, ...) instead of stdout");
  po::positional_options_description positional;
  positional.add("dir", 1);
  if (!parse_flags(argc, argv, desc, kUsage, &positional)) return 0;
  if (f.dir.empty()) throw UsageError(std::string("no directory given\nusage: ") + kUsage);
  check_report_format(f.format, f.output);

  const analyzer::ClusterOptions options{.top = f.top, .threads = f.threads};
  analyzer::ClusterReport cluster;
  try {
    // Under mpirun the processes share the traces (Note [npuscope cluster over MPI]); alone, threads.
    ClusterInputs inputs = cluster_inputs(f.dir);  // real rank exports imported (Note [A cluster of real profiles])
    if (tool_scaleout::launched_over_mpi()) {
      const auto mpi = tool_scaleout::join_over_mpi(mpi_module(), &argc, &argv);
      std::optional<analyzer::ClusterReport> merged = analyze_cluster_over_mpi(*mpi, f.dir, std::move(inputs), options);
      if (!merged) return 0;  // rank 0 reports
      cluster = std::move(*merged);
    } else {
      cluster = analyze_cluster_inputs(f.dir, std::move(inputs), options);
    }
  } catch (const analyzer::RankSetError& e) {
    throw InputError(e.what());
  }
  const analyzer::Report report = analyzer::cluster_tables(cluster, options);
  write_report(report, f.format, f.output,
               "the cluster analysis of " + std::to_string(cluster.ranks.size()) + " ranks");
  return 0;
}

}  // namespace npuscope::cli

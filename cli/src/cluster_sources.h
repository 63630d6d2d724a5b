// `npuscope cluster DIR` on a directory of real rank exports (rank0_ascend_pt/, msprof_*.db, Kineto
// traces, ...) beside or instead of npuscope traces.
//
// Note [A cluster of real profiles]
// The cluster analysis reads one npuscope trace per rank (*.db in DIR). A real job's ranks come as
// one source per rank: each is imported once, to its cached trace (Note [Importing a source]), and
// the analysis reads a private temporary directory of links to those traces and to DIR's own
// traces, so that neither the sources themselves (an msprof_*.db is not a trace) nor the cached
// imports beside them (the same rank again) are taken as ranks. DIR without sources is read as it is.
#pragma once

#include <filesystem>
#include <string>

namespace npuscope::cli {

class ClusterDir {
 public:
  // Imports the sources in `dir` (each reported on stderr) and links what the analysis reads.
  // Throws importer::ImportError, collector::TraceError.
  explicit ClusterDir(const std::string& dir);
  ~ClusterDir();
  ClusterDir(const ClusterDir&) = delete;
  ClusterDir& operator=(const ClusterDir&) = delete;

  // The directory to analyze.
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::filesystem::path temp_;  // the directory of links, removed with this; empty when none
};

}  // namespace npuscope::cli

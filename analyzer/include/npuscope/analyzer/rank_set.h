// The rank set: the traces of a multi-rank job, one per rank, in one directory; which of them make
// the job, and which COMMUNICATION rows of different ranks are the same collective. Cluster
// analysis (cluster.h) and the multi-rank viewer (viewer/cluster_model.h) both read a job this way.
//
// Note [Rank set]
// Each rank of a job writes a trace of its own and says so in its META (rank, world_size, node,
// hostname: Note [Collective records] in runtime_hooks/hook_api.h). A directory's candidates are
// its regular `*.db` files, in path order; other files (a SQLite -wal or -shm, a spool, notes) are
// not looked at. Each candidate becomes a RankFile: a trace that cannot be read, a trace without a
// usable rank (no META rank, or one that is not a non-negative integer), or a rank. select_ranks()
// keeps one file per rank, in rank order (of two traces of one rank, the first path: every run
// keeps the same one), and reports the others; the world is the largest META world_size kept, and
// traces that disagree on it, a rank outside it and each rank below it without a trace are
// reported. Problems are never fatal: the tools analyse or show the ranks they have. Selection sees
// only what a RankFile holds, so cluster analysis runs it at the merge, over summaries that may
// come from other processes (Note [Cluster analysis as map and merge] in cluster.h), and the viewer
// runs it before it reads any timeline.
//
// Note [Collective identity]
// Communicator ids are process-local (each rank numbers its own), so a communicator is known by its
// name, the same on every member, and a collective by its communicator and its sequence number on
// it (Note [Collectives in virtual time] in emulator/collectives.h). Send and recv are numbered per
// pair of ranks: theirs is also known by its sender and receiver (world ranks), so that send #k from
// A to B on rank A meets recv #k from A on rank B, and not another pair's #k.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "npuscope/collector/trace_reader.h"

namespace npuscope::analyzer {

// The directory cannot be listed, or holds no rank trace at all: nothing to analyse or show.
class RankSetError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The candidate rank traces of `dir`: its regular *.db files, sorted. Throws RankSetError when `dir`
// is not a directory or cannot be listed.
std::vector<std::filesystem::path> list_rank_traces(const std::filesystem::path& dir);

// One candidate file, as its META names it.
struct RankFile {
  std::string path;
  std::string error;         // not empty: not a readable trace (why; the path is not repeated)
  int rank = -1;             // META rank; -1: none, or not a rank number (meta_problem says)
  int world_size = 0;        // META world_size; 0 unknown
  int node = -1;             // META node; -1 unknown
  std::string hostname;      // META hostname; empty unknown
  std::string meta_problem;  // the first META value that is not a number: "META rank is 'x', not a rank number"
  bool operator==(const RankFile&) const = default;
};

// The META of the trace at `path`. Without a usable rank, nothing else is read.
RankFile read_rank_file(const std::string& path, const collector::TraceReader& trace);
// A file that could not be read as a trace: `why` (an exception's message) without the path it may
// start with.
RankFile unreadable_rank_file(const std::string& path, std::string_view why);

// A problem with the inputs, reported, not fatal.
struct RankSetProblem {
  std::string kind;  // "not a trace", "no rank", "duplicate rank", "bad META", "world size",
                     // "missing rank"; cluster analysis adds "communicator", "mismatched collective"
  int rank = -1;     // the rank concerned; -1 none
  std::string file;  // the file concerned; empty none
  std::string detail;
  bool skipped = false;  // the file is left out of the set
};

struct RankSelection {
  std::vector<std::size_t> kept;  // indexes of the files kept: one per rank, in rank order
  int world_size = 0;             // the largest META world_size of the files kept; 0 unknown
  std::vector<RankSetProblem> problems;
};

// Which files make the job (Note [Rank set]).
RankSelection select_ranks(std::span<const RankFile* const> files);

// The communicators of a job, each name once whatever the number of ranks (Note [Collective
// identity]); ids from 0 in the order names are first met.
class CommunicatorNames {
 public:
  std::int32_t id(const std::string& name);
  const std::string& name(std::int32_t id) const { return names_[static_cast<std::size_t>(id)]; }
  std::size_t size() const { return names_.size(); }

 private:
  std::unordered_map<std::string, std::int32_t> ids_;
  std::vector<std::string> names_;
};

// What names a collective on every member (Note [Collective identity]).
struct CollectiveKey {
  std::int32_t communicator = 0;  // a CommunicatorNames id
  std::int32_t sequence = 0;
  std::int32_t src = -1, dst = -1;  // send / recv: the sender and the receiver (world ranks); -1 otherwise
  bool point_to_point() const { return src >= 0 || dst >= 0; }
  auto operator<=>(const CollectiveKey&) const = default;
};

struct CollectiveKeyHash {
  std::size_t operator()(const CollectiveKey& k) const;
};

// The key of world rank `rank`'s COMMUNICATION row of `kind` (CollectiveKind, as stored), `sequence`
// and `root_or_peer`, on the communicator named by CommunicatorNames id `communicator`.
CollectiveKey collective_key(std::int32_t communicator, std::int32_t sequence, std::int32_t kind,
                             std::int32_t root_or_peer, std::int32_t rank);

// "hccl_world_group #3", "pp #0 (0 -> 1)".
std::string collective_name(const CollectiveKey& key, const CommunicatorNames& names);

}  // namespace npuscope::analyzer

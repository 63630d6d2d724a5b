// The traces of a multi-rank job opened together from one directory (the rank set: Note [Rank set]
// in npuscope/analyzer/rank_set.h): one timeline model per rank on one time axis, and which task on
// each rank is the same collective.
//
// Note [Cluster model]
// The rank set chooses the files from their META before any timeline is read; its problems become
// one sentence each ("x.db: skipped: ..."), so that the viewer shows what it has rather than
// refusing the job. The ranks' virtual clocks agree (Note [Collectives in virtual time] in
// emulator/collectives.h), so their timestamps share one axis as they are, from the earliest first
// event to the latest last one.
//
// The ranks load on up to `threads` threads, each rank's model as a single trace loads (Note
// [Timeline model]); the labels stay ids into each trace's own STRING_IDS. The collectives are
// matched at load, never per frame: each rank's COMMUNICATION rows are keyed as every tool keys them
// (Note [Collective identity]), and every rank's task for a collective is located in that rank's
// stream lanes by one pass over the items. A selected task then finds its collective with one hash
// lookup, and its members are a contiguous span in rank order.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "npuscope/analyzer/rank_set.h"
#include "npuscope/collector/trace_reader.h"
#include "npuscope/viewer/timeline_model.h"

namespace npuscope::viewer {

// One rank's trace and its model.
struct RankTrace : analyzer::RankFile {
  std::string title;  // "rank 3 (node 0)"; "rank 3" when META has no node
  std::unique_ptr<collector::TraceReader> reader;
  std::unique_ptr<TimelineModel> model;
};

// One rank's part of a collective: its task and COMMUNICATION timestamps.
struct CollectiveMember {
  std::uint32_t rank_index = 0;   // in ClusterModel::ranks()
  TimelineModel::Location where;  // the task's item in that rank's model
  std::int64_t task_id = 0;
  std::int64_t arrival_ns = 0, start_ns = 0, end_ns = 0;  // wait = start - arrival, transit = end - start
};

// A collective as every member saw it.
struct Collective {
  analyzer::CollectiveKey key;           // key.communicator: ClusterModel::communicator_name()
  std::int32_t kind = 0, algorithm = 0;  // CollectiveKind, CollectiveAlgorithm (as stored)
  std::int64_t bytes = 0;
  std::int32_t last_rank = -1;       // world rank of the member that arrived last (as the members recorded it)
  std::uint32_t begin = 0, end = 0;  // its members in ClusterModel's member array
};

class ClusterModel {
 public:
  // Whether `path` names a directory (the viewer then opens it as a rank set).
  static bool is_directory(const std::string& path);

  // Reads the rank traces of `dir` (Note [Cluster model]). Throws analyzer::RankSetError if it is not
  // a readable directory or holds no rank trace at all (the message lists what was skipped).
  explicit ClusterModel(const std::string& dir, unsigned threads = 4);

  const std::string& directory() const { return dir_; }
  const std::vector<RankTrace>& ranks() const { return ranks_; }
  // Files skipped and ranks missing, one sentence each ("x.db: skipped: not an npuscope trace ...").
  const std::vector<std::string>& problems() const { return problems_; }
  // The shared axis: the earliest first event and latest last event of all ranks.
  std::int64_t first_ns() const { return first_ns_; }
  std::int64_t last_ns() const { return last_ns_; }
  std::int64_t tasks() const;

  const std::vector<Collective>& collectives() const { return collectives_; }
  const std::string& communicator_name(std::int32_t id) const { return communicators_.name(id); }
  std::span<const CollectiveMember> members(const Collective& c) const {
    return std::span<const CollectiveMember>(members_).subspan(c.begin, c.end - c.begin);
  }
  // The collective whose task on ranks()[rank_index] is `task_id`, or null.
  const Collective* collective_of(std::size_t rank_index, std::int64_t task_id) const;

 private:
  void load_models(std::vector<RankTrace> ranks, unsigned threads);
  void index_collectives();

  std::string dir_;
  std::vector<RankTrace> ranks_;
  std::vector<std::string> problems_;
  std::int64_t first_ns_ = 0, last_ns_ = 0;
  analyzer::CommunicatorNames communicators_;
  std::vector<Collective> collectives_;
  std::vector<CollectiveMember> members_;                                            // by collective, then rank
  std::vector<std::unordered_map<std::int64_t, std::uint32_t>> collective_of_task_;  // by rank: task id -> collective
};

}  // namespace npuscope::viewer

// Opening a directory of rank traces and matching their collectives (Note [Cluster model]).
#include "npuscope/viewer/cluster_model.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <limits>
#include <thread>

namespace npuscope::viewer {
namespace {

namespace fs = std::filesystem;

std::string file_name(const std::string& path) { return fs::path(path).filename().string(); }

// The file's META; a file that is not a trace keeps why (its reader stays null).
RankTrace open_rank(const std::string& path) {
  std::unique_ptr<collector::TraceReader> reader;
  try {
    reader = collector::TraceReader::open(path, {.verify = false});
  } catch (const collector::TraceError& e) {
    return RankTrace{analyzer::unreadable_rank_file(path, e.what())};
  }
  RankTrace r{analyzer::read_rank_file(path, *reader)};
  r.reader = std::move(reader);
  r.title = "rank " + std::to_string(r.rank) + (r.node >= 0 ? " (node " + std::to_string(r.node) + ")" : "");
  return r;
}

// One sentence per problem: "x.db: skipped: why"; the missing ranks in one ("missing ranks 1, 3 of
// a world of 4", at most 16 of them listed).
std::vector<std::string> sentences(const analyzer::RankSelection& set) {
  std::vector<std::string> out;
  std::vector<int> missing;
  for (const analyzer::RankSetProblem& p : set.problems) {
    if (p.kind == "missing rank") {
      missing.push_back(p.rank);
    } else {
      out.push_back(p.file.empty() ? p.detail : file_name(p.file) + (p.skipped ? ": skipped: " : ": ") + p.detail);
    }
  }
  if (missing.empty()) return out;
  std::string list;
  for (std::size_t i = 0; i < missing.size() && i < 16; ++i) list += (i ? ", " : "") + std::to_string(missing[i]);
  if (missing.size() > 16) list += ", ... (" + std::to_string(missing.size()) + " in all)";
  out.push_back("missing rank" + std::string(missing.size() > 1 ? "s " : " ") + list + " of a world of " +
                std::to_string(set.world_size));
  return out;
}

}  // namespace

bool ClusterModel::is_directory(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

// The META of every file on this thread (a few small queries each), so that the rank set is chosen
// before any model is read; then the models on `threads` threads.
ClusterModel::ClusterModel(const std::string& dir, unsigned threads) : dir_(dir) {
  std::vector<RankTrace> candidates;
  for (const fs::path& path : analyzer::list_rank_traces(dir)) candidates.push_back(open_rank(path.string()));
  std::vector<const analyzer::RankFile*> files;
  for (const RankTrace& r : candidates) files.push_back(&r);
  const analyzer::RankSelection set = analyzer::select_ranks(files);
  problems_ = sentences(set);
  std::vector<RankTrace> ranks;
  for (const std::size_t i : set.kept) ranks.push_back(std::move(candidates[i]));
  candidates.clear();  // the others' readers closed
  load_models(std::move(ranks), std::max(1u, threads));
  if (ranks_.empty()) {
    std::string why;
    for (const std::string& p : problems_) why += "\n  " + p;
    throw analyzer::RankSetError(dir +
                                 ": no rank traces in it (files *.db written by `npuscope run` with a META rank)" +
                                 (why.empty() ? std::string(": it has no *.db file") : ":" + why));
  }
  first_ns_ = std::numeric_limits<std::int64_t>::max();
  last_ns_ = std::numeric_limits<std::int64_t>::min();
  for (const RankTrace& r : ranks_) {
    if (r.model->first_ns() == r.model->last_ns() && r.model->tasks() == 0) continue;  // an empty trace
    first_ns_ = std::min(first_ns_, r.model->first_ns());
    last_ns_ = std::max(last_ns_, r.model->last_ns());
  }
  if (first_ns_ > last_ns_) first_ns_ = last_ns_ = 0;
  index_collectives();
}

void ClusterModel::load_models(std::vector<RankTrace> ranks, unsigned threads) {
  std::vector<std::string> errors(ranks.size());
  std::atomic<std::size_t> next{0};
  {
    std::vector<std::jthread> workers;
    const std::size_t n = std::min<std::size_t>(threads, ranks.size());
    for (std::size_t w = 0; w < n; ++w) {
      workers.emplace_back([&] {
        for (std::size_t i = next++; i < ranks.size(); i = next++) {
          try {
            ranks[i].model = std::make_unique<TimelineModel>(*ranks[i].reader);
          } catch (const std::exception& e) {
            errors[i] = e.what();
          }
        }
      });
    }
  }  // joined
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (!errors[i].empty()) {
      problems_.push_back(file_name(ranks[i].path) + ": skipped: " + errors[i]);
      continue;
    }
    ranks_.push_back(std::move(ranks[i]));
  }
}

void ClusterModel::index_collectives() {
  std::unordered_map<analyzer::CollectiveKey, std::uint32_t, analyzer::CollectiveKeyHash> collective_at;
  std::vector<std::pair<std::uint32_t, CollectiveMember>> found;  // (collective, member)
  collective_of_task_.resize(ranks_.size());
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    const RankTrace& rank = ranks_[r];
    std::unordered_map<std::int64_t, std::int32_t> name_of_communicator;  // this trace's ids -> name id
    rank.reader->for_each([&](const collector::CommunicatorRow& c) {
      name_of_communicator[c.communicator_id] = communicators_.id(rank.reader->string(c.name_id));
    });
    // This rank's collectives by the low 32 bits of their task ids, as the items keep them.
    std::unordered_map<std::uint32_t, std::pair<std::uint32_t, CollectiveMember>> pending;
    rank.reader->for_each([&](const collector::CommunicationRow& c) {
      const auto name = name_of_communicator.find(c.communicator_id);
      if (name == name_of_communicator.end()) return;  // a damaged trace: no COMMUNICATOR row
      const analyzer::CollectiveKey key =
          analyzer::collective_key(name->second, c.sequence, c.kind, c.root_or_peer, rank.rank);
      const auto [it, added] = collective_at.try_emplace(key, static_cast<std::uint32_t>(collectives_.size()));
      if (added) {
        collectives_.push_back(
            {.key = key, .kind = c.kind, .algorithm = c.algorithm, .bytes = c.bytes, .last_rank = c.last_rank});
      }
      CollectiveMember m;
      m.rank_index = static_cast<std::uint32_t>(r);
      m.task_id = c.task_id;
      m.arrival_ns = c.arrival_ns;
      m.start_ns = c.start_ns;
      m.end_ns = c.end_ns;
      pending.emplace(static_cast<std::uint32_t>(c.task_id), std::pair{it->second, m});
    });
    if (pending.empty()) continue;
    // One pass over the rank's stream lanes locates every collective's item.
    const std::vector<Lane>& lanes = rank.model->lanes();
    for (std::size_t l = 0; l < lanes.size(); ++l) {
      if (lanes[l].kind != LaneKind::kStream) continue;
      const auto& row = lanes[l].rows[0];
      for (std::size_t i = 0; i < row.size(); ++i) {
        if (!is(row[i].task_type(), TaskType::kCommunication)) continue;
        const auto it = pending.find(row[i].id);
        if (it == pending.end()) continue;
        it->second.second.where = {l, 0, i};
        collective_of_task_[r][it->second.second.task_id] = it->second.first;
        found.push_back(it->second);
        pending.erase(it);
      }
    }
  }
  // Members contiguous by collective, in rank order within each (ranks were read in order).
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  members_.reserve(found.size());
  for (std::size_t i = 0; i < found.size(); ++i) {
    Collective& c = collectives_[found[i].first];
    if (i == 0 || found[i - 1].first != found[i].first) c.begin = static_cast<std::uint32_t>(i);
    c.end = static_cast<std::uint32_t>(i + 1);
    members_.push_back(found[i].second);
  }
}

std::int64_t ClusterModel::tasks() const {
  std::int64_t n = 0;
  for (const RankTrace& r : ranks_) n += r.model->tasks();
  return n;
}

const Collective* ClusterModel::collective_of(std::size_t rank_index, std::int64_t task_id) const {
  if (rank_index >= collective_of_task_.size()) return nullptr;
  const auto& of = collective_of_task_[rank_index];
  const auto it = of.find(task_id);
  return it == of.end() ? nullptr : &collectives_[it->second];
}

}  // namespace npuscope::viewer

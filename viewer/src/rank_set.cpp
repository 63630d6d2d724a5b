// Opening a directory of rank traces and matching their collectives (Note [Rank set]).
#include "npuscope/viewer/rank_set.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <exception>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <thread>

namespace npuscope::viewer {
namespace {

namespace fs = std::filesystem;

// A META value that must be a non-negative integer; nullopt (and why in `error`) otherwise.
std::optional<std::int32_t> meta_int(const collector::TraceReader& t, std::string_view key, std::string& error) {
  const std::optional<std::string> v = t.meta(std::string(key));
  if (!v) return std::nullopt;
  std::int32_t n = 0;
  const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
  if (ec != std::errc() || end != v->data() + v->size() || n < 0) {
    error = "META " + std::string(key) + " is '" + *v + "', not a rank number";
    return std::nullopt;
  }
  return n;
}

std::string file_name(const std::string& path) { return fs::path(path).filename().string(); }

// "1, 3, 5" (at most 16 of them, then "...").
std::string list_ranks(const std::vector<std::int32_t>& ranks) {
  std::string s;
  for (std::size_t i = 0; i < ranks.size() && i < 16; ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
  if (ranks.size() > 16) s += ", ... (" + std::to_string(ranks.size()) + " in all)";
  return s;
}

// What names a collective on every member: its communicator's name and sequence, and for send and
// recv (numbered per pair of ranks: Note [Collectives in virtual time]) the sender and receiver.
struct CollectiveKey {
  std::int32_t communicator = 0, sequence = 0, src = -1, dst = -1;
  bool operator==(const CollectiveKey&) const = default;
};

struct CollectiveKeyHash {
  std::size_t operator()(const CollectiveKey& k) const {
    const std::uint64_t a = static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.communicator)) << 32 |
                            static_cast<std::uint32_t>(k.sequence);
    const std::uint64_t b =
        static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.src)) << 32 | static_cast<std::uint32_t>(k.dst);
    return std::hash<std::uint64_t>()(a ^ (b * 0x9e3779b97f4a7c15ull));
  }
};

}  // namespace

bool RankSet::is_directory(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

RankSet::RankSet(const std::string& dir, unsigned threads) : dir_(dir) {
  std::error_code ec;
  std::vector<std::string> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code file_ec;
    if (it->path().extension() == ".db" && it->is_regular_file(file_ec)) files.push_back(it->path().string());
  }
  if (ec) throw collector::TraceError(dir + ": cannot read the directory: " + ec.message());
  std::sort(files.begin(), files.end());  // the same file wins among duplicates on every run
  open_files(files, std::max(1u, threads));
  if (ranks_.empty()) {
    std::string why;
    for (const std::string& p : problems_) why += "\n  " + p;
    throw collector::TraceError(dir + ": no rank traces in it (files *.db written by `npuscope run` with a META rank)" +
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

// The META of every file on this thread (a few small queries each), so that duplicates are dropped
// before their models are read; then the models on `threads` threads.
void RankSet::open_files(const std::vector<std::string>& files, unsigned threads) {
  std::map<std::int32_t, RankTrace> by_rank;
  for (const std::string& path : files) {
    RankTrace r;
    r.path = path;
    try {
      r.reader = collector::TraceReader::open(path, {.verify = false});
    } catch (const collector::TraceError& e) {
      std::string why = e.what();  // "PATH: not an npuscope trace ...": the file is named once
      if (why.rfind(path + ": ", 0) == 0) why.erase(0, path.size() + 2);
      problems_.push_back(file_name(path) + ": skipped: " + why);
      continue;
    }
    std::string error;
    const std::optional<std::int32_t> rank = meta_int(*r.reader, collector::kMetaRank, error);
    if (!rank) {
      problems_.push_back(file_name(path) + ": skipped: " +
                          (error.empty() ? "a trace without a rank (no META rank): open it on its own" : error));
      continue;
    }
    r.rank = *rank;
    r.world_size = meta_int(*r.reader, collector::kMetaWorldSize, error).value_or(0);
    r.node = meta_int(*r.reader, collector::kMetaNode, error).value_or(0);
    if (const auto it = by_rank.find(r.rank); it != by_rank.end()) {
      problems_.push_back(file_name(path) + ": skipped: a second trace of rank " + std::to_string(r.rank) +
                          " (the first is " + file_name(it->second.path) + ")");
      continue;
    }
    r.title = "rank " + std::to_string(r.rank) + " (node " + std::to_string(r.node) + ")";
    const std::int32_t key = r.rank;
    by_rank.emplace(key, std::move(r));
  }
  std::vector<RankTrace> ranks;
  for (auto& [rank, r] : by_rank) ranks.push_back(std::move(r));

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
  std::int32_t world = 0;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (!errors[i].empty()) {
      problems_.push_back(file_name(ranks[i].path) + ": skipped: " + errors[i]);
      continue;
    }
    world = std::max(world, ranks[i].world_size);
    ranks_.push_back(std::move(ranks[i]));
  }
  std::vector<std::int32_t> missing;
  std::size_t at = 0;
  for (std::int32_t r = 0; r < world; ++r) {
    while (at < ranks_.size() && ranks_[at].rank < r) ++at;
    if (at == ranks_.size() || ranks_[at].rank != r) missing.push_back(r);
  }
  if (!missing.empty()) {
    problems_.push_back("missing rank" + std::string(missing.size() > 1 ? "s " : " ") + list_ranks(missing) +
                        " of a world of " + std::to_string(world));
  }
}

void RankSet::index_collectives() {
  std::unordered_map<std::string, std::int32_t> name_ids;
  std::unordered_map<CollectiveKey, std::uint32_t, CollectiveKeyHash> collective_at;
  std::vector<std::pair<std::uint32_t, CollectiveMember>> found;  // (collective, member)
  collective_of_task_.resize(ranks_.size());
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    const RankTrace& rank = ranks_[r];
    std::unordered_map<std::int64_t, std::int32_t> name_of_communicator;  // this trace's ids -> name id
    rank.reader->for_each([&](const collector::CommunicatorRow& c) {
      const auto [it, added] =
          name_ids.try_emplace(rank.reader->string(c.name_id), static_cast<std::int32_t>(communicator_names_.size()));
      if (added) communicator_names_.push_back(it->first);
      name_of_communicator[c.communicator_id] = it->second;
    });
    // This rank's collectives by the low 32 bits of their task ids, as the items keep them.
    std::unordered_map<std::uint32_t, std::pair<std::uint32_t, CollectiveMember>> pending;
    rank.reader->for_each([&](const collector::CommunicationRow& c) {
      const auto name = name_of_communicator.find(c.communicator_id);
      if (name == name_of_communicator.end()) return;  // a damaged trace: no COMMUNICATOR row
      CollectiveKey key{name->second, c.sequence, -1, -1};
      if (is(c.kind, CollectiveKind::kSend)) key.src = rank.rank, key.dst = c.root_or_peer;
      if (is(c.kind, CollectiveKind::kRecv)) key.src = c.root_or_peer, key.dst = rank.rank;
      const auto [it, added] = collective_at.try_emplace(key, static_cast<std::uint32_t>(collectives_.size()));
      if (added) {
        collectives_.push_back({.communicator = name->second,
                                .sequence = c.sequence,
                                .kind = c.kind,
                                .algorithm = c.algorithm,
                                .bytes = c.bytes,
                                .last_rank = c.last_rank,
                                .src_rank = key.src,
                                .dst_rank = key.dst});
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

std::int64_t RankSet::tasks() const {
  std::int64_t n = 0;
  for (const RankTrace& r : ranks_) n += r.model->tasks();
  return n;
}

const Collective* RankSet::collective_of(std::size_t rank_index, std::int64_t task_id) const {
  if (rank_index >= collective_of_task_.size()) return nullptr;
  const auto& of = collective_of_task_[rank_index];
  const auto it = of.find(task_id);
  return it == of.end() ? nullptr : &collectives_[it->second];
}

}  // namespace npuscope::viewer

// The rank set (Note [Rank set], Note [Collective identity] in rank_set.h).
#include "npuscope/analyzer/rank_set.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <set>

namespace npuscope::analyzer {
namespace {

namespace fs = std::filesystem;

// A META value that must be a non-negative integer: nullopt when it is absent, and when it is not
// one (`problem` then says so, unless an earlier value already did).
std::optional<int> meta_number(const collector::TraceReader& trace, std::string_view key, std::string_view what,
                               std::string& problem) {
  const std::optional<std::string> v = trace.meta(std::string(key));
  if (!v) return std::nullopt;
  int n = 0;
  const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
  if (ec == std::errc() && end == v->data() + v->size() && n >= 0) return n;
  if (problem.empty()) problem = "META " + std::string(key) + " is '" + *v + "', not " + std::string(what);
  return std::nullopt;
}

std::string file_name(const std::string& path) { return fs::path(path).filename().string(); }

// One file per rank, in rank order; the others reported.
void keep_one_per_rank(std::span<const RankFile* const> files, RankSelection& out) {
  std::vector<std::size_t> order(files.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return files[a]->rank != files[b]->rank ? files[a]->rank < files[b]->rank : files[a]->path < files[b]->path;
  });
  for (const std::size_t i : order) {
    const RankFile& f = *files[i];
    if (!f.error.empty()) {
      out.problems.push_back({"not a trace", -1, f.path, f.error, true});
    } else if (f.rank < 0) {
      out.problems.push_back(
          {"no rank", -1, f.path,
           f.meta_problem.empty() ? "a trace without a rank (no META rank): open it on its own" : f.meta_problem,
           true});
    } else if (!out.kept.empty() && files[out.kept.back()]->rank == f.rank) {
      out.problems.push_back({"duplicate rank", f.rank, f.path,
                              "a second trace of rank " + std::to_string(f.rank) + " (the first is " +
                                  file_name(files[out.kept.back()]->path) + ")",
                              true});
    } else {
      out.kept.push_back(i);
      if (!f.meta_problem.empty()) {
        out.problems.push_back({"bad META", f.rank, f.path, f.meta_problem + ": taken as unknown"});
      }
    }
  }
}

void check_world(std::span<const RankFile* const> files, RankSelection& out) {
  std::set<int> sizes, found;
  for (const std::size_t i : out.kept) {
    found.insert(files[i]->rank);
    if (files[i]->world_size > 0) sizes.insert(files[i]->world_size);
  }
  out.world_size = sizes.empty() ? 0 : *sizes.rbegin();
  const std::string world = "a world of " + std::to_string(out.world_size);
  if (sizes.size() > 1) {
    std::string list;
    for (const int n : sizes) list += (list.empty() ? "" : ", ") + std::to_string(n);
    out.problems.push_back({"world size", -1, "",
                            "the traces disagree on the world size (" + list +
                                "): they may come from different jobs; " + std::to_string(out.world_size) +
                                " is used"});
  }
  for (int r = 0; r < out.world_size; ++r) {
    if (!found.contains(r)) {
      out.problems.push_back({"missing rank", r, "", "no trace of rank " + std::to_string(r) + " of " + world});
    }
  }
  for (const std::size_t i : out.kept) {
    if (out.world_size > 0 && files[i]->rank >= out.world_size) {
      out.problems.push_back(
          {"world size", files[i]->rank, files[i]->path,
           "rank " + std::to_string(files[i]->rank) + " is outside the world of " + std::to_string(out.world_size)});
    }
  }
}

}  // namespace

std::vector<fs::path> list_rank_traces(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw RankSetError(dir.string() + " is not a directory: give the directory holding the job's traces, one per rank");
  }
  std::vector<fs::path> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code file_ec;  // a file that vanished meanwhile is not a candidate
    if (it->path().extension() == ".db" && it->is_regular_file(file_ec)) files.push_back(it->path());
  }
  if (ec) throw RankSetError("cannot list " + dir.string() + ": " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

RankFile read_rank_file(const std::string& path, const collector::TraceReader& trace) {
  RankFile f{.path = path};
  f.rank = meta_number(trace, collector::kMetaRank, "a rank number", f.meta_problem).value_or(-1);
  if (f.rank < 0) return f;
  f.world_size = meta_number(trace, collector::kMetaWorldSize, "a number of ranks", f.meta_problem).value_or(0);
  f.node = meta_number(trace, collector::kMetaNode, "a node number", f.meta_problem).value_or(-1);
  f.hostname = trace.meta(std::string(collector::kMetaHostname)).value_or("");
  return f;
}

RankFile unreadable_rank_file(const std::string& path, std::string_view why) {
  if (why.starts_with(path + ": ")) why.remove_prefix(path.size() + 2);  // "PATH: not an npuscope trace ..."
  return {.path = path, .error = std::string(why)};
}

RankSelection select_ranks(std::span<const RankFile* const> files) {
  RankSelection out;
  keep_one_per_rank(files, out);
  check_world(files, out);
  return out;
}

std::int32_t CommunicatorNames::id(const std::string& name) {
  const auto [it, added] = ids_.try_emplace(name, static_cast<std::int32_t>(names_.size()));
  if (added) names_.push_back(name);
  return it->second;
}

std::size_t CollectiveKeyHash::operator()(const CollectiveKey& k) const {
  std::uint64_t h = static_cast<std::uint32_t>(k.communicator);
  for (const std::int32_t v : {k.sequence, k.src, k.dst}) h = h * 0x9E3779B97F4A7C15ull + static_cast<std::uint32_t>(v);
  return static_cast<std::size_t>(h ^ (h >> 29));
}

CollectiveKey collective_key(std::int32_t communicator, std::int32_t sequence, std::int32_t kind,
                             std::int32_t root_or_peer, std::int32_t rank) {
  CollectiveKey k{.communicator = communicator, .sequence = sequence};
  if (is(kind, CollectiveKind::kSend)) k.src = rank, k.dst = root_or_peer;
  if (is(kind, CollectiveKind::kRecv)) k.src = root_or_peer, k.dst = rank;
  return k;
}

std::string collective_name(const CollectiveKey& key, const CommunicatorNames& names) {
  std::string name = names.name(key.communicator) + " #" + std::to_string(key.sequence);
  if (key.point_to_point()) name += " (" + std::to_string(key.src) + " -> " + std::to_string(key.dst) + ")";
  return name;
}

}  // namespace npuscope::analyzer

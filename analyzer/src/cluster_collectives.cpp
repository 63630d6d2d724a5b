// Collectives matched across ranks by their CollectiveKey (Note [Collective identity] in
// rank_set.h). From them: the top collectives by total elapse with their min and max rank (hccl_sum's
// HcclTopOpStats), each rank's wait and transit (Wait Time Ratio), and the collectives the members
// disagree on (missing on a member, another kind or size), reported as mismatched.
#include <algorithm>
#include <unordered_map>

#include "cluster_merge.h"

namespace npuscope::analyzer::cluster_detail {
namespace {

struct Aggregate {
  std::int32_t kind = 0;
  std::int64_t bytes = 0;
  int first_rank = -1, ranks = 0;
  std::int64_t total_elapse = 0, min_elapse = 0, max_elapse = 0, max_wait = -1;
  int min_rank = -1, max_rank = -1, max_wait_rank = -1;
  std::string disagreement;  // the first rank that disagrees with first_rank; empty: none
};

bool point_to_point(std::int32_t kind) {
  return kind == static_cast<int>(CollectiveKind::kSend) || kind == static_cast<int>(CollectiveKind::kRecv);
}

CollectiveKey key_of(const CollectiveRecord& c, std::int32_t communicator, int rank) {
  return collective_key(communicator, c.sequence, c.kind, c.peer, rank);
}

std::string describe(std::int32_t kind, std::int64_t bytes) {
  return kind_name(kind) + " of " + std::to_string(bytes) + " B";
}

// The world's communicators by name; a rank's communicator index -> the world's.
struct Communicators {
  CommunicatorNames names;
  std::vector<std::vector<int>> members;           // by name id, as the first rank that has it says
  std::vector<std::vector<std::int32_t>> of_rank;  // parallel to the ranks

  Communicators(const std::vector<RankSummary>& ranks, ClusterReport& report) {
    for (const RankSummary& s : ranks) {
      std::vector<std::int32_t>& map = of_rank.emplace_back();
      for (const CommunicatorInfo& c : s.communicators) {
        const std::int32_t id = names.id(c.name);
        if (static_cast<std::size_t>(id) == members.size()) {
          members.push_back(c.members);
        } else if (members[static_cast<std::size_t>(id)] != c.members) {
          report.problems.push_back({"communicator", s.rank, s.path,
                                     "communicator " + c.name +
                                         " has other members on this rank than on the first rank "
                                         "that has it"});
        }
        map.push_back(id);
      }
    }
  }
};

void add(Aggregate& a, const CollectiveRecord& c, int rank) {
  if (a.ranks == 0) {
    a.kind = c.kind;
    a.bytes = c.bytes;
    a.first_rank = rank;
  } else if (a.disagreement.empty() && (a.bytes != c.bytes || (a.kind != c.kind && !point_to_point(c.kind)))) {
    a.disagreement = "rank " + std::to_string(a.first_rank) + ": " + describe(a.kind, a.bytes) + ", rank " +
                     std::to_string(rank) + ": " + describe(c.kind, c.bytes);
  }
  ++a.ranks;
  const std::int64_t elapse = c.elapse_ns();
  a.total_elapse += elapse;
  if (a.min_rank < 0 || elapse < a.min_elapse) a.min_elapse = elapse, a.min_rank = rank;
  if (a.max_rank < 0 || elapse > a.max_elapse) a.max_elapse = elapse, a.max_rank = rank;
  if (c.wait_ns() > a.max_wait) a.max_wait = c.wait_ns(), a.max_wait_rank = rank;
}

// The members expected to hold the collective: among the ranks analysed (a rank without a trace is
// reported once as missing, not at every collective).
std::vector<int> expected_members(const Communicators& comms, const CollectiveKey& k,
                                  const std::vector<int>& analysed) {
  std::vector<int> members =
      k.point_to_point() ? std::vector<int>{k.src, k.dst} : comms.members[static_cast<std::size_t>(k.communicator)];
  std::erase_if(members, [&](int r) { return !std::binary_search(analysed.begin(), analysed.end(), r); });
  std::sort(members.begin(), members.end());
  members.erase(std::unique(members.begin(), members.end()), members.end());
  return members;
}

void report_mismatches(const std::vector<RankSummary>& ranks, const Communicators& comms,
                       const std::unordered_map<CollectiveKey, Aggregate, CollectiveKeyHash>& all,
                       const ClusterOptions& options, ClusterReport& report) {
  std::vector<std::size_t> members_of(comms.names.size());  // per communicator, its members analysed
  for (std::size_t c = 0; c < comms.names.size(); ++c)
    members_of[c] = expected_members(comms, {.communicator = static_cast<std::int32_t>(c)}, report.ranks).size();
  std::vector<CollectiveKey> listed;
  for (const auto& [k, a] : all) {
    const std::size_t expected = k.point_to_point() ? expected_members(comms, k, report.ranks).size()
                                                    : members_of[static_cast<std::size_t>(k.communicator)];
    if (!a.disagreement.empty() || static_cast<std::size_t>(a.ranks) < expected) listed.push_back(k);
  }
  report.mismatched_collectives = static_cast<std::int64_t>(listed.size());
  std::sort(listed.begin(), listed.end());
  if (listed.size() > static_cast<std::size_t>(std::max(0, options.max_mismatch_rows)))
    listed.resize(static_cast<std::size_t>(std::max(0, options.max_mismatch_rows)));
  // Which members hold each listed collective: one more pass over the records, for these keys only.
  std::unordered_map<CollectiveKey, std::vector<int>, CollectiveKeyHash> holders;
  for (const CollectiveKey& k : listed) holders[k];
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    for (const CollectiveRecord& c : ranks[i].collectives) {
      const auto it =
          holders.find(key_of(c, comms.of_rank[i][static_cast<std::size_t>(c.communicator)], ranks[i].rank));
      if (it != holders.end()) it->second.push_back(ranks[i].rank);
    }
  }
  for (const CollectiveKey& k : listed) {
    const Aggregate& a = all.at(k);
    std::string detail = kind_name(a.kind) + " " + collective_name(k, comms.names) + ": ";
    int rank = a.first_rank;
    if (!a.disagreement.empty()) {
      detail += a.disagreement;
    } else {
      std::string missing;
      for (const int m : expected_members(comms, k, report.ranks)) {
        const auto& h = holders[k];
        if (std::find(h.begin(), h.end(), m) != h.end()) continue;
        if (missing.empty()) rank = m;
        missing += (missing.empty() ? "" : ", ") + std::to_string(m);
      }
      detail += "no record on rank " + missing + " (" + std::to_string(a.ranks) + " of its members have it)";
    }
    report.problems.push_back({"mismatched collective", rank, "", std::move(detail)});
  }
}

}  // namespace

void collectives(const std::vector<RankSummary>& ranks, const ClusterOptions& options, ClusterReport& report) {
  const Communicators comms(ranks, report);
  std::unordered_map<CollectiveKey, Aggregate, CollectiveKeyHash> all;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const RankSummary& s = ranks[i];
    RankCommunication rc{.rank = s.rank};
    for (const CollectiveRecord& c : s.collectives) {
      add(all[key_of(c, comms.of_rank[i][static_cast<std::size_t>(c.communicator)], s.rank)], c, s.rank);
      ++rc.collectives;
      rc.elapse_ns += c.elapse_ns();
      rc.wait_ns += c.wait_ns();
      rc.transit_ns += c.transit_ns();
    }
    report.communication.push_back(rc);
  }

  std::vector<std::pair<CollectiveKey, const Aggregate*>> order;
  order.reserve(all.size());
  for (const auto& [k, a] : all) order.emplace_back(k, &a);
  const std::size_t top = std::min(order.size(), static_cast<std::size_t>(std::max(0, options.top)));
  std::partial_sort(
      order.begin(), order.begin() + static_cast<std::ptrdiff_t>(top), order.end(), [](const auto& x, const auto& y) {
        return x.second->total_elapse != y.second->total_elapse ? x.second->total_elapse > y.second->total_elapse
                                                                : x.first < y.first;
      });
  for (std::size_t i = 0; i < top; ++i) {
    const auto& [k, a] = order[i];
    report.top_collectives.push_back({.communicator = comms.names.name(k.communicator),
                                      .sequence = k.sequence,
                                      .kind = a->kind,
                                      .src = k.src,
                                      .dst = k.dst,
                                      .bytes = a->bytes,
                                      .ranks = a->ranks,
                                      .total_elapse_ns = a->total_elapse,
                                      .min_elapse_ns = a->min_elapse,
                                      .max_elapse_ns = a->max_elapse,
                                      .max_wait_ns = a->max_wait,
                                      .min_rank = a->min_rank,
                                      .max_rank = a->max_rank,
                                      .max_wait_rank = a->max_wait_rank});
  }
  report_mismatches(ranks, comms, all, options, report);
}

}  // namespace npuscope::analyzer::cluster_detail

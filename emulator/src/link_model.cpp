#include "npuscope/emulator/link_model.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>

#include "npuscope/emulator/errors.h"

namespace npuscope::emulator {
namespace {

using Kind = CollectiveKind;
using Algo = CollectiveAlgorithm;

// The constants of one level of links (Note [Link model]).
struct Level {
  double alpha = 0;  // seconds per step
  double beta = 0;   // seconds per byte on one link
  double gamma = 0;  // seconds per reduced byte
  LinkTransport transport = LinkTransport::kHccs;
};

struct PhaseTime {
  double seconds = 0;
  std::uint32_t steps = 0;
  PhaseTime& operator+=(const PhaseTime& o) {
    seconds += o.seconds;
    steps += o.steps;
    return *this;
  }
};

bool reduces(Kind k) { return k == Kind::kAllReduce || k == Kind::kReduceScatter; }

int floor_log2(int p) { return std::bit_width(static_cast<unsigned>(p)) - 1; }
int ceil_log2(int p) { return p <= 1 ? 0 : std::bit_width(static_cast<unsigned>(p - 1)); }

// One phase on a flat group of p ranks over one kind of link (shared/REFERENCE.md's formulas).
// AllToAll is pairwise whatever `algo` says; Barrier is an AllReduce of nothing.
PhaseTime flat_time(Kind kind, Algo algo, double n, int p, const Level& l) {
  if (p <= 1) return {};
  const double a = l.alpha, b = l.beta, g = reduces(kind) ? l.gamma : 0.0;
  const double frac = static_cast<double>(p - 1) / p;
  const auto up = static_cast<std::uint32_t>(p - 1);
  if (kind == Kind::kBarrier) kind = Kind::kAllReduce;
  if (kind == Kind::kAllToAll) {
    if (algo == Algo::kFullMesh) return {a + n / p * b, 1};
    return {(p - 1) * (a + n / p * b), up};
  }
  switch (algo) {
    case Algo::kFullMesh:
      switch (kind) {
        case Kind::kAllGather: return {a + n / p * b, 1};
        case Kind::kReduceScatter: return {a + n / p * b + frac * n * g, 1};
        case Kind::kBroadcast: return {2 * a + 2 * n / p * b, 2};  // scatter, then allgather
        default: return {2 * a + 2 * n / p * b + frac * n * g, 2};
      }
    case Algo::kHalvingDoubling: {
      if (kind == Kind::kBroadcast) {
        const int steps = ceil_log2(p);
        return {steps * (a + n * b), static_cast<std::uint32_t>(steps)};
      }
      const int k = floor_log2(p);
      const int pp = 1 << k;
      // p not a power of two: the extra ranks fold in first and are copied back last.
      const double fb = pp == p ? frac : static_cast<double>(pp - 1) / pp + 1;
      const int ks = pp == p ? k : k + 1;
      const auto s = static_cast<std::uint32_t>(ks);
      switch (kind) {
        case Kind::kAllGather: return {ks * a + fb * n * b, s};
        case Kind::kReduceScatter: return {ks * a + fb * n * b + fb * n * g, s};
        default: return {2 * ks * a + 2 * fb * n * b + fb * n * g, 2 * s};
      }
    }
    default:  // ring
      switch (kind) {
        case Kind::kAllGather: return {(p - 1) * a + frac * n * b, up};
        case Kind::kReduceScatter: return {(p - 1) * a + frac * n * b + frac * n * g, up};
        case Kind::kBroadcast: return {(p - 1) * (a + n * b), up};
        default: return {2 * (p - 1) * a + 2 * frac * n * b + frac * n * g, 2 * up};
      }
  }
}

// What member r of a flat group sends to each other member in one phase: bytes and steps by peer.
struct PeerSend {
  double bytes = 0;
  std::uint32_t steps = 0;
};
using FlatSends = std::map<int, PeerSend>;

void add(FlatSends& s, int peer, double bytes, std::uint32_t steps) {
  s[peer].bytes += bytes;
  s[peer].steps += steps;
}

void flat_sends(FlatSends& out, Kind kind, Algo algo, double n, int p, int r, int root) {
  if (p <= 1 || n <= 0) return;
  if (kind == Kind::kBarrier) return;
  if (kind == Kind::kAllToAll) {
    for (int q = 0; q < p; ++q)
      if (q != r) add(out, q, n / p, 1);
    return;
  }
  if (kind == Kind::kBroadcast && algo != Algo::kFullMesh) {
    const int v = (r - root + p) % p;
    if (algo == Algo::kRing) {
      if (v < p - 1) add(out, (r + 1) % p, n, 1);
      return;
    }
    for (int m = 1; m < p; m <<= 1)  // binomial tree: v sends to v + m for every m above v's top bit
      if (v < m && v + m < p) add(out, (v + m + root) % p, n, 1);
    return;
  }
  const bool all_reduce = kind == Kind::kAllReduce;
  switch (algo) {
    case Algo::kFullMesh:
      for (int q = 0; q < p; ++q) {
        if (q == r) continue;
        if (kind == Kind::kBroadcast) {
          if (r == root)
            add(out, q, 2 * n / p, 2);
          else if (q != root)
            add(out, q, n / p, 1);
        } else {
          add(out, q, (all_reduce ? 2 : 1) * n / p, all_reduce ? 2 : 1);
        }
      }
      return;
    case Algo::kHalvingDoubling: {
      const int pp = 1 << floor_log2(p);
      const double chunk = n / p;
      if (r >= pp) {  // an extra rank: folds its data into r - pp
        add(out, r - pp, kind == Kind::kAllGather ? chunk : n, 1);
        return;
      }
      if (r + pp < p) add(out, r + pp, kind == Kind::kReduceScatter ? chunk : n, 1);  // copies the result back
      for (int d = 1; d < pp; d <<= 1)  // the partner at distance d exchanges n·d/pp, per phase
        add(out, r ^ d, (all_reduce ? 2 : 1) * n * d / pp, all_reduce ? 2 : 1);
      return;
    }
    default:  // ring
      add(out, (r + 1) % p, (all_reduce ? 2 : 1) * n * (p - 1) / p,
          static_cast<std::uint32_t>((all_reduce ? 2 : 1) * (p - 1)));
  }
}

bool power_of_two(int p) { return p > 0 && (p & (p - 1)) == 0; }

std::uint64_t to_ns(double seconds) { return static_cast<std::uint64_t>(std::llround(std::max(0.0, seconds) * 1e9)); }

// Where each member sits: its node's position among the communicator's nodes and its local index.
struct Placement {
  std::vector<int> node_index, local_index;
  std::vector<std::vector<int>> members_of_node;  // communicator ranks, per node position
};

Placement place(const CommTopology& t) {
  Placement pl;
  std::map<int, int> position;
  for (int r = 0; r < t.size(); ++r) {
    auto [it, added] = position.emplace(t.node_of[r], static_cast<int>(position.size()));
    if (added) pl.members_of_node.emplace_back();
    pl.node_index.push_back(it->second);
    pl.local_index.push_back(static_cast<int>(pl.members_of_node[it->second].size()));
    pl.members_of_node[it->second].push_back(r);
  }
  return pl;
}

// The members on other nodes with r's local index (r's plane), r included, in node order.
std::vector<int> plane_of(const Placement& pl, int local_index) {
  std::vector<int> plane;
  for (const auto& members : pl.members_of_node)
    if (local_index < static_cast<int>(members.size())) plane.push_back(members[local_index]);
  return plane;
}

int position_in(const std::vector<int>& group, int rank) {
  return static_cast<int>(std::find(group.begin(), group.end(), rank) - group.begin());
}

void add_sends(std::map<int, PeerSend>& by_rank, const FlatSends& flat, const std::vector<int>& group) {
  for (const auto& [q, s] : flat) add(by_rank, group[q], s.bytes, s.steps);
}

constexpr std::string_view kAlgoForms =
    "forms: \"level0:NA;level1:ring\", or per collective \"allreduce=level0:NA;level1:H-D_R/"
    "allgather=level0:NA;level1:ring\" (collectives allreduce, allgather, reducescatter, broadcast, alltoall; "
    "level0 NA, fullmesh, ring or H-D_R; level1 ring, H-D_R, or pairwise for alltoall)";

[[noreturn]] void bad_algo(std::string_view value, std::string_view part, std::string_view why) {
  throw InvalidArgument("HCCL_ALGO=\"" + std::string(value) + "\": " + std::string(why) + " '" + std::string(part) +
                        "'; " + std::string(kAlgoForms));
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

}  // namespace

int CommTopology::num_nodes() const {
  std::vector<int> nodes = node_of;
  std::sort(nodes.begin(), nodes.end());
  return static_cast<int>(std::unique(nodes.begin(), nodes.end()) - nodes.begin());
}

int CommTopology::max_per_node() const {
  std::map<int, int> count;
  int most = 0;
  for (int n : node_of) most = std::max(most, ++count[n]);
  return most;
}

CommTopology CommTopology::uniform(int ranks, int ranks_per_node) {
  CommTopology t;
  for (int r = 0; r < ranks; ++r) t.node_of.push_back(r / std::max(1, ranks_per_node));
  return t;
}

AlgorithmChoice AlgorithmChoice::parse(std::string_view value) {
  AlgorithmChoice c;
  static const std::map<std::string_view, Kind> kKindNames = {{"allreduce", Kind::kAllReduce},
                                                              {"allgather", Kind::kAllGather},
                                                              {"reducescatter", Kind::kReduceScatter},
                                                              {"broadcast", Kind::kBroadcast},
                                                              {"alltoall", Kind::kAllToAll}};
  std::string_view rest = trim(value);
  while (!rest.empty()) {
    const auto slash = rest.find('/');
    std::string_view part = trim(rest.substr(0, slash));
    rest = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
    std::vector<Kind> kinds;
    if (const auto eq = part.find('='); eq != std::string_view::npos) {
      const auto it = kKindNames.find(trim(part.substr(0, eq)));
      if (it == kKindNames.end()) bad_algo(value, part.substr(0, eq), "unknown collective");
      kinds.push_back(it->second);
      part = part.substr(eq + 1);
    } else {
      for (const auto& [name, kind] : kKindNames) kinds.push_back(kind);
    }
    while (!part.empty()) {
      const auto semi = part.find(';');
      const std::string_view level = trim(part.substr(0, semi));
      part = semi == std::string_view::npos ? std::string_view{} : part.substr(semi + 1);
      if (level.empty()) continue;
      const auto colon = level.find(':');
      const std::string_view which = colon == std::string_view::npos ? level : level.substr(0, colon);
      if (colon == std::string_view::npos || (which != "level0" && which != "level1"))
        bad_algo(value, level, "cannot read");
      const std::string_view algo = trim(level.substr(colon + 1));
      std::optional<Algo> chosen;
      if (algo == "ring")
        chosen = Algo::kRing;
      else if (algo == "H-D_R")
        chosen = Algo::kHalvingDoubling;
      else if (algo == "fullmesh" && which == "level0")
        chosen = Algo::kFullMesh;
      else if (algo == "pairwise" && which == "level1")
        chosen = Algo::kPairwise;
      else if (algo != "NA")
        bad_algo(value, level, "npuscope does not model");
      for (Kind k : kinds) {
        auto& slot = (which == "level0" ? c.level0 : c.level1)[static_cast<int>(k)];
        slot = chosen;
      }
    }
  }
  return c;
}

AlgorithmChoice AlgorithmChoice::from_environment() {
  const char* v = std::getenv("HCCL_ALGO");
  return v == nullptr ? AlgorithmChoice{} : parse(v);
}

CollectiveCost collective_cost(const DeviceSpec& spec, const CommTopology& topology, const CollectiveCall& call,
                               const AlgorithmChoice& choice) {
  const int p = topology.size();
  if (call.rank < 0 || call.rank >= p)
    throw InvalidArgument("collective " + std::string(enum_name(call.kind)) + ": rank " + std::to_string(call.rank) +
                          " is not in a communicator of " + std::to_string(p) + " ranks");
  const bool p2p = call.kind == Kind::kSend || call.kind == Kind::kRecv;
  const bool rooted = call.kind == Kind::kBroadcast || p2p;
  if (rooted && (call.root_or_peer < 0 || call.root_or_peer >= p || (p2p && call.root_or_peer == call.rank)))
    throw InvalidArgument("collective " + std::string(enum_name(call.kind)) + " on rank " + std::to_string(call.rank) +
                          ": its " + (p2p ? "peer " : "root ") + std::to_string(call.root_or_peer) +
                          " is not another rank of a communicator of " + std::to_string(p) + " ranks");

  const double n = static_cast<double>(call.bytes);
  const double alpha = static_cast<double>(spec.collective_latency_ns) * 1e-9;
  const double gamma = 3.0 / (spec.memory_bandwidth * spec.memory_efficiency);
  const Level hccs{alpha, 1.0 / spec.intra_node_link_bandwidth, gamma, LinkTransport::kHccs};
  const Level roce{alpha, 1.0 / spec.inter_node_bandwidth, gamma, LinkTransport::kRdma};
  const Placement pl = place(topology);
  const auto same_node = [&](int a, int b) { return pl.node_index[a] == pl.node_index[b]; };

  CollectiveCost cost;
  std::map<int, PeerSend> sends;  // by communicator rank
  if (p2p) {
    const bool local = same_node(call.rank, call.root_or_peer);
    cost.algorithm = Algo::kPointToPoint;
    cost.steps = 1;
    const double beta = local ? 1.0 / spec.p2p_bandwidth : roce.beta;
    cost.transfer_ns = to_ns(alpha + n * beta);
    if (call.kind == Kind::kSend && call.bytes > 0) add(sends, call.root_or_peer, n, 1);
  } else if (p > 1) {
    const int s = static_cast<int>(pl.members_of_node.size());
    const int q = topology.max_per_node();
    const int k = static_cast<int>(call.kind);
    const Algo level0 = call.kind == Kind::kAllToAll ? Algo::kFullMesh : choice.level0[k].value_or(Algo::kFullMesh);
    const Algo level1 = call.kind == Kind::kAllToAll
                            ? Algo::kPairwise
                            : choice.level1[k].value_or(power_of_two(s) ? Algo::kHalvingDoubling : Algo::kRing);
    const int r = call.rank;
    const auto& local = pl.members_of_node[pl.node_index[r]];
    const std::vector<int> plane = plane_of(pl, pl.local_index[r]);
    const int lr = position_in(local, r), pr = position_in(plane, r);
    const int root = call.root_or_peer;
    FlatSends in_node, across;
    PhaseTime t;
    if (s == 1) {
      cost.algorithm = level0;
      t = flat_time(call.kind, level0, n, p, hccs);
      flat_sends(in_node, call.kind, level0, n, p, r, root);
    } else {
      cost.algorithm = level1;
      switch (call.kind) {
        case Kind::kAllReduce:
        case Kind::kBarrier:
          t = flat_time(Kind::kReduceScatter, level0, n, q, hccs);
          t += flat_time(call.kind, level1, n / q, s, roce);
          t += flat_time(Kind::kAllGather, level0, n, q, hccs);
          flat_sends(in_node, Kind::kReduceScatter, level0, n, static_cast<int>(local.size()), lr, 0);
          flat_sends(in_node, Kind::kAllGather, level0, n, static_cast<int>(local.size()), lr, 0);
          flat_sends(across, call.kind, level1, n / q, static_cast<int>(plane.size()), pr, 0);
          break;
        case Kind::kAllGather:
        case Kind::kReduceScatter:
          t = flat_time(call.kind, level1, n / q, s, roce);
          t += flat_time(call.kind, level0, n, q, hccs);
          flat_sends(across, call.kind, level1, n / q, static_cast<int>(plane.size()), pr, 0);
          flat_sends(in_node, call.kind, level0, n, static_cast<int>(local.size()), lr, 0);
          break;
        case Kind::kBroadcast: {
          t = flat_time(call.kind, level1, n, s, roce);
          t += flat_time(call.kind, level0, n, q, hccs);
          const int root_local = pl.local_index[root];
          if (pl.local_index[r] == root_local)
            flat_sends(across, call.kind, level1, n, static_cast<int>(plane.size()), pr, position_in(plane, root));
          const int node_root = std::min(root_local, static_cast<int>(local.size()) - 1);
          flat_sends(in_node, call.kind, level0, n, static_cast<int>(local.size()), lr, node_root);
          break;
        }
        default: {  // all-to-all: the in-server share over the mesh while the rest leaves by RoCE
          const double mesh = q > 1 ? n / p * hccs.beta : 0.0;
          const double wire = static_cast<double>(p - q) / p * n * roce.beta;
          t = {2 * alpha + std::max(mesh, wire), 2};
          for (int other = 0; other < p; ++other)
            if (other != r && n > 0) add(sends, other, n / p, 1);
          break;
        }
      }
    }
    cost.transfer_ns = to_ns(t.seconds);
    cost.steps = t.steps;
    add_sends(sends, in_node, local);
    add_sends(sends, across, plane);
  } else {
    cost.algorithm = choice.level0[static_cast<int>(call.kind)].value_or(Algo::kFullMesh);
  }
  for (const auto& [peer, ps] : sends) {
    const LinkTransport transport = same_node(call.rank, peer) ? LinkTransport::kHccs : LinkTransport::kRdma;
    const double beta = transport == LinkTransport::kRdma ? roce.beta : p2p ? 1.0 / spec.p2p_bandwidth : hccs.beta;
    cost.sends.push_back({peer, static_cast<std::uint64_t>(std::llround(ps.bytes)), transport,
                          to_ns(ps.steps * alpha + ps.bytes * beta)});
  }
  return cost;
}

}  // namespace npuscope::emulator

// The communication matrix per op (Note [Communication matrix per op] in cluster.h): each rank's
// collectives' transfers, their top1 / middle / bottom / total per op type, and each group's total,
// as torch_npu's communication_matrix.json and msprof-analyze's cluster_communication_matrix.json
// hold them.
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <compare>
#include <map>
#include <span>
#include <string_view>
#include <tuple>

#include "cluster_merge.h"

namespace npuscope::analyzer::cluster_detail {
namespace {

struct OpType {
  bool p2p = false;
  std::string name;  // "allreduce", "send", ...
};

// The first of `alternatives` found earliest in `s` (a regular expression's alternation: at the
// earliest position, the first alternative listed that matches there).
std::string_view earliest(std::string_view s, std::span<const std::string_view> alternatives) {
  for (std::size_t at = 0; at < s.size(); ++at) {
    for (const std::string_view a : alternatives) {
      if (s.substr(at).starts_with(a)) return a;
    }
  }
  return {};
}

// torch_npu's (and MindSpore's) communication parser: "Send" or "Receive" in the name is p2p
// (msprof-analyze's: hcom_send, hcom_receive, hcom_batchsendrecv; here either case), its type
// receive|send, the rest collective (invalid|broadcast|allreduce|reduce|allgather|reducescatter|
// scatter|alltoall|alltoallv|alltoallvc), else the name's last '/' part up to "-op".
OpType op_type(std::string_view name) {
  static constexpr std::string_view kP2p[] = {"receive", "send"};
  static constexpr std::string_view kCollective[] = {"invalid",   "broadcast",     "allreduce", "reduce",
                                                     "allgather", "reducescatter", "scatter",   "alltoall",
                                                     "alltoallv", "alltoallvc"};
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  const bool p2p = lower.find("send") != lower.npos || lower.find("receive") != lower.npos;
  if (const std::string_view t = earliest(lower, p2p ? std::span<const std::string_view>(kP2p) : kCollective);
      !t.empty()) {
    return {p2p, std::string(t)};
  }
  std::string_view rest = lower;
  if (const std::size_t slash = rest.rfind('/'); slash != rest.npos) rest.remove_prefix(slash + 1);
  return {p2p, std::string(rest.substr(0, rest.find("-op")))};
}

// The step whose device window holds `t`; -1 when none (or the trace has no step markers).
std::int64_t step_of(const std::vector<StepTimes>& steps, std::int64_t t) {
  for (const StepTimes& s : steps) {
    if (s.start_ns <= t && t <= s.end_ns) return s.step;
  }
  return -1;
}

// The order of the rows: step, group, collective before p2p, the per-op entries (in the order the
// ops first appear), then the op types' entries (top1, middle, bottom1, bottom2, bottom3, total),
// then the group's total; within one, the links.
struct RowKey {
  std::int64_t step = -1;
  std::string group;
  bool p2p = false;
  int section = 0, order = 0, stat = 0;
  int src = 0, dst = 0;
  std::int32_t transport = 0;
  auto operator<=>(const RowKey&) const = default;
};

constexpr std::array<std::string_view, 6> kStats = {"top1", "middle", "bottom1", "bottom2", "bottom3", "total"};

// msprof's Bandwidth(GB/s) of one op on one link: rounded to 4 decimals, and sorted on as written.
double written_gbps(const OpMatrixEntry* e) { return std::round(e->bandwidth_gbps() * 1e4) / 1e4; }

class OpMatrix {
 public:
  void add_rank(const RankSummary& s) {
    for (const OpLink& l : s.op_links) {
      const LinkOp& op = s.link_ops[static_cast<std::size_t>(l.op)];
      const bool known = op.communicator >= 0 && static_cast<std::size_t>(op.communicator) < s.communicators.size();
      const std::string group = known ? s.communicators[static_cast<std::size_t>(op.communicator)].name : "";
      const OpType type = op_type(op.name);
      const std::int64_t step = step_of(s.steps, op.start_ns);
      const RowKey at{step, group, type.p2p, 0, order(step, group, type.p2p, op.name), 0, s.rank, l.dst, l.transport};
      OpMatrixEntry& e = rows_[at];
      if (e.hccl_op.empty()) {  // (an op of the same name again on the link: summed)
        e = {.step = step, .p2p = type.p2p, .hccl_op = op.name, .group = group, .op = op.name, .src = s.rank};
        e.dst = l.dst;
        e.transport = l.transport;
        picks_[{step, group, type.p2p, 1, order(step, group, type.p2p, "\n" + type.name), 0, s.rank, l.dst, 0}]
            .push_back(&e);
      }
      e.bytes += l.bytes;
      e.time_ns += l.time_ns;
    }
  }

  std::vector<OpMatrixEntry> take() {
    for (auto& [key, picks] : picks_) add_stats(key, picks);
    std::vector<OpMatrixEntry> out;
    out.reserve(rows_.size());
    for (auto& [key, e] : rows_) out.push_back(std::move(e));
    return out;
  }

 private:
  // The index of `name` (an op, or "\n" and an op type) among those of its step and group, by first use.
  int order(std::int64_t step, const std::string& group, bool p2p, const std::string& name) {
    auto& names = names_[{step, group, p2p}];
    return names.try_emplace(name, static_cast<int>(names.size())).first->second;
  }

  // The op type's top1 ... total on one link, and the link's share of the group's total.
  void add_stats(const RowKey& key, std::vector<const OpMatrixEntry*>& picks) {
    std::stable_sort(picks.begin(), picks.end(),
                     [](const OpMatrixEntry* a, const OpMatrixEntry* b) { return written_gbps(a) > written_gbps(b); });
    const std::size_t n = picks.size();
    const std::array<std::size_t, 5> index = {0, n / 2, n - 1, n >= 2 ? n - 2 : n - 1,
                                              n >= 3 ? n - 3 : (n == 2 ? n - 2 : n - 1)};
    const std::string type = names_of_order(key);
    for (std::size_t i = 0; i < index.size(); ++i) {
      OpMatrixEntry e = *picks[index[i]];
      e.hccl_op = type + "-" + std::string(kStats[i]);
      RowKey k = key;
      k.stat = static_cast<int>(i);
      k.transport = e.transport;
      rows_[k] = std::move(e);
    }
    OpMatrixEntry total = *picks.front();  // the fastest op's transport
    total.hccl_op = type + "-total";
    total.op.clear();
    total.bytes = total.time_ns = 0;
    for (const OpMatrixEntry* p : picks) total.bytes += p->bytes, total.time_ns += p->time_ns;
    RowKey k = key;
    k.stat = static_cast<int>(kStats.size()) - 1;
    k.transport = total.transport;
    rows_[k] = total;
    RowKey all{key.step, key.group, key.p2p, 2, 0, 0, key.src, key.dst, 0};
    OpMatrixEntry& sum = rows_[all];
    if (sum.hccl_op.empty()) {
      sum = total;
      sum.hccl_op = "Total Op Info";
    } else {
      sum.bytes += total.bytes;
      sum.time_ns += total.time_ns;
    }
  }

  std::string names_of_order(const RowKey& key) const {
    for (const auto& [name, index] : names_.at({key.step, key.group, key.p2p})) {
      if (index == key.order) return name.substr(1);
    }
    return {};
  }

  std::map<RowKey, OpMatrixEntry> rows_;                       // std::map: the entries' addresses stay put (picks_)
  std::map<RowKey, std::vector<const OpMatrixEntry*>> picks_;  // per op type and link, its ops
  std::map<std::tuple<std::int64_t, std::string, bool>, std::map<std::string, int>> names_;
};

}  // namespace

void op_matrix(const std::vector<RankSummary>& ranks, ClusterReport& report) {
  OpMatrix m;
  for (const RankSummary& s : ranks) m.add_rank(s);
  report.op_matrix = m.take();
}

}  // namespace npuscope::analyzer::cluster_detail

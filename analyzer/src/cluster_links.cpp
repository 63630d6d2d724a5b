// The communication matrix (what each rank sent to each peer, per communicator and transport) and the slow links: per
// transport, the spread of the links' bandwidth, (max - min) / mean > 5 % naming the slowest link
// (msprof-analyze's advisor applies the slow-rank test to bandwidth), small packets left out.
#include <algorithm>
#include <map>
#include <string>
#include <tuple>

#include "cluster_merge.h"

namespace npuscope::analyzer::cluster_detail {

void links(const std::vector<RankSummary>& ranks, const ClusterOptions& options, ClusterReport& report) {
  std::map<std::tuple<std::string, int, int, std::int32_t>, MatrixEntry> matrix;  // per communicator
  for (const RankSummary& s : ranks) {
    for (const LinkTotal& l : s.links) {
      const bool known = l.communicator >= 0 && static_cast<std::size_t>(l.communicator) < s.communicators.size();
      const std::string communicator = known ? s.communicators[static_cast<std::size_t>(l.communicator)].name : "";
      MatrixEntry& e = matrix[{communicator, s.rank, l.dst, l.transport}];
      e.communicator = communicator;
      e.src = s.rank;  // what the rank says it sent: its own rank, whatever the summary's src says
      e.dst = l.dst;
      e.transport = l.transport;
      e.bytes += l.bytes;
      e.time_ns += l.time_ns;
      e.transfers += l.transfers;
    }
  }
  std::map<std::int32_t, LinkSpread> spreads;
  std::map<std::int32_t, double> sums;
  for (const auto& [key, e] : matrix) {
    report.matrix.push_back(e);
    if (e.time_ns <= 0 || e.src == e.dst) continue;  // LOCAL copies are not links
    LinkSpread& sp = spreads[e.transport];
    sp.transport = e.transport;
    const std::int64_t small =
        e.transport == static_cast<int>(LinkTransport::kRdma) ? options.small_rdma_bytes : options.small_sdma_bytes;
    if (e.bytes < small * std::max<std::int64_t>(1, e.transfers)) {  // mean transfer a small packet
      ++sp.small_links;
      continue;
    }
    const double bw = e.bandwidth_gbps();
    if (sp.links == 0 || bw < sp.min_gbps) sp.min_gbps = bw, sp.min_src = e.src, sp.min_dst = e.dst;
    if (sp.links == 0 || bw > sp.max_gbps) sp.max_gbps = bw, sp.max_src = e.src, sp.max_dst = e.dst;
    ++sp.links;
    sums[e.transport] += bw;
  }
  for (auto& [transport, sp] : spreads) {
    sp.mean_gbps = sp.links > 0 ? sums[transport] / sp.links : 0;
    sp.spread_pct = sp.mean_gbps > 0 ? 100.0 * (sp.max_gbps - sp.min_gbps) / sp.mean_gbps : 0;
    sp.slow = sp.spread_pct > 100.0 * options.slow_threshold;
    report.link_spreads.push_back(sp);
  }
}

}  // namespace npuscope::analyzer::cluster_detail

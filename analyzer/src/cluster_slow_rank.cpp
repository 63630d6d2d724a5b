// The slow rank: each part of the ranks' step time tested for a spread, the rank that causes it
// named (Note [Which rank is slow] in cluster.h).
#include <algorithm>
#include <map>

#include "cluster_merge.h"

namespace npuscope::analyzer::cluster_detail {
namespace {

struct RankTotals {
  int rank = 0;
  std::int64_t computing = 0, free = 0, span = 0, wait = 0, transit = 0;
};

RankTotals totals_of(const RankSummary& s) {
  RankTotals t{.rank = s.rank};
  for (const StepTimes& step : s.steps) {
    t.computing += step.computing_ns;
    t.free += step.free_ns;
    t.span += step.end_ns - step.start_ns;
  }
  for (const CollectiveRecord& c : s.collectives) {
    t.wait += c.wait_ns();
    t.transit += c.transit_ns();
  }
  return t;
}

// The cause of a spread is the rank with the most of the part, or (wait) the least.
enum class Culprit { kMost, kLeast };

PartSpread spread(std::string part, const std::vector<RankTotals>& ranks, std::int64_t RankTotals::*member,
                  Culprit culprit, double min_spread_ns, const ClusterOptions& options) {
  PartSpread p{.part = std::move(part)};
  if (ranks.empty()) return p;
  double sum = 0;
  for (const RankTotals& r : ranks) {
    const std::int64_t v = r.*member;
    sum += static_cast<double>(v);
    if (p.min_rank < 0 || v < p.min_ns) p.min_ns = v, p.min_rank = r.rank;
    if (p.max_rank < 0 || v > p.max_ns) p.max_ns = v, p.max_rank = r.rank;
  }
  p.mean_ns = sum / static_cast<double>(ranks.size());
  const auto range = static_cast<double>(p.max_ns - p.min_ns);
  p.spread_pct = p.mean_ns > 0 ? 100.0 * range / p.mean_ns : 0;
  if (p.spread_pct > 100.0 * options.slow_threshold && range >= min_spread_ns && range > 0) {
    p.slow_rank = culprit == Culprit::kMost ? p.max_rank : p.min_rank;
  }
  return p;
}

}  // namespace

void slow_ranks(const std::vector<RankSummary>& ranks, const ClusterOptions& options, ClusterReport& report) {
  std::vector<RankTotals> totals;
  double span = 0;
  for (const RankSummary& s : ranks) {
    totals.push_back(totals_of(s));
    span += static_cast<double>(totals.back().span);
  }
  const double min_spread_ns =
      totals.empty() ? 0 : options.min_spread_of_step * span / static_cast<double>(totals.size());
  report.parts = {
      spread("Computing", totals, &RankTotals::computing, Culprit::kMost, min_spread_ns, options),
      spread("Communication Wait", totals, &RankTotals::wait, Culprit::kLeast, min_spread_ns, options),
      spread("Communication Transit", totals, &RankTotals::transit, Culprit::kMost, min_spread_ns, options),
      spread("Free", totals, &RankTotals::free, Culprit::kMost, min_spread_ns, options),
  };
  // A rank that waits at the collectives more than the one waiting least is not holding the job
  // back, whatever it spends more on: the time would be waited anyway (Note [Which rank is slow]).
  std::int64_t least_wait = 0;
  for (std::size_t i = 0; i < totals.size(); ++i)
    least_wait = i == 0 ? totals[i].wait : std::min(least_wait, totals[i].wait);
  for (PartSpread& p : report.parts) {
    if (p.slow_rank < 0 || p.part == "Communication Wait") continue;
    const auto it =
        std::find_if(totals.begin(), totals.end(), [&](const RankTotals& t) { return t.rank == p.slow_rank; });
    if (static_cast<double>(it->wait - least_wait) > min_spread_ns) p.slow_rank = -1;
  }
  std::map<int, std::vector<std::string>> slow;
  for (const PartSpread& p : report.parts) {
    if (p.slow_rank >= 0) slow[p.slow_rank].push_back(p.part);
  }
  for (auto& [rank, parts] : slow) report.slow_ranks.push_back({rank, std::move(parts)});
}

}  // namespace npuscope::analyzer::cluster_detail

// The union of time intervals as disjoint spans: what "busy", "computing" and "communication"
// mean wherever the analyzer counts overlapping tasks once (step time, cluster analysis).
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "npuscope/collector/huge_pages.h"
#include "trace_data.h"

namespace npuscope::analyzer {

class IntervalUnion {
 public:
  using Span = std::pair<std::int64_t, std::int64_t>;  // [start, end)
  // kTotalsOnly keeps the last span alone, for a caller that needs only total(), first() and last()
  // (a busy trace's union has a span per task: 160 MB for 10M tasks). Its intervals must come in
  // start order.
  enum Keep { kSpans, kTotalsOnly };
  explicit IntervalUnion(Keep keep = kSpans) : keep_spans_(keep == kSpans) {}

  // Intervals come in start order (a trace's tasks do) and are merged as they come; one that starts
  // before the last span (a caller that cannot keep the order) is merged in place.
  void add(std::int64_t start, std::int64_t end) {
    if (end <= start) return;
    if (spans_.empty() || start > spans_.back().second) {
      if (spans_.empty()) {
        first_ = start;
      } else if (!keep_spans_) {
        closed_ns_ = add_ns(closed_ns_, spans_.back().second - spans_.back().first);
        spans_.back() = Span{start, end};
        return;
      }
      // Note [Huge pages for row arrays]
      if (spans_.size() == spans_.capacity()) collector::reserve_in_huge_pages(spans_, 2 * spans_.size() + 16);
      spans_.emplace_back(start, end);
      return;
    }
    if (start >= spans_.back().first) {
      spans_.back().second = std::max(spans_.back().second, end);
      return;
    }
    add_out_of_order(start, end);
  }

  // Every span (kSpans; kTotalsOnly: the last one).
  const std::vector<Span>& spans() const { return spans_; }
  bool empty() const { return spans_.empty(); }
  std::int64_t first() const { return spans_.empty() ? 0 : std::min(first_, spans_.front().first); }
  std::int64_t last() const { return spans_.empty() ? 0 : spans_.back().second; }
  std::int64_t total() const {
    std::int64_t t = closed_ns_;
    for (const auto& [s, e] : spans_) t = add_ns(t, e - s);
    return t;
  }

 private:
  void add_out_of_order(std::int64_t start, std::int64_t end) {
    auto at = std::lower_bound(spans_.begin(), spans_.end(), start,
                               [](const Span& s, std::int64_t t) { return s.second < t; });
    if (at == spans_.end() || at->first > end) {
      spans_.insert(at, Span{start, end});
      return;
    }
    at->first = std::min(at->first, start);
    at->second = std::max(at->second, end);
    auto next = std::next(at);
    while (next != spans_.end() && next->first <= at->second) {
      at->second = std::max(at->second, next->second);
      next = spans_.erase(next);
    }
  }

  bool keep_spans_ = true;
  std::int64_t first_ = 0;      // the first span's start (kTotalsOnly forgets the span)
  std::int64_t closed_ns_ = 0;  // kTotalsOnly: the length of the spans before the last
  std::vector<Span> spans_;     // disjoint, in start order
};

// The length of the intersection of two unions (kept with kSpans).
inline std::int64_t intersection_ns(const IntervalUnion& a, const IntervalUnion& b) {
  std::int64_t t = 0;
  const auto& x = a.spans();
  const auto& y = b.spans();
  std::size_t i = 0, j = 0;
  while (i < x.size() && j < y.size()) {
    const std::int64_t lo = std::max(x[i].first, y[j].first), hi = std::min(x[i].second, y[j].second);
    if (hi > lo) t = add_ns(t, hi - lo);
    (x[i].second < y[j].second ? i : j) += 1;
  }
  return t;
}

}  // namespace npuscope::analyzer

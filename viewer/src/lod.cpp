#include "npuscope/viewer/lod.h"

#include <algorithm>
#include <cmath>

namespace npuscope::viewer {

std::size_t first_ending_after(const std::vector<TimelineItem>& row, std::int64_t t) {
  // A row's items do not overlap, so their ends are sorted like their starts.
  return static_cast<std::size_t>(
      std::upper_bound(row.begin(), row.end(), t,
                       [](std::int64_t v, const TimelineItem& i) { return v < i.end_ns(); }) -
      row.begin());
}

void visible_items(const std::vector<TimelineItem>& row, const ViewRange& view, std::vector<DrawItem>& out,
                   double min_px) {
  if (row.empty() || view.end_ns <= view.start_ns || view.width_px <= 0) return;
  const auto min_ns = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(min_px * view.ns_per_px())));
  const auto starting_from = [&](std::size_t from, std::int64_t t) {
    return static_cast<std::size_t>(
        std::lower_bound(row.begin() + static_cast<std::ptrdiff_t>(from), row.end(), t,
                         [](const TimelineItem& i, std::int64_t v) { return i.start_ns < v; }) -
        row.begin());
  };
  std::size_t i = first_ending_after(row, view.start_ns);
  while (i < row.size() && row[i].start_ns < view.end_ns) {
    const TimelineItem& first = row[i];
    if (first.end_ns() - first.start_ns >= min_ns) {
      out.push_back({first.start_ns, first.end_ns(), &first, 1});
      ++i;
      continue;
    }
    // A narrow item: swallow everything that starts within min_ns of the run's end, by search
    // (Note [Level of detail]), but nothing that starts after the view: a run of back-to-back
    // tasks would otherwise be followed to the end of the row, ~width/min_px searches per second
    // of trace past the view (88 ms a frame at mid zoom on 10M tasks).
    std::int64_t run_end = first.end_ns();
    std::size_t next = i + 1;
    while (next < row.size() && row[next].start_ns < std::min(run_end + min_ns, view.end_ns)) {
      const std::size_t after = starting_from(next, std::min(run_end + min_ns, view.end_ns));
      run_end = std::max(run_end, row[after - 1].end_ns());
      next = after;
    }
    out.push_back({first.start_ns, run_end, &first, static_cast<std::uint32_t>(next - i)});
    i = next;
  }
}

}  // namespace npuscope::viewer

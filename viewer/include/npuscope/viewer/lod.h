// Which items of a lane row to draw for a view, Tracy's way.
//
// Note [Level of detail]
// Items narrower than `min_px` pixels are not drawn one by one: a run of them (each starting within
// min_px of the previous one's end) folds into one drawn item that shows how many it holds. After
// folding an item the walk does not step to the next item but binary-searches the first item that
// starts at least min_px further on, so a zoomed-out row of 10M tasks costs O(row width / min_px)
// searches, not 10M steps: the frame time depends on the pixels, not the trace.
#pragma once

#include <cstdint>
#include <vector>

#include "npuscope/viewer/timeline_model.h"

namespace npuscope::viewer {

struct DrawItem {
  std::int64_t start_ns = 0, end_ns = 0;
  const TimelineItem* item = nullptr;  // the item, or the first of a folded run
  std::uint32_t count = 1;             // > 1: a folded run of this many items
};

struct ViewRange {
  std::int64_t start_ns = 0, end_ns = 0;  // what the timeline shows
  double width_px = 1;                    // over this many pixels
  double ns_per_px() const { return static_cast<double>(end_ns - start_ns) / width_px; }
};

inline constexpr double kFoldPx = 3;  // Tracy folds zones narrower than 3 px

// Appends to `out` what to draw of `row` (sorted by start, not overlapping) in `view`.
void visible_items(const std::vector<TimelineItem>& row, const ViewRange& view, std::vector<DrawItem>& out,
                   double min_px = kFoldPx);

// The index of the first item of `row` that ends after `t` (binary search).
std::size_t first_ending_after(const std::vector<TimelineItem>& row, std::int64_t t);

}  // namespace npuscope::viewer

#include "viewer_state.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace npuscope::viewer {
namespace {

constexpr std::int64_t kMinSpanNs = 20;  // zoomed in as far as 20 ns across the timeline

}  // namespace

void ViewerState::set_axis(std::int64_t first_ns, std::int64_t last_ns) {
  axis_first_ns_ = first_ns;
  axis_last_ns_ = last_ns;
  fit_all();
}

void ViewerState::fit_all() {
  const std::int64_t span = std::max<std::int64_t>(axis_last_ns_ - axis_first_ns_, 1000);
  view.start_ns = axis_first_ns_ - span / 50;
  view.end_ns = axis_first_ns_ + span + span / 50;
}

void ViewerState::zoom_to(std::int64_t start_ns, std::int64_t end_ns) {
  // No wider than zoom_around goes (4x the trace): a span of 2^62 ns has no pixel for any task.
  const std::int64_t max_span = 4 * std::max<std::int64_t>(axis_last_ns_ - axis_first_ns_, 1000);
  if (static_cast<double>(end_ns) - static_cast<double>(start_ns) > static_cast<double>(max_span)) {
    start_ns = std::min(start_ns, std::numeric_limits<std::int64_t>::max() - max_span);
    end_ns = start_ns + max_span;
  }
  if (end_ns - start_ns < kMinSpanNs) {
    const std::int64_t mid = start_ns + (end_ns - start_ns) / 2;
    start_ns = mid - kMinSpanNs / 2;
    end_ns = start_ns + kMinSpanNs;
  }
  view.start_ns = start_ns;
  view.end_ns = end_ns;
}

void ViewerState::zoom_around(double factor, double x_px) {
  const double span = static_cast<double>(view.end_ns - view.start_ns);
  const double at = static_cast<double>(view.start_ns) + span * std::clamp(x_px / view.width_px, 0.0, 1.0);
  const double max_span = 4.0 * static_cast<double>(std::max<std::int64_t>(axis_last_ns_ - axis_first_ns_, 1000));
  const double new_span = std::clamp(span * factor, static_cast<double>(kMinSpanNs), max_span);
  const double start = at - (at - static_cast<double>(view.start_ns)) * new_span / span;
  view.start_ns = static_cast<std::int64_t>(std::llround(start));
  view.end_ns = view.start_ns + static_cast<std::int64_t>(std::llround(new_span));
}

void ViewerState::pan_px(double dx_px) {
  const auto dt = static_cast<std::int64_t>(std::llround(dx_px * view.ns_per_px()));
  view.start_ns -= dt;
  view.end_ns -= dt;
}

bool ViewerState::select_task(std::int64_t task_id, bool reveal_it) {
  TimelineModel::Location at;
  if (!model_.find_task(task_id, at)) return false;
  select(at, reveal_it);
  return true;
}

void ViewerState::select(const TimelineModel::Location& at, bool reveal_it) {
  const TimelineItem& it = item(at);
  Selection s{it.id, at, {}, std::nullopt};  // the item keeps the id's low 32 bits: the row has all of it
  s.row.task_id = it.id;
  s.row.start_ns = it.start_ns;
  s.row.end_ns = it.end_ns();
  reader_.for_each(
      [&](const collector::TaskRow& r) {
        if (it.has_id(r.task_id)) s.row = r;
      },
      {.starting = {{it.start_ns, it.start_ns + 1}}});
  s.task_id = s.row.task_id;
  TimelineModel::Location launch;
  if (model_.find_launch(s.row.connection_id, launch)) s.launch = launch;
  selection_ = std::move(s);
  ++selection_serial_;
  const auto blocks = selected_blocks();
  pipe_block_ = blocks.empty() ? 0 : blocks.front().block;
  if (reveal_it) reveal(it.start_ns, it.end_ns());
}

std::span<const collector::KernelBlockRow> ViewerState::selected_blocks() const {
  if (!selection_) return {};
  return model_.kernels().blocks_of(selection_->task_id);
}

bool ViewerState::select_block(std::int32_t block, bool reveal_it) {
  for (const collector::KernelBlockRow& b : selected_blocks()) {
    if (b.block != block) continue;
    pipe_block_ = block;
    if (reveal_it) reveal(b.start_ns, b.end_ns);
    return true;
  }
  return false;
}

void ViewerState::zoom_to_block() {
  for (const collector::KernelBlockRow& b : selected_blocks()) {
    if (b.block != pipe_block_) continue;
    const std::int64_t d = std::max<std::int64_t>(b.end_ns - b.start_ns, kMinSpanNs);
    zoom_to(b.start_ns - d / 20, b.end_ns + d / 20);
  }
}

void ViewerState::zoom_to_selection() {
  if (!selection_) return;
  const TimelineItem& it = item(selection_->where);
  const std::int64_t d = std::max<std::int64_t>(it.end_ns() - it.start_ns, kMinSpanNs);
  zoom_to(it.start_ns - d / 2, it.end_ns() + d / 2);  // the task takes the middle half
}

void ViewerState::reveal(std::int64_t start_ns, std::int64_t end_ns) {
  const std::int64_t span = view.end_ns - view.start_ns;
  const std::int64_t d = end_ns - start_ns;
  if (d > span || static_cast<double>(d) < view.ns_per_px() * 2) {
    // Too wide to see or too narrow to click: frame it, in the middle half.
    const std::int64_t margin = std::max<std::int64_t>(d, kMinSpanNs) / 2;
    zoom_to(start_ns - margin, end_ns + margin);
    return;
  }
  if (start_ns >= view.start_ns && end_ns <= view.end_ns) return;
  const std::int64_t mid = start_ns + d / 2;
  view.start_ns = mid - span / 2;
  view.end_ns = view.start_ns + span;
}

}  // namespace npuscope::viewer

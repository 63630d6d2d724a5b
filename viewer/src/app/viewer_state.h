// What the timeline and the panels share: the model, the reader for details, the view range and the
// selection. Panels change the view through it (a click in the compare table jumps to the op).
#pragma once

#include <optional>
#include <string>

#include "npuscope/collector/trace_reader.h"
#include "npuscope/viewer/cluster_model.h"
#include "npuscope/viewer/frame_stats.h"
#include "npuscope/viewer/lod.h"
#include "npuscope/viewer/op_search.h"
#include "npuscope/viewer/pipe_lanes.h"
#include "npuscope/viewer/timeline_model.h"

namespace npuscope::viewer {

class DiffJob;  // diff_job.h

struct Selection {
  std::int64_t task_id = 0;
  TimelineModel::Location where;                  // in a stream lane
  collector::TaskRow row;                         // the task's full row, read from the trace on selection
  std::optional<TimelineModel::Location> launch;  // the API call that launched it, if recorded
};

class ViewerState {
 public:
  ViewerState(const TimelineModel& model, const collector::TraceReader& reader)
      : pipe_cache(model),
        model_(model),
        reader_(reader),
        axis_first_ns_(model.first_ns()),
        axis_last_ns_(model.last_ns()) {
    fit_all();
  }

  const TimelineModel& model() const { return model_; }
  const collector::TraceReader& reader() const { return reader_; }
  const TimelineItem& item(const TimelineModel::Location& at) const {
    return model_.lanes()[at.lane].rows[at.row][at.index];
  }

  // The time axis: the trace's first and last event, or those of all ranks in a multi-rank view
  // (Note [Cluster model] in npuscope/viewer/cluster_model.h). The ruler counts from its first;
  // fit-all and the widest zoom follow it.
  std::int64_t axis_first_ns() const { return axis_first_ns_; }
  std::int64_t axis_last_ns() const { return axis_last_ns_; }
  void set_axis(std::int64_t first_ns, std::int64_t last_ns);  // and fits all

  // The range shown (width_px is the timeline's, set by it each frame).
  ViewRange view;
  void fit_all();
  void zoom_to(std::int64_t start_ns, std::int64_t end_ns);
  // Zooms by `factor` (< 1 in) keeping the time under pixel `x_px` of the timeline in place.
  void zoom_around(double factor, double x_px);
  void pan_px(double dx_px);

  const std::optional<Selection>& selection() const { return selection_; }
  // Selects a task of a stream lane; with `reveal`, scrolls (and if it is tiny, zooms) it into view.
  bool select_task(std::int64_t task_id, bool reveal);
  void select(const TimelineModel::Location& at, bool reveal);
  void clear_selection() { selection_.reset(); }
  void zoom_to_selection();
  // Bumped on every change of selection, so that panels reload what they show of it.
  int selection_serial() const { return selection_serial_; }

  // A selected custom kernel shows the pipe lanes of one of its blocks under its stream (Note [Pipe
  // lanes] in npuscope/viewer/pipe_lanes.h), unless show_pipes is off. A selection starts at its
  // first block (0).
  PipeCache pipe_cache;
  bool show_pipes = true;
  std::int32_t pipe_block() const { return pipe_block_; }
  // The selection's KERNEL_BLOCK rows (empty unless it is a custom kernel).
  std::span<const collector::KernelBlockRow> selected_blocks() const;
  // Picks the block whose lanes show; with `reveal`, brings it into view (zooming if it is too small
  // or too large to see). False if the selection has no block `block`.
  bool select_block(std::int32_t block, bool reveal);
  void zoom_to_block();  // the picked block, nearly filling the view

  // The op search (search panel) and next / previous in it (also the N / P keys).
  SearchCursor search;
  void step_search(int dir) {
    if (const TimelineModel::Location* at = search.step(dir)) select(*at, true);
  }

  // In a multi-rank view: this rank's part of the collective selected on any rank, outlined by its
  // stream lane (set when the selection changes, not per frame).
  std::optional<CollectiveMember> collective;

  // --diff BASE.db: the diff against BASE that the Diff and details panels show (owned by the
  // session); null without --diff.
  DiffJob* diff = nullptr;
  // The statistics of the frame being drawn (--frame-stats): panels add what they drew. Null
  // between frames.
  FrameStats* frame_stats = nullptr;

  // A panel to bring to the front on the next frame ("" none).
  std::string focus_panel;
  // One frame to be written (--screenshot): work a panel does in the background is waited for.
  bool single_frame = false;

 private:
  void reveal(std::int64_t start_ns, std::int64_t end_ns);

  const TimelineModel& model_;
  const collector::TraceReader& reader_;
  std::optional<Selection> selection_;
  int selection_serial_ = 0;
  std::int32_t pipe_block_ = 0;
  std::int64_t axis_first_ns_ = 0, axis_last_ns_ = 0;
};

}  // namespace npuscope::viewer

// The timeline: a time ruler over the stacked lanes, zoom (wheel, W/S) around the cursor, pan (drag,
// A/D), fit-all (F), zoom to the selection (Z), and the flow line from a selected task to the API
// call that launched it. The lanes draw themselves (lane_view.h); a selected custom kernel's pipe
// lanes follow its stream's lane (pipe_group.h).
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "lane_view.h"
#include "npuscope/viewer/frame_stats.h"
#include "pipe_group.h"
#include "viewer_state.h"

namespace npuscope::viewer {

class Timeline {
 public:
  explicit Timeline(ViewerState& state);
  // Draws into the current ImGui window, filling `height` pixels; fills `stats` with what was drawn.
  void draw(float height, FrameStats& stats);

  // The pieces of draw(), for several timelines on one axis (a lane group per rank: cluster_view.h).
  // The ruler, `width` pixels wide, setting the view's width.
  void draw_ruler_row(float width);
  // The lanes at the cursor (in the caller's scrolling child) from column `origin_x`; appends to
  // `stats`. Mouse input over them zooms, pans and selects.
  void draw_lanes(float origin_x, float width, FrameStats& stats);
  // The keys (W/S/A/D, F, Z, N/P, Esc): once a frame, for one timeline; draw_lanes() handles them
  // itself unless the timeline is one of a group.
  void handle_keys();
  // One of a group: keys are the group's, and the grid stops below the last lane instead of filling
  // the window.
  void set_in_group() { alone_ = false; }

 private:
  float draw_lane(LaneView& lane, LaneDrawContext& ctx, float gutter_x, float y, FrameStats& stats);
  float draw_pipes(LaneDrawContext& ctx, float gutter_x, float y, FrameStats& stats);
  void handle_input(float x0, float x1, bool hovered, bool active);
  void draw_ruler(ImDrawList* dl, float x0, float x1, float y) const;
  void draw_grid(ImDrawList* dl, float x0, float x1, float ya, float yb) const;
  bool draw_flow(ImDrawList* dl, const LaneDrawContext& ctx) const;  // false: not drawn
  // The time range being dragged out with the right button (zoomed into on release), as Nsight
  // Systems does: its start in pixels from x0, while the button is down.
  void draw_range(ImDrawList* dl, float x0, float ya, float yb) const;

  ViewerState& state_;
  std::vector<std::unique_ptr<LaneView>> lanes_;
  PipeGroup pipes_;            // the selected custom kernel's pipe lanes, under its stream's lane
  std::vector<float> lane_y_;  // this frame's top of each lane; < 0 when not on screen
  std::vector<DrawItem> scratch_;
  std::optional<double> range_from_px_;
  double key_centre_px_ = 0;  // where W/S zoom around: the mouse over the lanes, else the middle
  bool alone_ = true;
};

}  // namespace npuscope::viewer

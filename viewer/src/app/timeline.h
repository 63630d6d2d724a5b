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
};

}  // namespace npuscope::viewer

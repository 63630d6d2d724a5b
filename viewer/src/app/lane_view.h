// One class per lane kind (STYLE 8, Tracy's TimelineItem): a lane knows its height and draws itself
// into the timeline's draw list; the timeline only stacks them and handles zoom and pan.
#pragma once

#include <imgui.h>

#include <memory>
#include <vector>

#include "npuscope/viewer/frame_stats.h"
#include "npuscope/viewer/lod.h"
#include "npuscope/viewer/pipe_lanes.h"
#include "viewer_state.h"

namespace npuscope::viewer {

inline constexpr float kRowHeight = 18;
inline constexpr float kLaneHeaderHeight = 16;

// Where and how one frame draws (set up by the Timeline).
struct LaneDrawContext {
  ImDrawList* draw_list = nullptr;
  ViewerState* state = nullptr;
  float x0 = 0, x1 = 0;  // the timeline's pixel columns
  float y = 0;           // the lane's top
  ImVec2 mouse;
  bool mouse_in_timeline = false;
  bool clicked = false;  // a click (not the end of a drag) this frame
  LaneFrameStats* stats = nullptr;
  std::vector<DrawItem>* scratch = nullptr;

  float x_of(std::int64_t t) const {
    const ViewRange& v = state->view;
    return x0 + static_cast<float>(static_cast<double>(t - v.start_ns) / v.ns_per_px());
  }
  // A fractional time (a pipe lane's cycles in ns).
  float x_of_ns(double t) const {
    const ViewRange& v = state->view;
    return x0 + static_cast<float>((t - static_cast<double>(v.start_ns)) / v.ns_per_px());
  }
  bool hovering(float ax, float ay, float bx, float by) const {
    return mouse_in_timeline && mouse.x >= ax && mouse.x < bx && mouse.y >= ay && mouse.y < by;
  }
};

// The index of a lane view that shows no lane of the model (a pipe lane).
inline constexpr std::size_t kNoModelLane = static_cast<std::size_t>(-1);

class LaneView {
 public:
  LaneView(const Lane& lane, std::size_t index) : lane_(lane), index_(index) {}
  virtual ~LaneView() = default;

  const Lane& lane() const { return lane_; }
  std::size_t index() const { return index_; }  // in the model's lanes, or kNoModelLane
  // 0: a sub-lane, titled in the gutter beside its rows (a pipe under its task's stream).
  virtual float header_height() const { return kLaneHeaderHeight; }
  virtual float height() const { return header_height() + kRowHeight * static_cast<float>(lane_.rows.size()); }
  // The top of row `row` when the lane's top is at `lane_y`.
  float row_top(float lane_y, std::size_t row) const {
    return lane_y + header_height() + kRowHeight * static_cast<float>(row);
  }
  // The same for lanes with a header (every lane of the model).
  static float row_y(float lane_y, std::size_t row) {
    return lane_y + kLaneHeaderHeight + kRowHeight * static_cast<float>(row);
  }
  // Draws the lane body at ctx.y (the header is the timeline's).
  virtual void draw(LaneDrawContext& ctx) = 0;

 protected:
  const Lane& lane_;
  std::size_t index_;
};

// Lanes of ranges in rows (streams, host threads, copies, markers): Note [Level of detail] through
// visible_items, then per-kind colour, label and tooltip.
class RangeLaneView : public LaneView {
 public:
  using LaneView::LaneView;
  void draw(LaneDrawContext& ctx) override;

 protected:
  virtual ImU32 colour(const TimelineItem& item) const = 0;
  virtual std::string label(const TimelineItem& item) const = 0;
  virtual void tooltip(const ViewerState& state, const TimelineItem& item) const;
  virtual void fold_tooltip(const DrawItem& run) const;  // a folded run: how many, how long
  virtual void on_click(ViewerState&, std::size_t /*row*/, std::size_t /*index*/) const {}
  // The lane's item coordinates: the view in them (for visible_items) and their x. Time in ns, but
  // for pipe lanes (cycles of a block: Note [Pipe lanes] in npuscope/viewer/pipe_lanes.h).
  virtual ViewRange row_view(const ViewRange& view) const { return view; }
  virtual float x_at(const LaneDrawContext& ctx, std::int64_t t) const { return ctx.x_of(t); }
  // Whether items wide enough get a darker outline (back-to-back items of one colour stay apart).
  virtual bool outlined() const { return false; }
  // Outlines (selection, the launching call) drawn over a row's items.
  virtual void draw_overlay(LaneDrawContext&) const {}

  const TimelineModel* model_ = nullptr;  // set by draw(), for labels from STRING_IDS
};

// One view per lane of the model.
std::vector<std::unique_ptr<LaneView>> make_lane_views(const TimelineModel& model);

}  // namespace npuscope::viewer

namespace npuscope::viewer {

// The lane kinds (one class each, in their own files).
std::unique_ptr<LaneView> make_stream_lane(const Lane& lane, std::size_t index);
std::unique_ptr<LaneView> make_host_thread_lane(const Lane& lane, std::size_t index);
std::unique_ptr<LaneView> make_memcpy_lane(const Lane& lane, std::size_t index);
std::unique_ptr<LaneView> make_marker_lane(const Lane& lane, std::size_t index);
std::unique_ptr<LaneView> make_memory_lane(const Lane& lane, std::size_t index);
// A pipe lane of a block (lane: one of block.lanes, which must outlive the view).
std::unique_ptr<LaneView> make_pipe_lane(const Lane& lane, const BlockPipes& block);

}  // namespace npuscope::viewer

// A device stream's tasks: coloured by op type, or by compare verdict when the trace has compare
// results; overflow and underflow marks (and custom kernels' sanitizer findings) that stay visible
// when their task is folded; the selected task outlined.
#include "colours.h"
#include "lane_view.h"
#include "npuscope/viewer/time_format.h"

namespace npuscope::viewer {
namespace {

class StreamLaneView final : public RangeLaneView {
 public:
  StreamLaneView(const Lane& lane, std::size_t index) : RangeLaneView(lane, index) {
    const auto& row = lane.rows[0];
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (row[i].flags & (kOverflow | kUnderflow | kKernelFinding)) marks_.push_back(i);
    }
  }

 protected:
  ImU32 colour(const TimelineItem& item) const override {
    if (item.flags & kIntroduced) return kIntroducedColour;
    if (item.flags & kVerdictFail) return kFailColour;
    if (item.flags & kVerdictPass) return kPassColour;
    if (compare_colours_) return kUncomparedColour;
    return colour_for_key(model_->colour_key(lane_, item));
  }
  std::string label(const TimelineItem& item) const override { return model_->str(item.label_id); }

  void tooltip(const ViewerState& state, const TimelineItem& item) const override {
    ImGui::TextUnformatted(state.model().str(item.label_id).c_str());
    ImGui::Text("%s   %s", state.model().str(state.model().colour_key(lane_, item)).c_str(),
                format_duration(item.end_ns() - item.start_ns).c_str());
    ImGui::Text("task %lld, start %s", static_cast<long long>(item.id),
                format_duration(item.start_ns - state.axis_first_ns()).c_str());
    if (item.flags & kOverflow) ImGui::TextColored(ImVec4(1, 0.3f, 0.3f, 1), "overflow");
    if (item.flags & kUnderflow) ImGui::TextColored(ImVec4(0.3f, 0.5f, 1, 1), "underflow (results flushed to 0)");
    if (item.flags & kKernelFinding) ImGui::TextColored(ImVec4(1, 0.6f, 0.2f, 1), "sanitizer findings (Details)");
    if (item.flags & kKernel) ImGui::TextUnformatted("custom kernel: click for its pipe lanes");
    if (item.flags & kIntroduced)
      ImGui::TextUnformatted("compare: fail, introduced the error");
    else if (item.flags & kVerdictFail)
      ImGui::TextUnformatted("compare: fail");
    else if (item.flags & kVerdictPass)
      ImGui::TextUnformatted("compare: pass");
  }

  void on_click(ViewerState& state, std::size_t row, std::size_t index) const override {
    state.select({index_, row, index}, false);
  }

  void draw_overlay(LaneDrawContext& ctx) const override {
    const auto& row = lane_.rows[0];
    const ViewRange& v = ctx.state->view;
    // Overflow marks: a red triangle over each overflowing task in view, folded or not (blue: an
    // underflowing one; orange: a custom kernel's sanitizer findings).
    auto it = std::lower_bound(marks_.begin(), marks_.end(), first_ending_after(row, v.start_ns));
    const float top = row_y(ctx.y, 0);
    float last_x = -1e9f;
    for (; it != marks_.end() && row[*it].start_ns < v.end_ns; ++it) {
      const float x = ctx.x_of(row[*it].start_ns);
      if (x - last_x < 2) continue;
      last_x = x;
      ctx.draw_list->AddTriangleFilled(ImVec2(x - 4, top - 3), ImVec2(x + 4, top - 3), ImVec2(x, top + 5),
                                       row[*it].flags & kOverflow    ? kOverflowColour
                                       : row[*it].flags & kUnderflow ? kUnderflowColour
                                                                     : kFindingColour);
    }
    const auto& sel = ctx.state->selection();
    if (sel && sel->where.lane == index_) {
      const TimelineItem& item = row[sel->where.index];
      const float xa = ctx.x_of(item.start_ns), xb = std::max(ctx.x_of(item.end_ns()), xa + 2);
      ctx.draw_list->AddRect(ImVec2(xa - 1, top), ImVec2(xb + 1, top + kRowHeight), kSelectionColour, 0, 0, 2.5f);
    }
    if (const auto& c = ctx.state->collective; c && c->where.lane == index_) draw_collective(ctx, *c, top);
  }

  // The selected collective's task on this rank (Note [Cluster model]): outlined, its wait (arrival to
  // the last rank's arrival) shaded, and a tick where the transfer starts, the same time on every
  // rank.
  void draw_collective(LaneDrawContext& ctx, const CollectiveMember& c, float top) const {
    const TimelineItem& item = lane_.rows[0][c.where.index];
    const float xa = ctx.x_of(item.start_ns), xb = std::max(ctx.x_of(item.end_ns()), xa + 3);
    const float bottom = top + kRowHeight;
    if (c.start_ns > c.arrival_ns) {
      ctx.draw_list->AddRectFilled(ImVec2(ctx.x_of(c.arrival_ns), top + 3), ImVec2(ctx.x_of(c.start_ns), bottom - 3),
                                   IM_COL32(80, 220, 255, 70));
    }
    const float xs = ctx.x_of(c.start_ns);
    ctx.draw_list->AddLine(ImVec2(xs, top - 3), ImVec2(xs, bottom + 3), kCollectiveColour, 2.0f);
    ctx.draw_list->AddRect(ImVec2(xa - 2, top - 1), ImVec2(xb + 2, bottom + 1), kCollectiveColour, 0, 0, 2.0f);
    const ViewRange& v = ctx.state->view;
    if (item.end_ns() >= v.start_ns && item.start_ns <= v.end_ns) ++ctx.stats->highlighted;
  }

 public:
  void draw(LaneDrawContext& ctx) override {
    compare_colours_ = ctx.state->model().has_compare_results();
    RangeLaneView::draw(ctx);
  }

 private:
  std::vector<std::size_t> marks_;  // indices into rows[0]: overflows and kernels with findings
  bool compare_colours_ = false;
};

}  // namespace

std::unique_ptr<LaneView> make_stream_lane(const Lane& lane, std::size_t index) {
  return std::make_unique<StreamLaneView>(lane, index);
}

}  // namespace npuscope::viewer

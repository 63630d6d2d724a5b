// The host thread (API calls, nested), copy and marker lanes, and the factory for every kind.
#include "colours.h"
#include "lane_view.h"
#include "npuscope/viewer/time_format.h"

namespace npuscope::viewer {
namespace {

class HostThreadLaneView final : public RangeLaneView {
 public:
  using RangeLaneView::RangeLaneView;

 protected:
  ImU32 colour(const TimelineItem& item) const override { return colour_for_key(item.label_id * 7 + 3); }
  std::string label(const TimelineItem& item) const override { return model_->str(item.label_id); }
  void tooltip(const ViewerState& state, const TimelineItem& item) const override {
    RangeLaneView::tooltip(state, item);
    if (item.id != 0) ImGui::Text("connection %lld", static_cast<long long>(item.id));
  }
  // The call that launched the selected task (Note: the flow line itself is the timeline's).
  void draw_overlay(LaneDrawContext& ctx) const override {
    const auto& sel = ctx.state->selection();
    if (!sel || !sel->launch || sel->launch->lane != index_) return;
    const TimelineItem& item = ctx.state->item(*sel->launch);
    const float ya = row_y(ctx.y, sel->launch->row);
    const float xa = ctx.x_of(item.start_ns), xb = std::max(ctx.x_of(item.end_ns()), xa + 2);
    ctx.draw_list->AddRect(ImVec2(xa - 1, ya), ImVec2(xb + 1, ya + kRowHeight), kSelectionColour, 0, 0, 2.5f);
  }
};

class MemcpyLaneView final : public RangeLaneView {
 public:
  using RangeLaneView::RangeLaneView;

 protected:
  static std::int32_t copy_kind(const TimelineItem& item) {
    return static_cast<std::int32_t>((item.flags >> kCopyKindShift) & 0xff);
  }
  static std::string kind_name(std::int32_t kind) { return collector::stored_name<CopyKind>(kind, "copy"); }
  ImU32 colour(const TimelineItem& item) const override {
    const std::int32_t kind = copy_kind(item);
    if (is(kind, CopyKind::kHostToDevice)) return IM_COL32(110, 170, 230, 255);
    if (is(kind, CopyKind::kDeviceToHost)) return IM_COL32(230, 170, 100, 255);
    return IM_COL32(170, 140, 220, 255);
  }
  std::string label(const TimelineItem& item) const override { return kind_name(copy_kind(item)); }
  void tooltip(const ViewerState&, const TimelineItem& item) const override {
    ImGui::Text("%s copy, task %lld", kind_name(copy_kind(item)).c_str(), static_cast<long long>(item.id));
    ImGui::Text("duration %s", format_duration(item.end_ns() - item.start_ns).c_str());
  }
};

class MarkerLaneView final : public RangeLaneView {
 public:
  using RangeLaneView::RangeLaneView;

 protected:
  ImU32 colour(const TimelineItem& item) const override {
    return item.flags & kStep ? IM_COL32(240, 200, 90, 255) : IM_COL32(150, 200, 200, 255);
  }
  std::string label(const TimelineItem& item) const override {
    if (item.flags & kStep) return "step " + std::to_string(item.id);
    return model_->str(item.label_id);
  }
  void tooltip(const ViewerState& state, const TimelineItem& item) const override {
    ImGui::TextUnformatted(label(item).c_str());
    if (item.end_ns() == item.start_ns)
      ImGui::TextUnformatted("instant marker");
    else
      ImGui::Text("duration %s", format_duration(item.end_ns() - item.start_ns).c_str());
    (void)state;
  }
};

// A PyTorch script's ops: modules in blues (forward) and oranges (their backward), aten ops by name,
// the optimizer in green.
class PytorchLaneView final : public RangeLaneView {
 public:
  using RangeLaneView::RangeLaneView;

 protected:
  ImU32 colour(const TimelineItem& item) const override {
    if (is(item.host_op_kind(), HostOpKind::kModule)) return IM_COL32(90, 130, 200, 255);
    if (is(item.host_op_kind(), HostOpKind::kOptimizer)) return IM_COL32(110, 180, 110, 255);
    if (is(item.host_op_kind(), HostOpKind::kBackwardFunction)) return IM_COL32(215, 140, 80, 255);
    return colour_for_key(item.label_id * 5 + 1);
  }
  std::string label(const TimelineItem& item) const override { return model_->str(item.label_id); }
  void tooltip(const ViewerState& state, const TimelineItem& item) const override {
    RangeLaneView::tooltip(state, item);
    ImGui::Text("%s, %s pass", collector::stored_name<HostOpKind>(item.host_op_kind(), "kind").c_str(),
                collector::stored_name<ModelPass>(item.pass(), "pass").c_str());
  }
};

}  // namespace

std::unique_ptr<LaneView> make_host_thread_lane(const Lane& lane, std::size_t index) {
  return std::make_unique<HostThreadLaneView>(lane, index);
}
std::unique_ptr<LaneView> make_memcpy_lane(const Lane& lane, std::size_t index) {
  return std::make_unique<MemcpyLaneView>(lane, index);
}
std::unique_ptr<LaneView> make_marker_lane(const Lane& lane, std::size_t index) {
  return std::make_unique<MarkerLaneView>(lane, index);
}

std::vector<std::unique_ptr<LaneView>> make_lane_views(const TimelineModel& model) {
  std::vector<std::unique_ptr<LaneView>> views;
  for (std::size_t i = 0; i < model.lanes().size(); ++i) {
    const Lane& lane = model.lanes()[i];
    switch (lane.kind) {
      case LaneKind::kStream: views.push_back(make_stream_lane(lane, i)); break;
      case LaneKind::kHostThread: views.push_back(make_host_thread_lane(lane, i)); break;
      case LaneKind::kMemcpy: views.push_back(make_memcpy_lane(lane, i)); break;
      case LaneKind::kMarkers: views.push_back(make_marker_lane(lane, i)); break;
      case LaneKind::kMemory: views.push_back(make_memory_lane(lane, i)); break;
      case LaneKind::kPytorch: views.push_back(std::make_unique<PytorchLaneView>(lane, i)); break;
      case LaneKind::kPipe: break;  // never a lane of the model: see PipeGroup
    }
  }
  return views;
}

}  // namespace npuscope::viewer

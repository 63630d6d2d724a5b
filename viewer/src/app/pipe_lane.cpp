// A pipe of a custom kernel's block (Note [Pipe lanes] in npuscope/viewer/pipe_lanes.h): its
// instructions in cycles from the block's start, drawn at their device time, coloured by
// instruction; the tooltip gives cycles, ns, bytes and the source line.
#include "colours.h"
#include "lane_view.h"
#include "npuscope/viewer/time_format.h"

namespace npuscope::viewer {
namespace {

class PipeLaneView final : public RangeLaneView {
 public:
  PipeLaneView(const Lane& lane, const BlockPipes& block) : RangeLaneView(lane, kNoModelLane), block_(block) {}
  float header_height() const override { return 0; }

 protected:
  bool outlined() const override { return true; }  // DataCopy after DataCopy: two copies, not one
  ViewRange row_view(const ViewRange& view) const override { return block_.cycle_view(view); }
  float x_at(const LaneDrawContext& ctx, std::int64_t cycle) const override {
    return ctx.x_of_ns(block_.ns_at(static_cast<double>(cycle)));
  }
  ImU32 colour(const TimelineItem& item) const override { return colour_for_key(item.label_id * 3 + 1); }
  std::string label(const TimelineItem& item) const override { return model_->str(item.label_id); }

  void fold_tooltip(const DrawItem& run) const override {
    ImGui::Text("%u instructions, cycles %lld - %lld", run.count, static_cast<long long>(run.start_ns),
                static_cast<long long>(run.end_ns));
  }

  void tooltip(const ViewerState& state, const TimelineItem& item) const override {
    const TimelineModel& m = state.model();
    const InstructionDetail& d = block_.detail(item);
    ImGui::TextUnformatted(m.str(item.label_id).c_str());
    ImGui::Text("%s, block %d (core %d)", lane_.title.c_str(), block_.block.block, block_.block.core);
    ImGui::Text("cycles %lld - %lld (%lld) from the block's start", static_cast<long long>(item.start_ns),
                static_cast<long long>(item.end_ns()), static_cast<long long>(item.end_ns() - item.start_ns));
    const std::int64_t task_start = state.selection() ? state.selection()->row.start_ns : block_.block.start_ns;
    ImGui::Text("ns %lld - %lld (%s) from the task's start", static_cast<long long>(d.start_ns - task_start),
                static_cast<long long>(d.end_ns - task_start), format_duration(d.end_ns - d.start_ns).c_str());
    if (d.bytes > 0) ImGui::Text("%lld bytes", static_cast<long long>(d.bytes));
    if (d.file_id != 0) ImGui::Text("%s:%d", m.str(d.file_id).c_str(), d.line);
  }

 private:
  const BlockPipes& block_;
};

}  // namespace

std::unique_ptr<LaneView> make_pipe_lane(const Lane& lane, const BlockPipes& block) {
  return std::make_unique<PipeLaneView>(lane, block);
}

}  // namespace npuscope::viewer

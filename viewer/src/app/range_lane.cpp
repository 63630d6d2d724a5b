// Drawing a lane of ranges (Note [Level of detail]): each row's visible items, folded runs darker
// with their count, labels where they fit, a tooltip and a click on the item under the mouse.
#include <algorithm>
#include <string>

#include "colours.h"
#include "lane_view.h"
#include "npuscope/viewer/time_format.h"

namespace npuscope::viewer {
namespace {

void draw_clipped_text(ImDrawList* dl, float ax, float ay, float bx, float by, const std::string& text) {
  if (bx - ax < 14) return;
  const ImVec4 clip(std::max(ax, dl->GetClipRectMin().x), ay, std::min(bx, dl->GetClipRectMax().x), by);
  dl->AddText(nullptr, 0, ImVec2(std::max(ax, clip.x) + 3, ay + 2), kTextColour, text.c_str(), nullptr, 0, &clip);
}

}  // namespace

void RangeLaneView::tooltip(const ViewerState& state, const TimelineItem& item) const {
  ImGui::TextUnformatted(state.model().str(item.label_id).c_str());
  ImGui::Text("duration %s", format_duration(item.end_ns() - item.start_ns).c_str());
}

void RangeLaneView::fold_tooltip(const DrawItem& run) const {
  ImGui::Text("%u items, %s", run.count, format_duration(run.end_ns - run.start_ns).c_str());
}

void RangeLaneView::draw(LaneDrawContext& ctx) {
  ViewerState& state = *ctx.state;
  model_ = &state.model();
  std::vector<DrawItem>& drawn = *ctx.scratch;
  ctx.stats->rows = lane_.rows.size();
  const ViewRange view = row_view(state.view);
  for (std::size_t r = 0; r < lane_.rows.size(); ++r) {
    const auto& row = lane_.rows[r];
    drawn.clear();
    visible_items(row, view, drawn);
    FrameStats::add_row(*ctx.stats, drawn);
    const float ya = row_top(ctx.y, r) + 1, yb = ya + kRowHeight - 2;
    for (const DrawItem& d : drawn) {
      const float xa = std::max(x_at(ctx, d.start_ns), ctx.x0 - 1);
      const float xb = std::min(std::max(x_at(ctx, d.end_ns), xa + 1), ctx.x1 + 1);
      const bool hovered = ctx.hovering(xa, ya, std::max(xb, xa + 2), yb);
      if (d.count > 1) {
        ctx.draw_list->AddRectFilled(ImVec2(xa, ya), ImVec2(xb, yb), darker(colour(*d.item)));
        draw_clipped_text(ctx.draw_list, xa, ya, xb, yb, std::to_string(d.count));
        if (hovered) {
          ImGui::BeginTooltip();
          fold_tooltip(d);
          ImGui::TextUnformatted("zoom in to see them one by one");
          ImGui::EndTooltip();
        }
        continue;
      }
      ctx.draw_list->AddRectFilled(ImVec2(xa, ya), ImVec2(xb, yb), colour(*d.item));
      if (outlined() && xb - xa > 4) ctx.draw_list->AddRect(ImVec2(xa, ya), ImVec2(xb, yb), darker(colour(*d.item)));
      if (xb - xa > 30) draw_clipped_text(ctx.draw_list, xa, ya, xb, yb, label(*d.item));
      if (hovered) {
        ImGui::BeginTooltip();
        tooltip(state, *d.item);
        ImGui::EndTooltip();
        if (ctx.clicked) on_click(state, r, static_cast<std::size_t>(d.item - row.data()));
      }
    }
  }
  draw_overlay(ctx);
}

}  // namespace npuscope::viewer

#include "timeline.h"

#include <algorithm>
#include <cmath>

#include "colours.h"
#include "npuscope/viewer/time_format.h"

namespace npuscope::viewer {
namespace {

constexpr float kGutter = 170;  // lane titles
constexpr float kRulerHeight = 22;
constexpr float kSubLaneIndent = 10;  // pipe lanes under their task's stream
constexpr ImU32 kSubLaneColour = IM_COL32(34, 40, 56, 255);

}  // namespace

Timeline::Timeline(ViewerState& state) : state_(state), lanes_(make_lane_views(state.model())) {}

void Timeline::draw(float height, FrameStats& stats) {
  const float width = ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ScrollbarSize;
  const float origin_x = ImGui::GetCursorScreenPos().x;
  draw_ruler_row(width);
  stats = FrameStats{};
  ImGui::BeginChild("lanes", ImVec2(0, std::max(40.0f, height - kRulerHeight)), false,
                    ImGuiWindowFlags_NoScrollWithMouse);
  draw_lanes(origin_x, width, stats);
  ImGui::EndChild();
  stats.view_start_ns = state_.view.start_ns;
  stats.view_end_ns = state_.view.end_ns;
  stats.width_px = state_.view.width_px;
}

void Timeline::draw_ruler_row(float width) {
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float x0 = origin.x + kGutter, x1 = origin.x + width;
  state_.view.width_px = std::max(1.0f, x1 - x0);
  draw_ruler(ImGui::GetWindowDrawList(), x0, x1, origin.y);
  ImGui::Dummy(ImVec2(width, kRulerHeight));
}

void Timeline::draw_lanes(float origin_x, float width, FrameStats& stats) {
  const float x0 = origin_x + kGutter, x1 = origin_x + width;
  state_.view.width_px = std::max(1.0f, x1 - x0);
  pipes_.update(state_);
  float total = pipes_.height();
  for (const auto& lane : lanes_) total += lane->height();
  const ImVec2 top = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("canvas", ImVec2(std::max(1.0f, width), std::max(1.0f, total)));
  const bool hovered = ImGui::IsItemHovered(), active = ImGui::IsItemActive();
  handle_input(x0, x1, hovered, active);
  if (alone_) handle_keys();

  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 clip_a = dl->GetClipRectMin(), clip_b = dl->GetClipRectMax();
  // Alone, the grid runs to the bottom of the window; in a rank's group, to the end of its lanes.
  draw_grid(dl, x0, x1, std::max(clip_a.y, top.y), alone_ ? clip_b.y : std::min(clip_b.y, top.y + total));
  const ImGuiIO& io = ImGui::GetIO();
  LaneDrawContext ctx;
  ctx.draw_list = dl;
  ctx.state = &state_;
  ctx.x0 = x0;
  ctx.x1 = x1;
  ctx.mouse = io.MousePos;
  ctx.mouse_in_timeline = hovered && io.MousePos.x >= x0 && !active;
  ctx.clicked = hovered && ImGui::IsMouseReleased(ImGuiMouseButton_Left) && io.MouseDragMaxDistanceSqr[0] < 9;
  ctx.scratch = &scratch_;
  lane_y_.assign(state_.model().lanes().size(), -1);
  float y = top.y;
  for (const auto& lane : lanes_) {
    if (y + lane->height() >= clip_a.y && y <= clip_b.y) lane_y_[lane->index()] = y;
    y = draw_lane(*lane, ctx, origin_x, y, stats);
    if (pipes_.under() == lane->index()) y = draw_pipes(ctx, origin_x, y, stats);
  }
  dl->PushClipRect(ImVec2(x0, clip_a.y), ImVec2(x1, clip_b.y), true);
  if (draw_flow(dl, ctx)) stats.flow_line = true;
  draw_range(dl, x0, top.y, y);
  if (state_.selection()) stats.selected_task = state_.selection()->task_id;
  dl->PopClipRect();
}

// A lane at `y` (when on screen: its header, or its title in the gutter for a sub-lane, then its
// body); returns the y below it.
float Timeline::draw_lane(LaneView& lane, LaneDrawContext& ctx, float gutter_x, float y, FrameStats& stats) {
  ImDrawList* dl = ctx.draw_list;
  const ImVec2 clip_a = dl->GetClipRectMin(), clip_b = dl->GetClipRectMax();
  const float h = lane.height();
  if (y + h < clip_a.y || y > clip_b.y) return y + h;
  if (lane.header_height() > 0) {
    dl->AddRectFilled(ImVec2(gutter_x, y), ImVec2(ctx.x1, y + kLaneHeaderHeight), IM_COL32(40, 42, 50, 255));
    dl->AddText(ImVec2(gutter_x + 4, y + 1), IM_COL32(220, 220, 230, 255), lane.lane().title.c_str());
  } else {
    dl->AddRectFilled(ImVec2(gutter_x + kSubLaneIndent, y), ImVec2(ctx.x0 - 2, y + h), kSubLaneColour);
    dl->AddRectFilled(ImVec2(ctx.x0, y), ImVec2(ctx.x1, y + h), IM_COL32(120, 150, 220, 14));
    dl->AddText(ImVec2(gutter_x + kSubLaneIndent + 6, y + 2), IM_COL32(200, 210, 230, 255), lane.lane().title.c_str());
  }
  auto& ls = stats.lanes.emplace_back();
  ls.title = lane.lane().title;
  ls.kind = lane.lane().kind;
  ctx.y = y;
  ctx.stats = &ls;
  dl->PushClipRect(ImVec2(ctx.x0, std::max(clip_a.y, y)), ImVec2(ctx.x1, clip_b.y), true);
  lane.draw(ctx);
  dl->PopClipRect();
  return y + h;
}

// The selected kernel's pipe lanes (pipe_group.h): a header naming the block, then the lanes.
float Timeline::draw_pipes(LaneDrawContext& ctx, float gutter_x, float y, FrameStats& stats) {
  ImDrawList* dl = ctx.draw_list;
  if (y + kLaneHeaderHeight >= dl->GetClipRectMin().y && y <= dl->GetClipRectMax().y) {
    dl->AddRectFilled(ImVec2(gutter_x + kSubLaneIndent, y), ImVec2(ctx.x1, y + kLaneHeaderHeight), kSubLaneColour);
    dl->AddText(ImVec2(gutter_x + kSubLaneIndent + 6, y + 1), IM_COL32(160, 200, 255, 255), pipes_.header().c_str());
  }
  y += kLaneHeaderHeight;
  for (const auto& lane : pipes_.lanes()) y = draw_lane(*lane, ctx, gutter_x, y, stats);
  stats.pipe_block = pipes_.block();
  return y;
}

void Timeline::handle_input(float x0, float x1, bool hovered, bool active) {
  const ImGuiIO& io = ImGui::GetIO();
  const double mouse_px = std::clamp(static_cast<double>(io.MousePos.x - x0), 0.0, static_cast<double>(x1 - x0));
  key_centre_px_ = hovered ? mouse_px : (x1 - x0) / 2;
  if (hovered && io.MouseWheel != 0) state_.zoom_around(std::pow(0.8, io.MouseWheel), mouse_px);
  if (active && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 2)) state_.pan_px(io.MouseDelta.x);
  // Right-drag a range, release to zoom into it.
  if (hovered && ImGui::IsMouseClicked(ImGuiMouseButton_Right)) range_from_px_ = mouse_px;
  if (range_from_px_ && ImGui::IsMouseReleased(ImGuiMouseButton_Right)) {
    const double a = std::min(*range_from_px_, mouse_px), b = std::max(*range_from_px_, mouse_px);
    const double ns_per_px = state_.view.ns_per_px();
    if (b - a >= 3) {
      state_.zoom_to(state_.view.start_ns + static_cast<std::int64_t>(a * ns_per_px),
                     state_.view.start_ns + static_cast<std::int64_t>(b * ns_per_px));
    }
    range_from_px_.reset();
  }
}

void Timeline::handle_keys() {
  if (ImGui::GetIO().WantTextInput) return;
  const double centre = key_centre_px_;
  if (ImGui::IsKeyDown('W')) state_.zoom_around(0.93, centre);
  if (ImGui::IsKeyDown('S')) state_.zoom_around(1 / 0.93, centre);
  if (ImGui::IsKeyDown('A')) state_.pan_px(12);
  if (ImGui::IsKeyDown('D')) state_.pan_px(-12);
  if (ImGui::IsKeyPressed('F', false)) state_.fit_all();
  if (ImGui::IsKeyPressed('Z', false)) state_.zoom_to_selection();
  if (ImGui::IsKeyPressed('N', false)) state_.step_search(1);
  if (ImGui::IsKeyPressed('P', false)) state_.step_search(-1);
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) state_.clear_selection();
}

void Timeline::draw_range(ImDrawList* dl, float x0, float ya, float yb) const {
  if (!range_from_px_) return;
  const float xa = x0 + static_cast<float>(*range_from_px_), xb = ImGui::GetIO().MousePos.x;
  dl->AddRectFilled(ImVec2(std::min(xa, xb), ya), ImVec2(std::max(xa, xb), yb), IM_COL32(120, 170, 255, 50));
  const auto ns = static_cast<std::int64_t>(std::abs(xb - xa) * state_.view.ns_per_px());
  dl->AddText(ImVec2(std::min(xa, xb) + 4, ya + 4), IM_COL32(200, 220, 255, 255), format_duration(ns).c_str());
}

void Timeline::draw_ruler(ImDrawList* dl, float x0, float x1, float y) const {
  const ViewRange& v = state_.view;
  dl->AddRectFilled(ImVec2(x0 - kGutter, y), ImVec2(x1, y + kRulerHeight), IM_COL32(30, 32, 38, 255));
  const std::int64_t step = ruler_step(v.ns_per_px());
  const std::int64_t base = state_.axis_first_ns();
  // The first tick at or after the view's start, on a multiple of the step from the trace's start.
  std::int64_t rel = v.start_ns - base;
  std::int64_t t = (rel >= 0 ? (rel + step - 1) / step : -((-rel) / step)) * step;
  for (; base + t <= v.end_ns; t += step) {
    const float x = x0 + static_cast<float>(static_cast<double>(base + t - v.start_ns) / v.ns_per_px());
    dl->AddLine(ImVec2(x, y + kRulerHeight - 8), ImVec2(x, y + kRulerHeight), IM_COL32(200, 200, 210, 255));
    const float half = x0 + static_cast<float>(static_cast<double>(base + t + step / 2 - v.start_ns) / v.ns_per_px());
    if (half < x1)
      dl->AddLine(ImVec2(half, y + kRulerHeight - 4), ImVec2(half, y + kRulerHeight), IM_COL32(140, 140, 150, 255));
    dl->AddText(ImVec2(x + 3, y + 2), IM_COL32(220, 220, 230, 255), format_tick(t, step).c_str());
  }
  const std::string span = "view " + format_duration(v.end_ns - v.start_ns);
  dl->AddText(ImVec2(x0 - kGutter + 4, y + 4), IM_COL32(160, 200, 255, 255), span.c_str());
}

void Timeline::draw_grid(ImDrawList* dl, float x0, float x1, float ya, float yb) const {
  const ViewRange& v = state_.view;
  const std::int64_t step = ruler_step(v.ns_per_px());
  const std::int64_t base = state_.axis_first_ns();
  const std::int64_t rel = v.start_ns - base;
  std::int64_t t = (rel >= 0 ? (rel + step - 1) / step : -((-rel) / step)) * step;
  for (; base + t <= v.end_ns; t += step) {
    const float x = x0 + static_cast<float>(static_cast<double>(base + t - v.start_ns) / v.ns_per_px());
    if (x <= x1) dl->AddLine(ImVec2(x, ya), ImVec2(x, yb), IM_COL32(255, 255, 255, 18));
  }
}

// Note [Flow line]: from the bottom of the launching API call to the top of the task, as a curve,
// when both lanes are on screen (Perfetto and Tracy draw the same arrow).
bool Timeline::draw_flow(ImDrawList* dl, const LaneDrawContext& ctx) const {
  const auto& sel = state_.selection();
  if (!sel || !sel->launch) return false;
  const float api_top = lane_y_[sel->launch->lane], task_top = lane_y_[sel->where.lane];
  if (api_top < 0 || task_top < 0) return false;
  const TimelineItem& call = state_.item(*sel->launch);
  const TimelineItem& task = state_.item(sel->where);
  const ImVec2 a(ctx.x_of(call.start_ns + (call.end_ns() - call.start_ns) / 2),
                 LaneView::row_y(api_top, sel->launch->row) + kRowHeight);
  const ImVec2 b(ctx.x_of(task.start_ns), LaneView::row_y(task_top, 0));
  const float bend = std::max(20.0f, std::fabs(b.y - a.y) / 2);
  const float dir = b.y >= a.y ? 1.0f : -1.0f;
  dl->AddBezierCubic(a, ImVec2(a.x, a.y + dir * bend), ImVec2(b.x, b.y - dir * bend), b, kSelectionColour, 2.0f);
  dl->AddTriangleFilled(ImVec2(b.x - 4, b.y - dir * 7), ImVec2(b.x + 4, b.y - dir * 7), b, kSelectionColour);
  return true;
}

}  // namespace npuscope::viewer

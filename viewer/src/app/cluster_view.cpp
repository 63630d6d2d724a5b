#include "cluster_view.h"

#include <imgui.h>

#include <algorithm>

namespace npuscope::viewer {

ClusterView::ClusterView(const ClusterModel& ranks, bool single_frame) : ranks_(ranks) {
  const std::size_t n = ranks.ranks().size();
  states_.reserve(n);
  timelines_.reserve(n);
  for (const RankTrace& r : ranks.ranks()) {
    auto& state = *states_.emplace_back(std::make_unique<ViewerState>(*r.model, *r.reader));
    state.set_axis(ranks.first_ns(), ranks.last_ns());
    state.single_frame = single_frame;
    timelines_.emplace_back(std::make_unique<Timeline>(state))->set_in_group();
  }
  panels_.resize(n);
  serials_.assign(n, 0);
  view_ = states_.front()->view;
  collective_panel_ = make_collective_panel(*this);
}

void ClusterView::adopt_view(std::size_t rank) {
  const ViewRange& v = states_[rank]->view;
  if (v.start_ns != view_.start_ns || v.end_ns != view_.end_ns) view_ = v;
}

void ClusterView::sync_views() {
  for (const auto& s : states_) {
    if (s->view.start_ns != view_.start_ns || s->view.end_ns != view_.end_ns) {
      view_ = s->view;
      break;
    }
  }
  for (const auto& s : states_) s->view = view_;
}

void ClusterView::follow_selection() {
  std::optional<std::size_t> changed;
  for (std::size_t r = 0; r < states_.size(); ++r) {
    if (states_[r]->selection_serial() != serials_[r]) changed = r;
    serials_[r] = states_[r]->selection_serial();
  }
  if (changed && states_[*changed]->selection()) {
    active_ = *changed;
    for (std::size_t r = 0; r < states_.size(); ++r) {
      if (r != active_) states_[r]->clear_selection();
    }
    collective_ = ranks_.collective_of(active_, states_[active_]->selection()->task_id);
    for (const auto& s : states_) s->collective.reset();
    if (collective_) {
      for (const CollectiveMember& m : ranks_.members(*collective_)) states_[m.rank_index]->collective = m;
    }
  } else if (collective_ && !states_[active_]->selection()) {  // Esc
    collective_ = nullptr;
    for (const auto& s : states_) s->collective.reset();
  }
}

void ClusterView::draw_timeline(float height, FrameStats& stats) {
  follow_selection();
  sync_views();
  stats = FrameStats{};
  const float width = ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ScrollbarSize;
  const float origin_x = ImGui::GetCursorScreenPos().x;
  timelines_[active_]->draw_ruler_row(width);  // one ruler: every rank has the same view
  view_.width_px = active().view.width_px;
  ImGui::BeginChild("ranks", ImVec2(0, std::max(40.0f, height - ImGui::GetItemRectSize().y)), false,
                    ImGuiWindowFlags_NoScrollWithMouse);
  for (std::size_t r = 0; r < timelines_.size(); ++r) {
    const std::string& title = ranks_.ranks()[r].title;
    stats.groups.push_back(title);
    ImGui::PushID(static_cast<int>(r));
    if (ImGui::CollapsingHeader(title.c_str(), ImGuiTreeNodeFlags_DefaultOpen)) {
      const std::size_t first_lane = stats.lanes.size();
      states_[r]->view = view_;  // as a rank above may have moved it this frame
      timelines_[r]->draw_lanes(origin_x, width, stats);
      for (std::size_t l = first_lane; l < stats.lanes.size(); ++l) stats.lanes[l].group = title;
      adopt_view(r);
    }
    ImGui::PopID();
  }
  ImGui::EndChild();
  active().view = view_;
  timelines_[active_]->handle_keys();
  adopt_view(active_);
  sync_views();
  follow_selection();  // a click this frame outlines the collective from the next frame on
  stats.view_start_ns = view_.start_ns;
  stats.view_end_ns = view_.end_ns;
  stats.width_px = view_.width_px;
}

std::vector<std::unique_ptr<Panel>>& ClusterView::panels_of(std::size_t rank) {
  auto& p = panels_[rank];
  if (p.empty()) {
    ViewerState& s = *states_[rank];
    p.push_back(make_details_panel(s));
    p.push_back(make_op_stats_panel(s));
    p.push_back(make_findings_panel(s));
    p.push_back(make_compare_panel(s));
    p.push_back(make_search_panel(s));
  }
  return p;
}

void ClusterView::draw_panels() {
  ImGui::TextDisabled("panels of %s", ranks_.ranks()[active_].title.c_str());
  if (!ImGui::BeginTabBar("panels")) return;
  ViewerState& s = active();
  const auto tab = [&](Panel& p) {
    const bool focus = s.focus_panel == p.id();
    if (ImGui::BeginTabItem(p.title(), nullptr, focus ? ImGuiTabItemFlags_SetSelected : 0)) {
      if (focus) s.focus_panel.clear();
      p.draw();
      ImGui::EndTabItem();
    }
  };
  tab(*collective_panel_);
  for (const auto& p : panels_of(active_)) tab(*p);
  ImGui::EndTabBar();
}

void ClusterView::set_view(std::int64_t start_ns, std::int64_t end_ns) {
  states_[active_]->zoom_to(start_ns, end_ns);
  view_ = states_[active_]->view;
  for (const auto& s : states_) s->view = view_;
}

bool ClusterView::select_op(const std::string& op, std::optional<std::int32_t> rank) {
  for (std::size_t r = 0; r < states_.size(); ++r) {
    if (rank && ranks_.ranks()[r].rank != *rank) continue;
    TimelineModel::Location at;
    if (!find_op(*ranks_.ranks()[r].model, op, at)) continue;
    const std::string focus = active().focus_panel;
    states_[r]->select(at, true);
    follow_selection();
    active().focus_panel = focus;
    sync_views();
    return true;
  }
  return false;
}

void ClusterView::select_member(const CollectiveMember& m) {
  const std::string focus = "collective";
  states_[m.rank_index]->select(m.where, true);
  follow_selection();
  active().focus_panel = focus;
  sync_views();
}

}  // namespace npuscope::viewer

// The collective selected on any rank, as every member saw it (a multi-rank view): per rank its
// arrival, wait (arrival to the last rank's arrival), transit (start to end) and end, and which rank
// arrived last, as msprof-analyze separates Wait and Transit. Click a rank to select its task.
#include <imgui.h>

#include <algorithm>

#include "cluster_view.h"
#include "npuscope/viewer/time_format.h"

namespace npuscope::viewer {
namespace {

template <class E>
std::string stored_enum_name(std::int64_t value) {
  const std::optional<E> e = enum_from_value<E>(value);
  return e ? std::string(enum_name(*e)) : "value " + std::to_string(value);
}

class CollectivePanel final : public Panel {
 public:
  explicit CollectivePanel(ClusterView& view) : view_(view) {}
  const char* title() const override { return "Collective"; }
  const char* id() const override { return "collective"; }

  void draw() override {
    const Collective* c = view_.collective();
    if (!c) {
      ImGui::TextDisabled(
          "Select a collective (an HCCL task) on any rank: its task on every rank is outlined and "
          "listed here.");
      return;
    }
    const ClusterModel& ranks = view_.ranks();
    const auto members = ranks.members(*c);
    std::string what = stored_enum_name<CollectiveKind>(c->kind) + " #" + std::to_string(c->key.sequence) + " of " +
                       ranks.communicator_name(c->key.communicator);
    if (c->key.src >= 0) what += ", rank " + std::to_string(c->key.src) + " to rank " + std::to_string(c->key.dst);
    ImGui::Text("%s: %zu ranks, %lld bytes, %s; rank %d arrived last", what.c_str(), members.size(),
                static_cast<long long>(c->bytes), stored_enum_name<CollectiveAlgorithm>(c->algorithm).c_str(),
                c->last_rank);
    constexpr ImGuiTableFlags kFlags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY |
                                       ImGuiTableFlags_SizingStretchProp;
    if (!ImGui::BeginTable("members", 6, kFlags)) return;
    ImGui::TableSetupScrollFreeze(0, 1);
    for (const char* h : {"rank", "arrival", "wait", "transit", "end", ""}) ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    const std::int64_t base = view_.active().axis_first_ns();
    ImGuiListClipper clipper;  // thousands of ranks: only the rows on screen
    clipper.Begin(static_cast<int>(members.size()));
    while (clipper.Step()) {
      for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
        const CollectiveMember& m = members[static_cast<std::size_t>(i)];
        const RankTrace& r = ranks.ranks()[m.rank_index];
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        const bool selected = m.rank_index == view_.active_rank();
        if (ImGui::Selectable(r.title.c_str(), selected, ImGuiSelectableFlags_SpanAllColumns)) view_.select_member(m);
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(format_duration(m.arrival_ns - base).c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(format_duration(m.start_ns - m.arrival_ns).c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(format_duration(m.end_ns - m.start_ns).c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(format_duration(m.end_ns - base).c_str());
        ImGui::TableNextColumn();
        if (r.rank == c->last_rank) ImGui::TextColored(ImVec4(0.3f, 0.85f, 1, 1), "arrived last");
      }
    }
    ImGui::EndTable();
  }

 private:
  ClusterView& view_;
};

}  // namespace

std::unique_ptr<Panel> make_collective_panel(ClusterView& view) { return std::make_unique<CollectivePanel>(view); }

}  // namespace npuscope::viewer

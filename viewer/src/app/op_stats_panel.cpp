// msprof's op_statistic per device, op type and core type (counted by the collector's rule over the
// model's tasks), sortable by any column.
#include <imgui.h>

#include "npuscope/viewer/op_stats.h"
#include "npuscope/viewer/time_format.h"
#include "panel.h"

namespace npuscope::viewer {
namespace {

class OpStatsPanel final : public Panel {
 public:
  explicit OpStatsPanel(ViewerState& state) : state_(state), rows_(op_type_stats(state.model())) {}
  const char* title() const override { return "Op statistics"; }
  const char* id() const override { return "ops"; }

  void draw() override {
    constexpr ImGuiTableFlags kFlags = ImGuiTableFlags_Sortable | ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg |
                                       ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable;
    if (!ImGui::BeginTable("op_stats", 9, kFlags)) return;
    ImGui::TableSetupScrollFreeze(0, 1);
    // In OpStatsColumn's order: the sort specs' column index is the enum value.
    ImGui::TableSetupColumn("device");
    ImGui::TableSetupColumn("op type", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableSetupColumn("core type");
    ImGui::TableSetupColumn("count");
    ImGui::TableSetupColumn("total", ImGuiTableColumnFlags_DefaultSort | ImGuiTableColumnFlags_PreferSortDescending);
    ImGui::TableSetupColumn("avg");
    ImGui::TableSetupColumn("min");
    ImGui::TableSetupColumn("max");
    ImGui::TableSetupColumn("ratio %");
    ImGui::TableHeadersRow();
    if (ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs(); specs && specs->SpecsDirty && specs->SpecsCount > 0) {
      sort_op_stats(rows_, static_cast<OpStatsColumn>(specs->Specs[0].ColumnIndex),
                    specs->Specs[0].SortDirection == ImGuiSortDirection_Ascending);
      specs->SpecsDirty = false;
    }
    for (const OpTypeStats& s : rows_) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::Text("npu:%d", s.device_id);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(s.op_type.empty() ? "(unnamed)" : s.op_type.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(collector::task_type_name(s.task_type).c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%lld", static_cast<long long>(s.count));
      for (const double v :
           {static_cast<double>(s.total_ns), s.avg_ns, static_cast<double>(s.min_ns), static_cast<double>(s.max_ns)}) {
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(format_duration(static_cast<std::int64_t>(v)).c_str());
      }
      ImGui::TableNextColumn();
      ImGui::Text("%.1f", s.ratio_pct);
    }
    ImGui::EndTable();
  }

 private:
  ViewerState& state_;
  std::vector<OpTypeStats> rows_;
};

}  // namespace

std::unique_ptr<Panel> make_op_stats_panel(ViewerState& state) { return std::make_unique<OpStatsPanel>(state); }

}  // namespace npuscope::viewer

// COMPARE_RESULT's rows (the verdicts `npuscope compare --annotate` kept with the trace); a click on
// a row selects the op and jumps to it on the timeline.
#include <imgui.h>

#include "panel.h"

namespace npuscope::viewer {
namespace {

class ComparePanel final : public Panel {
 public:
  explicit ComparePanel(ViewerState& state) : state_(state) {
    state.reader().for_each([&](const collector::CompareResultRow& r) {
      if (is(r.role, TensorRole::kOutput)) rows_.push_back(r);  // outputs decide an op's verdict
    });
  }
  const char* title() const override { return "Compare"; }
  const char* id() const override { return "compare"; }

  void draw() override {
    if (rows_.empty()) {
      ImGui::TextUnformatted("No compare results in this trace (npuscope compare ... --annotate adds them).");
      return;
    }
    std::size_t fails = 0;
    for (const auto& r : rows_) fails += r.verdict == 1;
    ImGui::Text(
        "%zu outputs compared, %zu failed; the first op that introduced an error is marked. Click a row to jump.",
        rows_.size(), fails);
    constexpr ImGuiTableFlags kFlags =
        ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable;
    if (!ImGui::BeginTable("compare", 8, kFlags)) return;
    ImGui::TableSetupScrollFreeze(0, 1);
    for (const char* h : {"op", "op type", "verdict", "origin", "cosine", "max abs err", "max rel err", "rmse"}) {
      ImGui::TableSetupColumn(h, h[0] == 'o' && h[1] == 'p' && h[2] == 0 ? ImGuiTableColumnFlags_WidthStretch : 0);
    }
    ImGui::TableHeadersRow();
    const auto& sel = state_.selection();
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      const auto& r = rows_[i];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      const bool selected = sel && sel->task_id == r.task_id;
      ImGui::PushID(static_cast<int>(i));
      if (ImGui::Selectable(state_.model().str(r.name_id).c_str(), selected, ImGuiSelectableFlags_SpanAllColumns)) {
        state_.select_task(r.task_id, true);
      }
      ImGui::PopID();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(state_.model().str(r.op_type_id).c_str());
      ImGui::TableNextColumn();
      if (r.verdict == 1)
        ImGui::TextColored(ImVec4(1, 0.35f, 0.3f, 1), "FAIL");
      else
        ImGui::TextUnformatted(r.verdict == 0 ? "pass" : "n/a");
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(r.origin == 1 ? "introduced" : r.origin == 2 ? "inherited" : "");
      for (const double v : {r.cosine, r.max_abs_err, r.max_rel_err, r.rmse}) {
        ImGui::TableNextColumn();
        ImGui::Text("%.6g", v);
      }
    }
    ImGui::EndTable();
  }

 private:
  ViewerState& state_;
  std::vector<collector::CompareResultRow> rows_;
};

}  // namespace

std::unique_ptr<Panel> make_compare_panel(ViewerState& state) { return std::make_unique<ComparePanel>(state); }

}  // namespace npuscope::viewer

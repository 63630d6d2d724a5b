// --diff BASE.db: the tables of `npuscope diff BASE.db NEW.db` (this trace is NEW), drawn from their
// declarations (report_tables.h): the runs and the overall split open, then the ops (what got
// slower, and by how much), then the rest closed. A click on an op row selects NEW's call of it on
// the timeline; the details panel then shows its BASE duration. The diff runs in the background
// (diff_job.h).
#include <imgui.h>

#include <algorithm>
#include <array>
#include <string_view>

#include "diff_job.h"
#include "panel.h"
#include "report_tables.h"

namespace npuscope::viewer {
namespace {

// Drawn first and open, in this order; the other tables follow in the report's order, closed.
constexpr std::array<std::string_view, 3> kFirst = {"diff_runs", "diff_overall", "diff_ops"};
constexpr std::string_view kOps = "diff_ops";
// Only NEW's task ids are on this timeline: BASE's (base_task_id) are not jumped to.
constexpr std::string_view kJumpBy = "new_task_id";

class DiffPanel final : public Panel {
 public:
  explicit DiffPanel(ViewerState& state) : state_(state) {}
  const char* title() const override { return "Diff"; }
  const char* id() const override { return "diff"; }

  void draw() override {
    DiffJob& job = *state_.diff;
    const analyzer::DiffResult* diff = job.result(state_.single_frame);
    if (diff == nullptr) {
      if (job.error().empty())
        ImGui::TextDisabled("diffing %s against this trace (npuscope diff) ...", job.base_path().c_str());
      else
        ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "diff failed: %s", job.error().c_str());
      return;
    }
    ImGui::BeginChild("diff");
    ImGui::TextWrapped("BASE %s, NEW this trace: diff = NEW - BASE, ratio = NEW / BASE. Click an op to select it.",
                       job.base_path().c_str());
    for (const auto& n : diff->report.notes) ImGui::TextDisabled("note: %s", n.c_str());
    draw_selection(*diff);
    std::int64_t op_rows = 0;
    for (const std::string_view name : kFirst) {
      const analyzer::Table* t = diff->report.find(name);
      if (t == nullptr || t->rows.empty()) continue;
      const std::size_t rows = draw_report_table(&state_, *t, {.open = true, .jump_by = kJumpBy});
      if (name == kOps) op_rows = static_cast<std::int64_t>(rows);
    }
    for (const analyzer::Table& t : diff->report.tables) {
      if (t.rows.empty() || std::find(kFirst.begin(), kFirst.end(), t.spec->name) != kFirst.end()) continue;
      draw_report_table(&state_, t, {.open = false, .jump_by = kJumpBy});
    }
    ImGui::EndChild();
    if (state_.frame_stats != nullptr) state_.frame_stats->diff.op_rows = op_rows;
  }

 private:
  // The selected op against BASE, as the details panel says it.
  void draw_selection(const analyzer::DiffResult& diff) {
    const auto& sel = state_.selection();
    if (!sel) return;
    const std::string line = describe_pair(diff, sel->row);
    if (!line.empty()) ImGui::Text("selected %s: %s", state_.model().str(sel->row.name_id).c_str(), line.c_str());
  }

  ViewerState& state_;
};

}  // namespace

std::unique_ptr<Panel> make_diff_panel(ViewerState& state) { return std::make_unique<DiffPanel>(state); }

}  // namespace npuscope::viewer

// The comparison the trace keeps (`npuscope compare --annotate`: COMPARE_RESULT), as compare's own
// finding tables (comparator/compare_report.h) drawn from their declarations (report_tables.h): the
// first failing and first introducing op, the ops worst first, every compared tensor. A click on a
// row selects its op and jumps to it on the timeline.
#include <imgui.h>

#include <algorithm>

#include "npuscope/comparator/compare_report.h"
#include "npuscope/comparator/results_table.h"
#include "panel.h"
#include "report_tables.h"

namespace npuscope::viewer {
namespace {

class ComparePanel final : public Panel {
 public:
  explicit ComparePanel(ViewerState& state)
      : state_(state), report_(comparator::compare_report(comparator::load_results(state.reader()))) {}
  const char* title() const override { return "Compare"; }
  const char* id() const override { return "compare"; }

  void draw() override {
    if (std::all_of(report_.tables.begin(), report_.tables.end(), [](const auto& t) { return t.rows.empty(); })) {
      ImGui::TextUnformatted("No compare results in this trace (npuscope compare ... --annotate adds them).");
      return;
    }
    ImGui::BeginChild("compare");
    for (const auto& n : report_.notes) ImGui::TextDisabled("note: %s", n.c_str());
    for (const analyzer::Table* t : analyzer::reading_order(report_)) {
      if (!t->rows.empty()) draw_report_table(&state_, *t, {.open = true});
    }
    ImGui::EndChild();
  }

 private:
  ViewerState& state_;
  analyzer::Report report_;
};

}  // namespace

std::unique_ptr<Panel> make_compare_panel(ViewerState& state) { return std::make_unique<ComparePanel>(state); }

}  // namespace npuscope::viewer

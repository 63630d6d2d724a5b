// Search by op name (substring) with next / previous (also N / P, from anywhere in the viewer): each
// step selects the match and brings it into view.
#include <imgui.h>

#include "npuscope/viewer/op_search.h"
#include "npuscope/viewer/time_format.h"
#include "panel.h"

namespace npuscope::viewer {
namespace {

class SearchPanel final : public Panel {
 public:
  explicit SearchPanel(ViewerState& state) : state_(state) {}
  const char* title() const override { return "Search"; }
  const char* id() const override { return "search"; }

  void draw() override {
    SearchCursor& search = state_.search;
    ImGui::SetNextItemWidth(320);
    if (ImGui::InputTextWithHint("##op", "op name contains...", text_, sizeof text_))
      search.search(state_.model(), text_);
    ImGui::SameLine();
    if (ImGui::Button("< previous")) state_.step_search(-1);  // N and P work anywhere: Timeline::handle_input
    ImGui::SameLine();
    if (ImGui::Button("next >")) state_.step_search(1);
    ImGui::SameLine();
    if (search.matches().empty())
      ImGui::TextDisabled(text_[0] ? "no match" : "");
    else
      ImGui::Text("%d of %zu", search.current() + 1, search.matches().size());
    if (search.current() >= 0) {
      const TimelineItem& it = state_.item(search.matches()[static_cast<std::size_t>(search.current())]);
      ImGui::Text("%s at %s, %s", state_.model().str(it.label_id).c_str(),
                  format_duration(it.start_ns - state_.axis_first_ns()).c_str(),
                  format_duration(it.end_ns() - it.start_ns).c_str());
    }
  }

 private:
  ViewerState& state_;
  char text_[256] = {};
};

}  // namespace

std::unique_ptr<Panel> make_search_panel(ViewerState& state) { return std::make_unique<SearchPanel>(state); }

}  // namespace npuscope::viewer

// Search by op name (substring) with next / previous (also N / P): each step selects the match and
// brings it into view.
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
    ImGui::SetNextItemWidth(320);
    if (ImGui::InputTextWithHint("##op", "op name contains...", text_, sizeof text_)) {
      matches_ = text_[0] ? search_ops(state_.model(), text_) : std::vector<TimelineModel::Location>{};
      current_ = -1;
    }
    ImGui::SameLine();
    const bool keys = !ImGui::GetIO().WantTextInput;
    if (ImGui::Button("< previous") || (keys && ImGui::IsKeyPressed('P', false))) step(-1);
    ImGui::SameLine();
    if (ImGui::Button("next >") || (keys && ImGui::IsKeyPressed('N', false))) step(1);
    ImGui::SameLine();
    if (matches_.empty()) ImGui::TextDisabled(text_[0] ? "no match" : "");
    else ImGui::Text("%d of %zu", current_ + 1, matches_.size());
    if (current_ >= 0) {
      const TimelineItem& it = state_.item(matches_[static_cast<std::size_t>(current_)]);
      ImGui::Text("%s at %s, %s", state_.model().str(it.label_id).c_str(),
                  format_duration(it.start_ns - state_.model().first_ns()).c_str(),
                  format_duration(it.end_ns() - it.start_ns).c_str());
    }
  }

 private:
  void step(int dir) {
    if (matches_.empty()) return;
    const int n = static_cast<int>(matches_.size());
    current_ = current_ < 0 ? (dir > 0 ? 0 : n - 1) : (current_ + dir + n) % n;
    state_.select(matches_[static_cast<std::size_t>(current_)], true);
  }

  ViewerState& state_;
  char text_[256] = {};
  std::vector<TimelineModel::Location> matches_;
  int current_ = -1;
};

}  // namespace

std::unique_ptr<Panel> make_search_panel(ViewerState& state) { return std::make_unique<SearchPanel>(state); }

}  // namespace npuscope::viewer

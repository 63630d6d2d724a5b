// The analyzer's findings: overflows, the top ops with their roofline bound, advice; a click on an
// op jumps to it. analyze() starts when the panel is first shown and runs on a thread of its own,
// with its own reader (~9 s for 10M tasks: the window stays live meanwhile).
#include <imgui.h>

#include <atomic>
#include <chrono>
#include <future>
#include <optional>

#include "npuscope/analyzer/analyze.h"
#include "npuscope/viewer/time_format.h"
#include "panel.h"

namespace npuscope::viewer {
namespace {

class FindingsPanel final : public Panel {
 public:
  explicit FindingsPanel(ViewerState& state) : state_(state) {}
  // Closing the window does not wait for an analysis still running: it is cancelled (the future's
  // destructor then waits milliseconds, not the ~9 s of a 10M-task analysis).
  ~FindingsPanel() override { cancel_.store(true); }
  const char* title() const override { return "Findings"; }
  const char* id() const override { return "findings"; }

  void draw() override {
    if (!report_ && !running_.valid()) {
      running_ = std::async(std::launch::async, [path = state_.reader().path(), cancel = &cancel_] {
        const auto reader = collector::TraceReader::open(path, {.verify = false});
        return analyzer::analyze(*reader, {.top = 10, .cancel = cancel});
      });
    }
    if (!report_) {
      if (!state_.single_frame && running_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
        ImGui::TextDisabled("analyzing the trace (npuscope analyze) ...");
        return;
      }
      try {
        report_ = running_.get();
      } catch (const std::exception& e) {
        error_ = e.what();
        report_.emplace();
      }
    }
    if (!error_.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "analysis failed: %s", error_.c_str());
    const analyzer::Report& r = *report_;
    ImGui::BeginChild("findings");
    if (r.overflows.count > 0 && ImGui::CollapsingHeader("Overflows", ImGuiTreeNodeFlags_DefaultOpen)) {
      ImGui::Text("%lld overflowing tasks (mode %s)", static_cast<long long>(r.overflows.count), r.overflows.overflow_mode.c_str());
      if (r.overflows.origin) ImGui::Text("NaN/Inf origin: %s (%s)", r.overflows.origin->task.op_name.c_str(), r.overflows.origin->detail.c_str());
      for (const auto& o : r.overflows.items) jump_row(o.task_id, o.op_name + "  " + o.op_type);
    }
    if (ImGui::CollapsingHeader("Top ops", ImGuiTreeNodeFlags_DefaultOpen)) {
      for (const auto& t : r.top_ops) {
        jump_row(t.task_id, t.op_name + "  " + format_duration(t.duration_ns) + "  " + analyzer::bound_name(t.bound) + "-bound");
      }
    }
    if (ImGui::CollapsingHeader("Advice", ImGuiTreeNodeFlags_DefaultOpen)) {
      if (r.advice.empty()) ImGui::TextDisabled("no advice");
      for (const auto& a : r.advice) {
        ImGui::BulletText("%s", a.title.c_str());
        ImGui::Indent();
        ImGui::TextWrapped("%s  %s", a.detail.c_str(), a.action.c_str());
        ImGui::Unindent();
      }
    }
    for (const auto& n : r.notes) ImGui::TextDisabled("note: %s", n.c_str());
    ImGui::EndChild();
  }

 private:
  void jump_row(std::int64_t task_id, const std::string& text) {
    ImGui::PushID(static_cast<int>(task_id));
    const auto& sel = state_.selection();
    if (ImGui::Selectable(text.c_str(), sel && sel->task_id == task_id)) state_.select_task(task_id, true);
    ImGui::PopID();
  }

  ViewerState& state_;
  std::atomic<bool> cancel_{false};  // declared before running_: outlives the analysis that reads it
  std::future<analyzer::Report> running_;
  std::optional<analyzer::Report> report_;
  std::string error_;
};

}  // namespace

std::unique_ptr<Panel> make_findings_panel(ViewerState& state) { return std::make_unique<FindingsPanel>(state); }

}  // namespace npuscope::viewer

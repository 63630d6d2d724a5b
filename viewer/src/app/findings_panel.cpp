// The analyzer's findings: every finding table of the report, in its reading order (summary, alerts,
// advice by time at stake, details), drawn from its declaration (report_tables.h); a click on a row
// with a task id or an op name jumps to that op. analyze() starts when the panel is first
// shown and runs on a thread of its own, with its own reader (~9 s for 10M tasks: the window stays
// live meanwhile).
#include <imgui.h>

#include <atomic>
#include <chrono>
#include <future>
#include <optional>

#include "npuscope/analyzer/analyze.h"
#include "panel.h"
#include "report_tables.h"

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
    for (const auto& n : r.notes) ImGui::TextDisabled("note: %s", n.c_str());
    for (const analyzer::Table* t : analyzer::reading_order(r)) {
      if (!t->rows.empty()) draw_report_table(&state_, *t, {.open = opens_by_default(*t->spec)});
    }
    ImGui::EndChild();
  }

 private:
  ViewerState& state_;
  std::atomic<bool> cancel_{false};  // declared before running_: outlives the analysis that reads it
  std::future<analyzer::Report> running_;
  std::optional<analyzer::Report> report_;
  std::string error_;
};

}  // namespace

std::unique_ptr<Panel> make_findings_panel(ViewerState& state) { return std::make_unique<FindingsPanel>(state); }

}  // namespace npuscope::viewer

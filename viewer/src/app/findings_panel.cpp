// The analyzer's findings: every finding table of the report, in its reading order (summary, alerts,
// advice by time at stake, details), drawn from its declaration (Note [Finding tables]); a click on
// a row with a task id or an op name jumps to that op. analyze() starts when the panel is first
// shown and runs on a thread of its own, with its own reader (~9 s for 10M tasks: the window stays
// live meanwhile).
#include <imgui.h>

#include <atomic>
#include <chrono>
#include <future>
#include <optional>

#include "npuscope/analyzer/analyze.h"
#include "npuscope/viewer/op_search.h"
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
    for (const auto& n : r.notes) ImGui::TextDisabled("note: %s", n.c_str());
    for (const analyzer::Table* t : analyzer::reading_order(r)) {
      if (!t->rows.empty()) draw_table(*t);
    }
    ImGui::EndChild();
  }

 private:
  void draw_table(const analyzer::Table& t) {
    const analyzer::TableSpec& spec = *t.spec;
    const std::string title = std::string(spec.title) + "##" + std::string(spec.name);
    const ImGuiTreeNodeFlags open = spec.section == analyzer::Section::kDetail ? 0 : ImGuiTreeNodeFlags_DefaultOpen;
    if (!ImGui::CollapsingHeader(title.c_str(), open)) return;
    if (!spec.advice.empty())
      ImGui::TextWrapped("advice: %.*s", static_cast<int>(spec.advice.size()), spec.advice.data());
    if (spec.layout == analyzer::Layout::kRecord) return draw_record(t);
    constexpr ImGuiTableFlags kFlags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_Resizable;
    const int columns = static_cast<int>(spec.columns.size());
    if (!ImGui::BeginTable(std::string(spec.name).c_str(), columns, kFlags)) return;
    for (const analyzer::Column& c : spec.columns) {
      const bool text = c.unit == analyzer::Unit::kText || c.unit == analyzer::Unit::kOpName;
      ImGui::TableSetupColumn(analyzer::column_label(c).c_str(),
                              text ? ImGuiTableColumnFlags_WidthStretch : ImGuiTableColumnFlags_WidthFixed);
    }
    ImGui::TableHeadersRow();
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
      ImGui::TableNextRow();
      ImGui::PushID(static_cast<int>(r));
      for (std::size_t i = 0; i < spec.columns.size(); ++i) {
        ImGui::TableNextColumn();
        const std::string cell = analyzer::format_cell(spec.columns[i], t.rows[r][i]);
        if (i == 0 && jump_target(t, r)) {
          // The first cell spans the row: a click anywhere on it jumps to the row's op.
          if (ImGui::Selectable(cell.c_str(), false, ImGuiSelectableFlags_SpanAllColumns)) jump(t, r);
        } else {
          ImGui::TextWrapped("%s", cell.c_str());
        }
      }
      ImGui::PopID();
    }
    ImGui::EndTable();
  }

  void draw_record(const analyzer::Table& t) {
    if (!ImGui::BeginTable(std::string(t.spec->name).c_str(), 2, ImGuiTableFlags_Borders)) return;
    for (std::size_t i = 0; i < t.spec->columns.size(); ++i) {
      const analyzer::Column& c = t.spec->columns[i];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(analyzer::column_label(c).c_str());
      ImGui::TableNextColumn();
      const std::string cell = analyzer::format_cell(c, t.rows[0][i]);
      ImGui::PushID(static_cast<int>(i));
      const bool jumps = (c.unit == analyzer::Unit::kTaskId || c.unit == analyzer::Unit::kOpName) &&
                         !std::holds_alternative<std::monostate>(t.rows[0][i]);
      if (jumps && ImGui::Selectable(cell.c_str())) jump_to(c, t.rows[0][i]);
      if (!jumps) ImGui::TextWrapped("%s", cell.c_str());
      ImGui::PopID();
    }
    ImGui::EndTable();
  }

  // The cell a row jumps by: its first task id, else its first op name (non-null).
  const analyzer::Column* jump_column(const analyzer::Table& t, std::size_t row, const analyzer::Value** value) const {
    for (const analyzer::Unit unit : {analyzer::Unit::kTaskId, analyzer::Unit::kOpName}) {
      for (std::size_t i = 0; i < t.spec->columns.size(); ++i) {
        if (t.spec->columns[i].unit != unit || std::holds_alternative<std::monostate>(t.rows[row][i])) continue;
        *value = &t.rows[row][i];
        return &t.spec->columns[i];
      }
    }
    return nullptr;
  }
  bool jump_target(const analyzer::Table& t, std::size_t row) const {
    const analyzer::Value* v = nullptr;
    return jump_column(t, row, &v) != nullptr;
  }
  void jump(const analyzer::Table& t, std::size_t row) {
    const analyzer::Value* v = nullptr;
    if (const analyzer::Column* c = jump_column(t, row, &v)) jump_to(*c, *v);
  }
  void jump_to(const analyzer::Column& c, const analyzer::Value& v) {
    if (c.unit == analyzer::Unit::kTaskId) {
      state_.select_task(std::get<std::int64_t>(v), true);
      return;
    }
    TimelineModel::Location where;
    if (find_op(state_.model(), std::get<std::string>(v), where)) state_.select(where, true);
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

// --compare NPU_DUMP BENCH_DUMP: `npuscope compare` of two msprobe dumps in the Compare panel
// (npuscope/viewer/dump_comparison.h, Note [Dump comparison in the viewer]): a progress line while
// it runs, then its summary (the first failing and first introducing entry, forward and backward:
// a click selects it), the entries table (verdicts coloured, sortable by any column, filtered by name
// and verdict, clipped to what is on screen), and the selected entry: msprobe's compare_result rows
// of its values, its module chain (construct.json) and its call stack (stack.json). A selector picks
// the step and rank when the dumps hold several. Without a trace this panel is the whole window.
#include <imgui.h>

#include <algorithm>

#include "colours.h"
#include "dump_job.h"
#include "panel.h"
#include "report_tables.h"

namespace npuscope::viewer {
namespace {

using analyzer::Column;
using analyzer::Value;

constexpr ImU32 kWarningColour = kFindingColour;
const ImVec4 kErrorText(1, 0.4f, 0.4f, 1);

// Verdicts and msprobe's Result, in their colours; other cells keep the default.
ImU32 verdict_colour(const Column& c, const Value& v) {
  const auto* s = std::get_if<std::string>(&v);
  if (s == nullptr || (c.name != "verdict" && c.name != "result" && c.name != "origin" && c.name != "Result")) return 0;
  if (*s == "fail" || *s == "error") return kFailColour;
  if (*s == "warning") return kWarningColour;
  if (*s == "pass") return kPassColour;
  if (*s == "introduced") return IM_COL32(230, 90, 190, 255);  // kIntroducedColour, light enough for text
  if (*s == "n/a") return kUncomparedColour;
  return 0;
}

class DumpComparePanel final : public Panel {
 public:
  DumpComparePanel(DumpCompareJob& job, ViewerState* state, const FrameContext& frame, std::string select)
      : job_(job), state_(state), frame_(frame), select_(std::move(select)) {
    view_.text_column = "entry";
    view_.choice_column = "verdict";
    view_.choices = {"fail", "pass", "n/a"};
  }
  const char* title() const override { return "Compare"; }
  const char* id() const override { return "compare"; }

  void draw() override {
    if (frame_.single_frame) job_.wait();
    FrameStats::Dumps* stats = frame_.stats != nullptr ? &frame_.stats->dumps : nullptr;
    if (stats != nullptr) stats->shown = true;
    ImGui::BeginChild("dumps");
    ImGui::TextWrapped("NPU %s against bench %s%s%s", job_.request().npu.c_str(), job_.request().bench.c_str(),
                       job_.request().options.fuzzy_match ? ", fuzzy matching" : "",
                       job_.request().options.mapping.empty() ? "" : ", with a name map");
    if (state_ != nullptr && state_->model().has_compare_results())
      ImGui::TextDisabled(
          "note: this trace's own compare results (npuscope compare --annotate) show here without "
          "--compare");
    draw_progress(stats);
    const std::vector<const DumpComparison*> done = job_.comparisons();
    if (!done.empty()) draw_comparison(pick(done), stats);
    ImGui::EndChild();
  }

 private:
  void draw_progress(FrameStats::Dumps* stats) {
    const std::string status = job_.status(), error = job_.error();
    if (!status.empty()) {
      ImGui::ProgressBar(static_cast<float>(job_.fraction()), ImVec2(240, 0));
      ImGui::SameLine();
      ImGui::TextUnformatted(status.c_str());
    }
    if (!error.empty()) ImGui::TextColored(kErrorText, "cannot compare: %s", error.c_str());
    const std::vector<std::string> notes = job_.notes();
    for (const std::string& n : notes) ImGui::TextDisabled("note: %s", n.c_str());
    if (!select_error_.empty()) ImGui::TextColored(kErrorText, "%s", select_error_.c_str());
    if (stats != nullptr) {
      stats->status = status;
      stats->error = error.empty() ? select_error_ : error;
      stats->notes = notes;
    }
  }

  // The step and rank shown: a selector when there are several.
  const DumpComparison& pick(const std::vector<const DumpComparison*>& done) {
    if (done.size() > 1) {
      ImGui::SetNextItemWidth(220);
      if (ImGui::BeginCombo("step and rank", done[std::min(shown_, done.size() - 1)]->place().c_str())) {
        for (std::size_t i = 0; i < done.size(); ++i) {
          if (ImGui::Selectable(done[i]->place().c_str(), i == shown_)) shown_ = i;
        }
        ImGui::EndCombo();
      }
    }
    if (!select_.empty()) find_select(done);
    shown_ = std::min(shown_, done.size() - 1);
    const DumpComparison& c = *done[shown_];
    if (&c != current_ || (!select_.empty() && c.find_entry(select_))) open(c);
    return c;
  }

  // --select ENTRY: the first step and rank that has it is shown; said when none has.
  void find_select(const std::vector<const DumpComparison*>& done) {
    for (std::size_t i = 0; i < done.size(); ++i) {
      if (done[i]->find_entry(select_)) {
        shown_ = i;
        return;
      }
    }
    if (job_.finished()) {
      select_error_ = "--select: no paired entry named '" + select_ + "' in the dumps compared";
      select_.clear();
    }
  }

  // A comparison newly shown: select --select's entry, else the first failing one, else the worst.
  void open(const DumpComparison& c) {
    current_ = &c;
    selected_.reset();
    if (const auto e = select_.empty() ? std::nullopt : c.find_entry(select_)) {
      select(*e);
      select_.clear();
      return;
    }
    const auto& r = c.result();
    for (const auto& first : {r.first_failing, r.first_failing_backward}) {
      if (first) return select(*first);
    }
    if (!c.entries().rows.empty()) select(c.entry_of_row(0));
  }

  void select(std::size_t entry) {
    selected_ = entry;
    values_ = current_->values(entry);
    view_.scroll_to = current_->row_of_entry(entry);
  }

  void draw_comparison(const DumpComparison& c, FrameStats::Dumps* stats) {
    const auto& r = c.result();
    for (const std::string& n : c.report().notes) ImGui::TextDisabled("note: %s", n.c_str());
    // Entry names are no ops of a trace: no table here jumps to the timeline (state null).
    if (const analyzer::Table* summary = c.report().find("dump_summary")) draw_report_table(nullptr, *summary, {});
    draw_firsts(c);
    for (const char* name : {"unmatched_npu", "unmatched_bench"}) {
      const analyzer::Table* t = c.report().find(name);
      if (t != nullptr && !t->rows.empty()) draw_report_table(nullptr, *t, {.open = false});
    }
    // The entries on the left, the selected one on the right: a click shows its values at once.
    const float height = std::max(320.0f, ImGui::GetContentRegionAvail().y);
    ImGui::BeginChild("entries", ImVec2(ImGui::GetContentRegionAvail().x * 0.5f, height));
    ImGui::TextUnformatted("Entries (click one; sort by a header)");
    const std::size_t shown =
        draw_report_table(nullptr, c.entries(),
                          {.view = &view_,
                           .height = -1,  // what is left of the child
                           .header = false,
                           .cell_colour = verdict_colour,
                           .on_select = [this](std::size_t row) { select(current_->entry_of_row(row)); },
                           .selected = selected_ ? std::optional(c.row_of_entry(*selected_)) : std::nullopt});
    ImGui::EndChild();
    ImGui::SameLine();
    ImGui::BeginChild("entry", ImVec2(0, height));
    if (selected_) draw_entry(c, *selected_, stats);
    ImGui::EndChild();
    if (stats == nullptr) return;
    const auto name = [&](const std::optional<std::size_t>& e) { return e ? c.npu_entry(*e).name : std::string(); };
    stats->comparisons = static_cast<std::int64_t>(job_.comparisons().size());
    stats->place = c.place();
    stats->mode = std::string(comparator::dump_mode_name(r.mode));
    stats->entries = static_cast<std::int64_t>(c.entries().rows.size());
    stats->entries_shown = static_cast<std::int64_t>(shown);
    stats->rows_drawn = static_cast<std::int64_t>(view_.drawn);
    stats->failed = r.failed;
    stats->unmatched_npu = static_cast<std::int64_t>(r.unmatched_npu.size());
    stats->unmatched_bench = static_cast<std::int64_t>(r.unmatched_bench.size());
    stats->first_failing = name(r.first_failing);
    stats->first_introducing = name(r.first_introducing);
    stats->first_failing_backward = name(r.first_failing_backward);
    stats->first_introducing_backward = name(r.first_introducing_backward);
  }

  // A button per first failing / introducing entry: a click selects it.
  void draw_firsts(const DumpComparison& c) {
    const auto& r = c.result();
    const std::pair<const char*, std::optional<std::size_t>> firsts[] = {
        {"first failing", r.first_failing},
        {"first introducing", r.first_introducing},
        {"first failing backward", r.first_failing_backward},
        {"first introducing backward", r.first_introducing_backward}};
    bool any = false;
    for (const auto& [what, entry] : firsts) {
      if (!entry) continue;
      if (any) ImGui::SameLine();
      any = true;
      const std::string label = std::string(what) + ": " + c.npu_entry(*entry).name;
      if (ImGui::SmallButton(label.c_str())) select(*entry);
    }
  }

  void draw_entry(const DumpComparison& c, std::size_t entry, FrameStats::Dumps* stats) {
    const collector::DumpEntry& n = c.npu_entry(entry);
    const auto& e = c.result().entries[entry];
    ImGui::Separator();
    ImGui::Text("%s", n.name.c_str());
    ImGui::SameLine();
    ImGui::TextDisabled("paired with bench %s%s", c.bench_entry(entry).name.c_str(),
                        e.fuzzy                             ? " (fuzzy match)"
                        : e.match == PairingStage::kNameMap ? " (name map)"
                                                            : "");
    const std::vector<std::string> modules = c.module_chain(entry);
    std::string chain;
    for (const std::string& m : modules) chain += (chain.empty() ? "" : "  <  ") + m;
    ImGui::TextWrapped("module: %s", modules.empty() ? "(none: construct.json names no parent)" : chain.c_str());
    draw_report_table(nullptr, values_,
                      {.height = std::min(ImGui::GetTextLineHeightWithSpacing() * (values_.rows.size() + 2.5f), 260.0f),
                       .scroll_x = true,
                       .header = false,
                       .cell_colour = verdict_colour});
    const std::vector<std::string>& stack = c.stack(entry);
    if (ImGui::CollapsingHeader("stack (stack.json)##dump_stack", ImGuiTreeNodeFlags_DefaultOpen)) {
      if (stack.empty()) ImGui::TextDisabled("(no stack recorded for this entry)");
      for (const std::string& frame : stack) ImGui::TextWrapped("%s", frame.c_str());
    }
    if (stats == nullptr) return;
    stats->selected = n.name;
    stats->value_rows = static_cast<std::int64_t>(values_.rows.size());
    stats->stack = stack;
    stats->modules = modules;
  }

  DumpCompareJob& job_;
  ViewerState* state_;  // null: no trace
  const FrameContext& frame_;
  std::string select_, select_error_;  // --select ENTRY, until found
  std::size_t shown_ = 0;              // the step and rank shown
  const DumpComparison* current_ = nullptr;
  std::optional<std::size_t> selected_;  // into current_->result().entries
  analyzer::Table values_;               // its compare_result rows
  TableView view_;                       // the entries table's sort and filter
};

}  // namespace

std::unique_ptr<Panel> make_dump_compare_panel(DumpCompareJob& job, ViewerState* state, const FrameContext& frame,
                                               std::string select) {
  return std::make_unique<DumpComparePanel>(job, state, frame, std::move(select));
}

}  // namespace npuscope::viewer

#include "report_tables.h"

#include <imgui.h>

#include <string>

#include "npuscope/viewer/op_search.h"

namespace npuscope::viewer {
namespace {

using analyzer::Column;
using analyzer::Table;
using analyzer::Unit;
using analyzer::Value;

// Tables longer than this draw one line per row, clipped to what is on screen (a diff of a big
// trace has thousands of op rows); shorter ones wrap their text cells.
constexpr std::size_t kClipRows = 200;

bool is_null(const Value& v) { return std::holds_alternative<std::monostate>(v); }

// Text wraps in its (stretched) column; numbers stay on one line, their fixed column fitting them.
bool wraps(const Column& c) { return c.unit == Unit::kText || c.unit == Unit::kOpName || c.unit == Unit::kList; }

bool can_jump(const Column& c) { return c.unit == Unit::kTaskId || c.unit == Unit::kOpName; }

// The cell a row jumps by (TableOptions::jump_by); -1 if none.
int jump_column(const Table& t, std::size_t row, std::string_view jump_by) {
  if (!jump_by.empty()) {
    const int at = t.spec->column_index(jump_by);
    return at >= 0 && can_jump(t.spec->columns[at]) && !is_null(t.rows[row][at]) ? at : -1;
  }
  for (const Unit unit : {Unit::kTaskId, Unit::kOpName}) {
    for (std::size_t i = 0; i < t.spec->columns.size(); ++i) {
      if (t.spec->columns[i].unit == unit && !is_null(t.rows[row][i])) return static_cast<int>(i);
    }
  }
  return -1;
}

void jump_to(ViewerState& state, const Column& c, const Value& v) {
  if (c.unit == Unit::kTaskId) {
    state.select_task(std::get<std::int64_t>(v), true);
    return;
  }
  TimelineModel::Location where;
  if (find_op(state.model(), std::get<std::string>(v), where)) state.select(where, true);
}

// Whether the row's jump target is the selected task (its row is highlighted).
bool is_selected(const ViewerState& state, const Table& t, std::size_t row, int at) {
  const auto& sel = state.selection();
  if (!sel || at < 0) return false;
  const Value& v = t.rows[row][at];
  if (t.spec->columns[at].unit == Unit::kTaskId) return std::get<std::int64_t>(v) == sel->task_id;
  return std::get<std::string>(v) == state.model().str(sel->row.name_id);
}

void draw_row(ViewerState& state, const Table& t, std::size_t r, std::string_view jump_by, bool wrap) {
  const auto& columns = t.spec->columns;
  const int at = jump_column(t, r, jump_by);
  ImGui::TableNextRow();
  ImGui::PushID(static_cast<int>(r));
  for (std::size_t i = 0; i < columns.size(); ++i) {
    ImGui::TableNextColumn();
    const std::string cell = analyzer::format_cell(columns[i], t.rows[r][i]);
    if (i == 0 && at >= 0) {
      // The first cell spans the row: a click anywhere on it jumps to the row's op.
      if (ImGui::Selectable(cell.c_str(), is_selected(state, t, r, at), ImGuiSelectableFlags_SpanAllColumns))
        jump_to(state, columns[at], t.rows[r][at]);
    } else if (wrap && wraps(columns[i])) {
      ImGui::TextWrapped("%s", cell.c_str());
    } else {
      ImGui::TextUnformatted(cell.c_str());
    }
  }
  ImGui::PopID();
}

std::size_t draw_rows(ViewerState& state, const Table& t, std::string_view jump_by) {
  constexpr ImGuiTableFlags kFlags =
      ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_Resizable | ImGuiTableFlags_Hideable;
  const auto& columns = t.spec->columns;
  if (!ImGui::BeginTable(std::string(t.spec->name).c_str(), static_cast<int>(columns.size()), kFlags)) return 0;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const Column& c = columns[i];
    ImGuiTableColumnFlags flags = wraps(c) ? ImGuiTableColumnFlags_WidthStretch : ImGuiTableColumnFlags_WidthFixed;
    if (i == 0) flags |= ImGuiTableColumnFlags_NoHide;  // it holds the row's click target
    if (c.detail && i != 0) flags |= ImGuiTableColumnFlags_DefaultHide;
    ImGui::TableSetupColumn(analyzer::column_label(c).c_str(), flags);
  }
  ImGui::TableHeadersRow();
  if (t.rows.size() <= kClipRows) {
    for (std::size_t r = 0; r < t.rows.size(); ++r) draw_row(state, t, r, jump_by, true);
  } else {
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(t.rows.size()));
    while (clipper.Step()) {
      for (int r = clipper.DisplayStart; r < clipper.DisplayEnd; ++r)
        draw_row(state, t, static_cast<std::size_t>(r), jump_by, false);
    }
  }
  ImGui::EndTable();
  return t.rows.size();
}

std::size_t draw_record(ViewerState& state, const Table& t, std::string_view jump_by) {
  if (!ImGui::BeginTable(std::string(t.spec->name).c_str(), 2, ImGuiTableFlags_Borders)) return 0;
  for (std::size_t i = 0; i < t.spec->columns.size(); ++i) {
    const Column& c = t.spec->columns[i];
    const Value& v = t.rows[0][i];
    const bool jumps = can_jump(c) && !is_null(v) && (jump_by.empty() || c.name == jump_by);
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(analyzer::column_label(c).c_str());
    ImGui::TableNextColumn();
    const std::string cell = analyzer::format_cell(c, v);
    ImGui::PushID(static_cast<int>(i));
    if (!jumps)
      ImGui::TextWrapped("%s", cell.c_str());
    else if (ImGui::Selectable(cell.c_str()))
      jump_to(state, c, v);
    ImGui::PopID();
  }
  ImGui::EndTable();
  return 1;
}

}  // namespace

bool opens_by_default(const analyzer::TableSpec& spec) { return spec.section != analyzer::Section::kDetail; }

std::size_t draw_report_table(ViewerState& state, const Table& t, const TableOptions& options) {
  const analyzer::TableSpec& spec = *t.spec;
  const std::string title = std::string(spec.title) + "##" + std::string(spec.name);
  if (!ImGui::CollapsingHeader(title.c_str(), options.open ? ImGuiTreeNodeFlags_DefaultOpen : 0)) return 0;
  if (!spec.advice.empty())
    ImGui::TextWrapped("advice: %.*s", static_cast<int>(spec.advice.size()), spec.advice.data());
  if (t.rows.empty()) {
    ImGui::TextDisabled("(no rows)");
    return 0;
  }
  return spec.layout == analyzer::Layout::kRecord ? draw_record(state, t, options.jump_by)
                                                  : draw_rows(state, t, options.jump_by);
}

}  // namespace npuscope::viewer

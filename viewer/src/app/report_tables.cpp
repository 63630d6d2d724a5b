#include "report_tables.h"

#include <imgui.h>

#include <algorithm>
#include <cfloat>
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

struct Drawing {
  ViewerState* state;
  const Table& t;
  const TableOptions& o;
};

void draw_cell(const Drawing& d, std::size_t r, std::size_t i, int at, bool wrap) {
  const Column& c = d.t.spec->columns[i];
  const Value& v = d.t.rows[r][i];
  const std::string cell = analyzer::format_cell(c, v);
  const ImU32 colour = d.o.cell_colour ? d.o.cell_colour(c, v) : 0;
  if (colour != 0) ImGui::PushStyleColor(ImGuiCol_Text, colour);
  if (i == 0 && d.o.on_select) {
    // The first cell spans the row: a click anywhere on it selects the row.
    if (ImGui::Selectable(cell.c_str(), d.o.selected == r, ImGuiSelectableFlags_SpanAllColumns)) d.o.on_select(r);
  } else if (i == 0 && at >= 0) {
    // ... or jumps to the row's op.
    if (ImGui::Selectable(cell.c_str(), is_selected(*d.state, d.t, r, at), ImGuiSelectableFlags_SpanAllColumns))
      jump_to(*d.state, d.t.spec->columns[at], d.t.rows[r][at]);
  } else if (wrap && wraps(c)) {
    ImGui::TextWrapped("%s", cell.c_str());
  } else {
    ImGui::TextUnformatted(cell.c_str());
  }
  if (colour != 0) ImGui::PopStyleColor();
}

void draw_row(const Drawing& d, std::size_t r, bool wrap) {
  const int at = d.state != nullptr && !d.o.on_select ? jump_column(d.t, r, d.o.jump_by) : -1;
  ImGui::TableNextRow();
  ImGui::PushID(static_cast<int>(r));
  for (std::size_t i = 0; i < d.t.spec->columns.size(); ++i) {
    ImGui::TableNextColumn();
    draw_cell(d, r, i, at, wrap);
  }
  ImGui::PopID();
}

// The text filter and the choices above a view's table, and how many rows pass.
void draw_filter(TableView& v, const Table& t) {
  if (v.chosen.size() != v.choices.size()) v.chosen.assign(v.choices.size(), 1);
  if (const int at = v.text_column.empty() ? -1 : t.spec->column_index(v.text_column); at >= 0) {
    const std::string hint = "filter by " + analyzer::column_label(t.spec->columns[at]);
    ImGui::SetNextItemWidth(260);
    if (ImGui::InputTextWithHint("##filter", hint.c_str(), v.text, sizeof v.text)) v.dirty = true;
    ImGui::SameLine();
  }
  for (std::size_t i = 0; i < v.choices.size(); ++i) {
    bool on = v.chosen[i] != 0;
    if (ImGui::Checkbox(v.choices[i].c_str(), &on)) {
      v.chosen[i] = on;
      v.dirty = true;
    }
    ImGui::SameLine();
  }
  refresh(v, t);
  ImGui::TextDisabled("%zu of %zu rows", v.shown.size(), t.rows.size());
}

void read_sort(TableView& v) {
  ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs();
  if (specs == nullptr || !specs->SpecsDirty) return;
  v.sort_column = specs->SpecsCount > 0 ? specs->Specs[0].ColumnIndex : -1;
  v.descending = specs->SpecsCount > 0 && specs->Specs[0].SortDirection == ImGuiSortDirection_Descending;
  v.dirty = true;
  specs->SpecsDirty = false;
}

// A view's rows, always through the clipper (one line each); the row to scroll to is kept drawn.
void draw_view_rows(const Drawing& d, TableView& v) {
  std::optional<std::size_t> target;
  if (v.scroll_to) {
    const auto it = std::find(v.shown.begin(), v.shown.end(), static_cast<std::uint32_t>(*v.scroll_to));
    if (it != v.shown.end()) target = static_cast<std::size_t>(it - v.shown.begin());
    v.scroll_to.reset();
  }
  v.drawn = 0;
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(v.shown.size()));
  if (target) clipper.ForceDisplayRangeByIndices(static_cast<int>(*target), static_cast<int>(*target) + 1);
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      draw_row(d, v.shown[static_cast<std::size_t>(i)], false);
      ++v.drawn;
      if (target && static_cast<std::size_t>(i) == *target) ImGui::SetScrollHereY(0.3f);
    }
  }
}

std::size_t draw_rows(const Drawing& d) {
  const Table& t = d.t;
  TableView* view = d.o.view;
  ImGuiTableFlags table_flags =
      ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_Resizable | ImGuiTableFlags_Hideable;
  if (view != nullptr) table_flags |= ImGuiTableFlags_Sortable | ImGuiTableFlags_SortTristate;
  if (d.o.height != 0) table_flags |= ImGuiTableFlags_ScrollY;
  if (d.o.scroll_x) table_flags |= ImGuiTableFlags_ScrollX;
  const auto& columns = t.spec->columns;
  if (!ImGui::BeginTable(std::string(t.spec->name).c_str(), static_cast<int>(columns.size()), table_flags,
                         ImVec2(0, d.o.height < 0 ? -FLT_MIN : d.o.height)))
    return 0;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const Column& c = columns[i];
    // Side scrolling: every column fixed, text ones at a set width (one line each, resizable).
    const bool stretch = wraps(c) && !d.o.scroll_x;
    ImGuiTableColumnFlags flags = stretch ? ImGuiTableColumnFlags_WidthStretch : ImGuiTableColumnFlags_WidthFixed;
    if (i == 0) flags |= ImGuiTableColumnFlags_NoHide;  // it holds the row's click target
    if (c.detail && i != 0) flags |= ImGuiTableColumnFlags_DefaultHide;
    // Op names get more of the width (a stretch weight; 0: the default): a row is read by them.
    const float width = !d.o.scroll_x ? (c.unit == Unit::kOpName ? 4.0f : 0.0f)
                        : wraps(c)    ? (i == 0 ? 300.0f : 200.0f)
                                      : 0.0f;
    ImGui::TableSetupColumn(analyzer::column_label(c).c_str(), flags, width);
  }
  if (d.o.height != 0) ImGui::TableSetupScrollFreeze(1, 1);  // the first column and the headers stay
  ImGui::TableHeadersRow();
  std::size_t shown = t.rows.size();
  if (view != nullptr) {
    read_sort(*view);
    refresh(*view, t);
    draw_view_rows(d, *view);
    shown = view->shown.size();
  } else if (t.rows.size() <= kClipRows) {
    for (std::size_t r = 0; r < t.rows.size(); ++r) draw_row(d, r, !d.o.scroll_x);
  } else {
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(t.rows.size()));
    while (clipper.Step()) {
      for (int r = clipper.DisplayStart; r < clipper.DisplayEnd; ++r) draw_row(d, static_cast<std::size_t>(r), false);
    }
  }
  ImGui::EndTable();
  return shown;
}

std::size_t draw_record(const Drawing& d) {
  const Table& t = d.t;
  if (!ImGui::BeginTable(std::string(t.spec->name).c_str(), 2, ImGuiTableFlags_Borders)) return 0;
  for (std::size_t i = 0; i < t.spec->columns.size(); ++i) {
    const Column& c = t.spec->columns[i];
    const Value& v = t.rows[0][i];
    const bool jumps =
        d.state != nullptr && can_jump(c) && !is_null(v) && (d.o.jump_by.empty() || c.name == d.o.jump_by);
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(analyzer::column_label(c).c_str());
    ImGui::TableNextColumn();
    const std::string cell = analyzer::format_cell(c, v);
    ImGui::PushID(static_cast<int>(i));
    if (!jumps)
      ImGui::TextWrapped("%s", cell.c_str());
    else if (ImGui::Selectable(cell.c_str()))
      jump_to(*d.state, c, v);
    ImGui::PopID();
  }
  ImGui::EndTable();
  return 1;
}

}  // namespace

bool opens_by_default(const analyzer::TableSpec& spec) { return spec.section != analyzer::Section::kDetail; }

std::size_t draw_report_table(ViewerState* state, const Table& t, const TableOptions& options) {
  const analyzer::TableSpec& spec = *t.spec;
  if (options.header) {
    const std::string title = std::string(spec.title) + "##" + std::string(spec.name);
    if (!ImGui::CollapsingHeader(title.c_str(), options.open ? ImGuiTreeNodeFlags_DefaultOpen : 0)) return 0;
    if (!spec.advice.empty())
      ImGui::TextWrapped("advice: %.*s", static_cast<int>(spec.advice.size()), spec.advice.data());
  }
  if (t.rows.empty()) {
    ImGui::TextDisabled("(no rows)");
    return 0;
  }
  const Drawing d{state, t, options};
  if (spec.layout == analyzer::Layout::kRecord) return draw_record(d);
  if (options.view != nullptr) draw_filter(*options.view, t);
  return draw_rows(d);
}

}  // namespace npuscope::viewer

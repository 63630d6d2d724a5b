// The analyzer's finding tables (Note [Finding tables] in npuscope/analyzer/finding_table.h) drawn
// from their declarations, for every panel that shows a Report: the Findings panel (npuscope
// analyze), the Diff panel (npuscope diff), the Compare panel (npuscope compare, of a trace's
// results or of two msprobe dumps). A click on a row with a task id or an op name selects that op on
// the timeline and brings it into view; a panel may take the click itself (TableOptions::on_select).
#pragma once

#include <imgui.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "npuscope/analyzer/finding_table.h"
#include "npuscope/viewer/table_view.h"
#include "viewer_state.h"

namespace npuscope::viewer {

// Whether a table's header starts open: the summary, alerts and advice; details start closed.
bool opens_by_default(const analyzer::TableSpec& spec);

struct TableOptions {
  bool open = true;  // the header starts open
  // The one column a click jumps by: in a diff, NEW's task ids (BASE's are not on this timeline).
  // Empty: a row's first non-null task id, else its first op name.
  std::string_view jump_by;
  // Sortable and filterable (table_view.h): a filter line above it, a click on a header sorts.
  TableView* view = nullptr;
  // Its rows scroll under fixed headers (and first column) in a region this high; < 0: what is left
  // of the window; 0: no region of their own.
  float height = 0;
  bool scroll_x = false;  // columns keep their width and the table scrolls sideways (many columns)
  bool header = true;     // under a collapsing header, with its advice
  // The colour of a cell's text (a verdict's); 0 for the default.
  ImU32 (*cell_colour)(const analyzer::Column&, const analyzer::Value&) = nullptr;
  // A click on a row calls this with its index in table.rows, instead of jumping to its op; the
  // row `selected` is drawn selected.
  std::function<void(std::size_t)> on_select;
  std::optional<std::size_t> selected;
};

// One table under a collapsing header: its advice, then its rows (a record as "label | value"
// lines). Detail columns start hidden (the header's context menu shows them). Returns the rows
// shown: 0 while the header is closed. `state` is null when there is no timeline to jump to.
std::size_t draw_report_table(ViewerState* state, const analyzer::Table& table, const TableOptions& options);

}  // namespace npuscope::viewer

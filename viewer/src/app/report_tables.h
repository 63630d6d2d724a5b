// The analyzer's finding tables (Note [Finding tables] in npuscope/analyzer/finding_table.h) drawn
// from their declarations, for every panel that shows a Report: the Findings panel (npuscope
// analyze) and the Diff panel (npuscope diff). A click on a row with a task id or an op name
// selects that op on the timeline and brings it into view.
#pragma once

#include <cstddef>
#include <string_view>

#include "npuscope/analyzer/finding_table.h"
#include "viewer_state.h"

namespace npuscope::viewer {

// Whether a table's header starts open: the summary, alerts and advice; details start closed.
bool opens_by_default(const analyzer::TableSpec& spec);

struct TableOptions {
  bool open = true;  // the header starts open
  // The one column a click jumps by: in a diff, NEW's task ids (BASE's are not on this timeline).
  // Empty: a row's first non-null task id, else its first op name.
  std::string_view jump_by;
};

// One table under a collapsing header: its advice, then its rows (a record as "label | value"
// lines). Detail columns start hidden (the header's context menu shows them). Returns the rows
// shown: 0 while the header is closed.
std::size_t draw_report_table(ViewerState& state, const analyzer::Table& table, const TableOptions& options);

}  // namespace npuscope::viewer

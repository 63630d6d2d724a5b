// A finding table (Note [Finding tables] in npuscope/analyzer/finding_table.h) as the user arranges
// it in a panel: sorted by a click on a column header (ascending, descending, then the report's
// order again) and filtered by a text that one column contains (ignoring case) and by the values of
// another switched on and off (a verdict). Headless: the viewer's report_tables draws it
// (TableOptions::view), tests check it without a display.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "npuscope/analyzer/finding_table.h"

namespace npuscope::viewer {

// Kept by its panel across frames; `shown` is rebuilt by refresh() only when the sort, the filter
// or the table changed (dirty), never per frame, and its rows are drawn through a clipper.
struct TableView {
  std::string_view text_column;      // "" no text filter
  std::string_view choice_column;    // "" no choices
  std::vector<std::string> choices;  // the values of choice_column offered, each with a checkbox
  std::vector<char> chosen;          // on or off, per choice (all on at first)
  char text[256] = "";               // the text filter, as its input box edits it
  int sort_column = -1;              // -1: the report's order
  bool descending = false;
  bool dirty = true;  // set when any of the above changes
  // What refresh() keeps:
  const analyzer::Table* table = nullptr;  // the table `shown` is of
  std::vector<std::uint32_t> shown;        // rows passing the filter, in the order shown
  // What the drawing keeps:
  std::optional<std::size_t> scroll_to;  // a row (of table.rows) to bring into view on the next frame
  std::size_t drawn = 0;                 // rows drawn by the last frame
};

// Rebuilds v.shown for `t` if v is dirty or was of another table. A row is shown when its
// choice_column value is not a choice switched off (values that are no choice always show) and its
// text_column text contains v.text; sorted by sort_column, stably (numbers by value, text by bytes,
// a list by its first item, nulls last either way).
void refresh(TableView& v, const analyzer::Table& t);

}  // namespace npuscope::viewer

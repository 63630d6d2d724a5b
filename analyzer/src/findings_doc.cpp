// docs/analyze.md's and docs/diff.md's generated parts, from the tables' declarations (Note [Finding
// tables]); table_markdown writes one table for any tool's doc (compare's too).
#include <sstream>

#include "npuscope/analyzer/diff.h"
#include "npuscope/analyzer/report.h"
#include "rules.h"

namespace npuscope::analyzer {
namespace {

std::string_view layout_name(Layout l) {
  switch (l) {
    case Layout::kRows: return "rows";
    case Layout::kRecord: return "record: one object, or null";
    case Layout::kItems: return "rows, as paragraphs in text";
  }
  return "";
}

std::string rules_writing(const TableSpec* spec) {
  std::string out;
  for (const Rule* r : registered_rules()) {
    for (const TableSpec* t : r->tables) {
      if (t == spec) out += (out.empty() ? "`" : ", `") + std::string(r->name) + "`";
    }
  }
  return out;
}

}  // namespace

std::string table_markdown(const TableSpec& t, std::string_view written_by) {
  std::ostringstream o;
  o << "\n### `" << t.name << "`: " << t.title << "\n\n"
    << t.doc << " Layout: " << layout_name(t.layout) << written_by << ".\n";
  if (!t.advice.empty()) o << "Advice printed with it: " << t.advice << ".\n";
  o << "\n| column | unit | meaning |\n|---|---|---|\n";
  for (const Column& c : t.columns) o << "| `" << c.name << "` | " << unit_name(c.unit) << " | " << c.doc << " |\n";
  return o.str();
}

std::string findings_markdown() {
  std::ostringstream o;
  o << kGeneratedMarker << "\n\n## Finding tables\n\n"
    << "Every table below is a key of `--format json` (an array of row objects keyed by the column names; a record "
       "table is one object, or null), a file `<table>.csv` of `--format csv` (the header is the column names), a "
       "section of the text report and of the viewer's Findings panel. A table is there when one of the rules that "
       "write it ran (`--rules`). Cells are integers for the units ns, bytes, count, id, task id and address; "
       "numbers for %, x, number, ratio (a share from 0 to 1), FLOP/s and B/s; strings for text and op name; "
       "booleans for flag; lists of strings for list; null when there is no value.\n\n"
    << "| rule | what it finds |\n|---|---|\n";
  for (const Rule* r : registered_rules()) {
    o << "| `" << r->name << "` | " << r->doc;
    // Note [Emulated-only rules]
    if (!r->emulated_only.empty()) o << "; not run on an imported profile (it needs " << r->emulated_only << ")";
    o << " |\n";
  }
  for (const TableSpec* t : all_table_specs()) o << table_markdown(*t, ". Written by " + rules_writing(t));
  return o.str();
}

std::string diff_tables_markdown() {
  std::ostringstream o;
  o << kDiffGeneratedMarker << "\n\n## Diff tables\n\n"
    << "Every table below is a key of `npuscope diff --format json` (an array of row objects keyed by the column "
       "names; a record table is one object), a file `<table>.csv` of `--format csv` and a section of the text report "
       "and of the viewer's Diff panel. Cells are integers for ns, bytes, count and task id; numbers for % and x; "
       "strings for text and op name; booleans for flag; null when there is no value. A ratio whose BASE is 0 and "
       "NEW is not is infinite: `inf` in text and CSV, the string \"inf\" in JSON.\n";
  for (const TableSpec* t : diff_table_specs()) o << table_markdown(*t);
  return o.str();
}

}  // namespace npuscope::analyzer

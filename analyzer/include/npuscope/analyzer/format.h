// Writing a report: terminal tables, JSON with stable keys, or CSV files. Each renders any finding
// table from its declaration (Note [Finding tables]); none knows a finding by name.
#pragma once

#include <ostream>
#include <string>

#include "npuscope/analyzer/report.h"
#include "npuscope/analyzer/text_table.h"

namespace npuscope::analyzer {

// In reading order: summary (and the notes), alerts (overflows), advice by time at stake, details.
// Empty tables are left out.
void write_text(const Report& report, std::ostream& out, const TextStyle& style = {});

// {"rules": [...], "notes": [...], "<table>": [{"<column>": value, ...}, ...] per table of the rules
// that ran (a record table: one object, or null)}. Times in ns, sizes in bytes, as integers.
std::string to_json(const Report& report);
// The same object written into `out` (no newline after it), every line after the first indented
// `indent` more spaces: for a report inside another JSON document, and for a report with a streamed
// table (Note [Streamed tables]), which it writes a chunk at a time.
void write_json(const Report& report, std::ostream& out, int indent = 0);

// One CSV file per table of the rules that ran into `dir` (created if missing): <table>.csv, the
// header its column names. Throws std::runtime_error naming a file it cannot write.
void write_csv(const Report& report, const std::string& dir);

}  // namespace npuscope::analyzer

// How `npuscope analyze`, `diff`, `cluster` and `compare` hand a report to the user: --format text | json |
// csv and -o (a file for text and json, a directory of one CSV per table for csv; stdout without -o).
#pragma once

#include <functional>
#include <ostream>
#include <string>

#include "npuscope/analyzer/report.h"
#include "npuscope/analyzer/text_table.h"

namespace npuscope::cli {

// How text goes to stdout: colour on a terminal (unless NO_COLOR), tables as wide as the terminal
// (else $COLUMNS, else 100 columns; 60 at least).
analyzer::TextStyle stdout_text_style();

// UsageError for a format other than text, json or csv, or csv without -o.
void check_report_format(const std::string& format, const std::string& output);

// JSON written by `write` into the file `output` (stdout when empty), then a newline: a report of
// any size written a chunk at a time (analyzer::write_json). Throws naming a file it cannot write.
void write_json_output(const std::string& output, const std::function<void(std::ostream&)>& write);

// Text to a terminal in colour (unless NO_COLOR). `what` names the analysis in csv's closing line
// ("the analysis of t.db").
void write_report(const analyzer::Report& report, const std::string& format, const std::string& output,
                  const std::string& what);

}  // namespace npuscope::cli

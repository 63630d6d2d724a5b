// How `npuscope analyze`, `diff`, `cluster` and `compare` hand a report to the user: --format text | json |
// csv and -o (a file for text and json, a directory of one CSV per table for csv; stdout without -o).
#pragma once

#include <string>

#include "npuscope/analyzer/report.h"
#include "npuscope/analyzer/text_table.h"

namespace npuscope::cli {

// How text goes to stdout: colour on a terminal (unless NO_COLOR), tables as wide as the terminal
// (else $COLUMNS, else 100 columns; 60 at least).
analyzer::TextStyle stdout_text_style();

// UsageError for a format other than text, json or csv, or csv without -o.
void check_report_format(const std::string& format, const std::string& output);

// Text to a terminal in colour (unless NO_COLOR). `what` names the analysis in csv's closing line
// ("the analysis of t.db").
void write_report(const analyzer::Report& report, const std::string& format, const std::string& output,
                  const std::string& what);

}  // namespace npuscope::cli

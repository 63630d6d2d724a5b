// Writing a report: terminal tables, JSON with stable keys, or CSV files.
#pragma once

#include <ostream>
#include <string>

#include "npuscope/analyzer/report.h"
#include "npuscope/collector/text_table.h"

namespace npuscope::analyzer {

using TextStyle = collector::TextStyle;

// Most important first: summary, overflows, advice, top ops, idle time, fallbacks, memory, op statistics.
void write_text(const Report& report, std::ostream& out, const TextStyle& style = {});

// Top-level keys: summary, op_statistics, top_ops, idle, fallback_ops, overflows, memory, advice
// (and rules, notes). Times in ns, sizes in bytes.
std::string to_json(const Report& report);

// One CSV file per table into `dir` (created if missing): summary.csv, op_statistic.csv,
// top_ops.csv, idle.csv, idle_gaps.csv, fallback_ops.csv, overflows.csv, memory.csv, leaks.csv,
// advice.csv. Throws std::runtime_error naming a file it cannot write.
void write_csv(const Report& report, const std::string& dir);

}  // namespace npuscope::analyzer

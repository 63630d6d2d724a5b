// Cells both compare reports write (compare_tables.cpp, dump_compare_tables.cpp). Private.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

#include "npuscope/analyzer/finding_table.h"

namespace npuscope::comparator::report_cells {

// A measured value, or null where it does not apply or is not a number (JSON has no NaN).
inline analyzer::Value metric(double v, bool applies = true) {
  return applies && std::isfinite(v) ? analyzer::Value(v) : analyzer::Value();
}
inline analyzer::Value text_or_null(const std::string& s) { return s.empty() ? analyzer::Value() : analyzer::Value(s); }
inline analyzer::Value name(auto e) { return std::string(enum_name(e)); }

// A number in a summary line, "-" when it is not one.
inline std::string number(double v, const char* format) {
  if (!std::isfinite(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

}  // namespace npuscope::comparator::report_cells

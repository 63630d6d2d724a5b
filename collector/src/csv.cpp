#include "npuscope/collector/csv.h"

namespace npuscope::collector {

void append_csv_field(std::string& out, std::string_view s) {
  const bool quote =
      s.find_first_of(",\"\r\n") != std::string_view::npos || (!s.empty() && (s.front() == ' ' || s.back() == ' '));
  if (!quote) {
    out.append(s);
    return;
  }
  out.push_back('"');
  for (const char c : s) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
}

}  // namespace npuscope::collector

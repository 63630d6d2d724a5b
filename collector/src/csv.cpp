#include "npuscope/collector/csv.h"

namespace npuscope::collector {

void append_csv_field(std::string& out, std::string_view s) {
  // One pass over the bytes without a branch a byte (the compiler vectorises it): find_first_of
  // calls memchr on the four specials for every byte, the largest cost of writing a 160 MB
  // compare_result.csv.
  unsigned char special = 0;
  for (const char c : s) special |= static_cast<unsigned char>((c == ',') | (c == '"') | (c == '\r') | (c == '\n'));
  const bool quote = special != 0 || (!s.empty() && (s.front() == ' ' || s.back() == ' '));
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

// One CSV field, quoted as RFC 4180 asks: what every CSV npuscope writes (exports, analyze) uses.
#pragma once

#include <string>
#include <string_view>

namespace npuscope::collector {

// `s` as one CSV field: quoted when it holds a comma, quote, CR or LF, or edge spaces.
void append_csv_field(std::string& out, std::string_view s);

}  // namespace npuscope::collector

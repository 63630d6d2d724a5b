// One JSON string, escaped as every JSON npuscope writes by hand needs it (exports, the streamed
// tables of reports): the one escaper, so that all of them accept the same text.
#pragma once

#include <string>
#include <string_view>

namespace npuscope::collector {

// `s` as a quoted JSON string: quotes, backslashes and control characters escaped; bytes that
// are not valid UTF-8 replaced by U+FFFD so that strict parsers accept the file.
void append_json_string(std::string& out, std::string_view s);

}  // namespace npuscope::collector

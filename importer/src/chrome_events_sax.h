// The careful path of the Chrome-event reader: one JSON value parsed by RapidJSON's SAX reader, for
// what the fast path (chrome_events_simd.h) does not take, and for its exact error messages.
// See Note [Streaming Chrome events] in chrome_events.h.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "chrome_events.h"

namespace npuscope::importer {

struct SaxOutcome {
  enum class Kind : std::uint8_t {
    kDone,        // a whole value read: `end` bytes
    kIncomplete,  // the text ended inside the value: read more and try again
    kNotATrace,   // well-formed JSON, but no event where an event must be
    kMalformed,   // `error` at byte `at`
  } kind = Kind::kDone;
  std::size_t end = 0, at = 0;
  std::string error;
};

// One event object at the start of `text` (whitespace before it skipped); `event` is called with it.
SaxOutcome sax_event(std::string_view text, const std::function<void(const ChromeEvent&)>& event);

// One value of the top-level object's member `key`: `top_level` is called with its text (a
// string's content, a number's digits, an array or object as compact JSON).
SaxOutcome sax_top_level_value(std::string_view text, std::string_view key,
                               const std::function<void(std::string_view, std::string_view)>& top_level);

}  // namespace npuscope::importer

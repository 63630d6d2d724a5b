// The fast path of the Chrome-event reader: a batch of events parsed by simdjson's On-Demand API.
// See Note [Streaming Chrome events] in chrome_events.h.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

#include "chrome_events.h"

namespace npuscope::importer {

class SimdEvents {
 public:
  SimdEvents();
  ~SimdEvents();
  SimdEvents(const SimdEvents&) = delete;
  SimdEvents& operator=(const SimdEvents&) = delete;

  struct Outcome {
    std::size_t end = 0;      // bytes taken: the events parsed, each with the comma after it
    bool list_ended = false;  // the list's closing ']' is at `end`
  };

  // Parses the events at text[0..size), which starts with one (an element of the list of events),
  // and hands each to `event`, stopping before the first it cannot take: one cut by the end of
  // the text, or anything unusual (the careful path takes it from there). text[-1] and
  // text[size..size + 128) may be overwritten (JsonWindow's room).
  Outcome parse(char* text, std::size_t size, const std::function<void(const ChromeEvent&)>& event);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace npuscope::importer

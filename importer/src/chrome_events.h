// Streaming the events of a Chrome-trace JSON file: Kineto's traces, torch_npu's trace_view.json
// and msprof's msprof_*.json are all one of these.
//
// Note [Streaming Chrome events]
// A trace of any size is read in bounded memory: zlib's gzread (.gz and plain files alike) fills a
// window of about 1 MiB (json_window.h); each event is handed to the caller as soon as it is whole,
// and nothing of it outlives the callback. Two parsers share the work:
// - the fast path (chrome_events_simd.cpp): simdjson's On-Demand API (Debian's libsimdjson-dev)
//   reads the events of a window as the elements of one array, the window wrapped in "[" and "]".
//   simdjson's first pass refuses a text whose last string is cut open, so a window that ends
//   inside a string is cut before that string's opening quote (the last quote not after an odd
//   run of backslashes), a point outside every string; the event cut by the window's end fails,
//   and the events before it stand.
// - the careful path (chrome_events_sax.cpp): RapidJSON's SAX reader (rapidjson-dev) takes the
//   event the fast path stopped at, and the rest of that window: the event cut by the window's end
//   (read again once the window holds it: a window grows to hold an event of any size), and
//   whatever simdjson refuses but a profiler writes (NaN, a byte that is no UTF-8), with the exact
//   error and byte for malformed JSON. It also reads the top level's other members, whose few
//   structural bytes (the top-level object, "traceEvents") are walked by hand.
// Both hand numbers over as the text they are written as, so that a timestamp with nanosecond
// digits ("1736408883688177.930", as a string or a number) and a flow id past 2^53 are read
// exactly: a double would round both (Perfetto's mis-nesting of such files, Ascend/pytorch issue
// 133). A list or object argument is its JSON text (as written by the fast path, compacted by the
// careful one: whitespace aside, the same). A file cut short (a killed profiler) yields the events
// before the cut and says so; any other malformation is an ImportError naming the file and the byte.
// The top level may be a bare array of events (trace_view.json) or an object holding
// "traceEvents" and the trace's metadata (Kineto: deviceProperties, distributedInfo, ...), whose
// other members are handed over as their JSON text.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace npuscope::importer {

// One argument of an event: scalars as their text (a string's content, a number's digits, true,
// false, null), arrays and objects as JSON text (whitespace as written or none).
struct ChromeArg {
  std::string_view key;
  std::string_view value;
  enum class Kind : std::uint8_t { kString, kNumber, kBool, kNull, kJson } kind = Kind::kString;
};

// One event, valid during the callback only.
struct ChromeEvent {
  std::string_view ph, name, cat;
  std::string_view pid, tid;                  // as written: numbers or strings ("Stream 7")
  std::optional<std::int64_t> ts_ns, dur_ns;  // exact (the file's microseconds x 1000)
  std::string_view id, bp, s;                 // flow id, flow binding point, instant scope
  std::vector<ChromeArg> args;
  std::vector<ChromeArg> other;  // members not named above ("tts", "flow_in", ...), for counting

  const ChromeArg* arg(std::string_view key) const;  // null if none
};

// An exact decimal number of microseconds as integer nanoseconds ("12.3456" -> 12345, rounded half
// away from zero at the nanosecond); nullopt for text that is not one (or out of range).
std::optional<std::int64_t> parse_us_as_ns(std::string_view text);
// An integer written as text ("7", "-1", "7.0"); nullopt otherwise.
std::optional<std::int64_t> parse_int(std::string_view text);
std::optional<double> parse_double(std::string_view text);

struct ChromeStreamResult {
  std::int64_t events = 0;
  std::int64_t bytes = 0;  // of JSON read (uncompressed)
  bool truncated = false;  // the file ended inside the JSON: the events before the cut were handed over
};

struct ChromeHandlers {
  std::function<void(const ChromeEvent&)> event;
  // A member of the top-level object other than traceEvents, with its value's JSON text.
  std::function<void(std::string_view key, std::string_view json)> top_level;
  std::function<void(std::int64_t)> progress;  // bytes read so far, now and then
};

// Streams `path` (.json or .json.gz). Throws ImportError for a file that cannot be read or is not a
// Chrome trace (naming the file and the byte), and whatever a handler throws.
ChromeStreamResult stream_chrome_events(const std::string& path, const ChromeHandlers& handlers);

}  // namespace npuscope::importer

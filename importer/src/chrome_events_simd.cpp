// See Note [Streaming Chrome events] in chrome_events.h.
#include "chrome_events_simd.h"

#include <simdjson.h>

#include <cstring>
#include <string_view>
#include <tuple>
#include <utility>

namespace npuscope::importer {

namespace od = simdjson::ondemand;
static_assert(simdjson::SIMDJSON_PADDING + 2 <= 128, "JsonWindow::kAfter must hold the ']' and simdjson's padding");

namespace {

std::string_view trimmed(std::string_view token) {
  while (!token.empty() &&
         (token.back() == ' ' || token.back() == '\n' || token.back() == '\r' || token.back() == '\t'))
    token.remove_suffix(1);
  return token;
}

// A value as the reader hands it over (ChromeArg's forms); false for what the fast path leaves
// to the careful one (NaN, a malformed token, ...).
bool value_text(od::value& v, std::string_view& text, ChromeArg::Kind& kind) {
  od::json_type type;
  if (v.type().get(type)) return false;
  switch (type) {
    case od::json_type::string: kind = ChromeArg::Kind::kString; return !v.get_string().get(text);
    case od::json_type::number:
      kind = ChromeArg::Kind::kNumber;
      text = trimmed(v.raw_json_token());
      return true;
    case od::json_type::boolean: {
      bool b = false;
      if (v.get_bool().get(b)) return false;
      kind = ChromeArg::Kind::kBool;
      text = b ? "true" : "false";
      return true;
    }
    case od::json_type::null:
      kind = ChromeArg::Kind::kNull;
      text = "null";
      return v.is_null();
    case od::json_type::array: {
      od::array a;
      kind = ChromeArg::Kind::kJson;
      return !v.get_array().get(a) && !a.raw_json().get(text);
    }
    case od::json_type::object: {
      od::object o;
      kind = ChromeArg::Kind::kJson;
      return !v.get_object().get(o) && !o.raw_json().get(text);
    }
  }
  return false;
}

}  // namespace

struct SimdEvents::Impl {
  od::parser parser;
  ChromeEvent event;  // reused: its vectors keep their room

  bool read_event(od::value element) {
    od::object obj;
    if (element.get_object().get(obj)) return false;
    ChromeEvent& e = event;
    e.ph = e.name = e.cat = e.pid = e.tid = e.id = e.bp = e.s = {};
    e.ts_ns = e.dur_ns = std::nullopt;
    e.args.clear();
    e.other.clear();
    std::string_view ts, dur;
    bool has_ts = false, has_dur = false;
    for (auto&& field_result : obj) {
      od::field field;
      std::string_view key;
      if (std::move(field_result).get(field) || field.unescaped_key().get(key)) return false;
      od::value v = field.value();
      if (key == "args") {
        od::json_type type;
        if (v.type().get(type)) return false;
        if (type == od::json_type::object) {
          od::object args;
          if (v.get_object().get(args)) return false;
          for (auto&& arg_result : args) {
            od::field arg;
            ChromeArg a;
            if (std::move(arg_result).get(arg) || arg.unescaped_key().get(a.key)) return false;
            od::value av = arg.value();
            if (!value_text(av, a.value, a.kind)) return false;
            e.args.push_back(a);
          }
          continue;
        }
      }
      std::string_view text;
      ChromeArg::Kind kind;
      if (!value_text(v, text, kind)) return false;
      if (kind == ChromeArg::Kind::kJson) {  // a list or object where a field is: for counting
        e.other.push_back({key, text, kind});
        continue;
      }
      switch (key.size()) {  // the members every event has, without a string compare each
        case 1:
          if (key[0] == 's') {
            e.s = text;
            continue;
          }
          break;
        case 2:
          if (key == "ph") {
            e.ph = text;
            continue;
          }
          if (key == "ts") {
            ts = text, has_ts = true;
            continue;
          }
          if (key == "id") {
            e.id = text;
            continue;
          }
          if (key == "bp") {
            e.bp = text;
            continue;
          }
          break;
        case 3:
          if (key == "cat") {
            e.cat = text;
            continue;
          }
          if (key == "pid") {
            e.pid = text;
            continue;
          }
          if (key == "tid") {
            e.tid = text;
            continue;
          }
          if (key == "dur") {
            dur = text, has_dur = true;
            continue;
          }
          break;
        case 4:
          if (key == "name") {
            e.name = text;
            continue;
          }
          break;
        default: break;
      }
      e.other.push_back({key, text, kind});
    }
    if (has_ts) e.ts_ns = parse_us_as_ns(ts);
    if (has_dur) e.dur_ns = parse_us_as_ns(dur);
    return true;
  }
};

SimdEvents::SimdEvents() : impl_(std::make_unique<Impl>()) {}
SimdEvents::~SimdEvents() = default;

SimdEvents::Outcome SimdEvents::parse(char* text, std::size_t size,
                                      const std::function<void(const ChromeEvent&)>& event) {
  // Wrapped as "[" text "]": simdjson reads the events as the elements of one array. Its first
  // pass refuses a text whose last string is cut open: the batch then ends before that string's
  // opening quote (an unescaped quote: one not after an odd run of backslashes), a point outside
  // every string, and the events before it are read (Note [Streaming Chrome events]).
  text[-1] = '[';
  std::memset(text + size, 0, simdjson::SIMDJSON_PADDING + 1);  // no ']' after the wrapper's: simdjson #1834
  std::size_t cut = size;
  od::document doc;
  const auto wrap = [&] {
    const char saved = text[cut];
    text[cut] = ']';
    const auto error = impl_->parser.iterate(text - 1, cut + 2, size + 2 + simdjson::SIMDJSON_PADDING).get(doc);
    return std::pair{error, saved};
  };
  auto [error, saved] = wrap();
  if (error == simdjson::UNCLOSED_STRING) {
    text[cut] = saved;
    std::size_t q = cut;
    for (;;) {
      q = std::string_view(text, q).rfind('"');
      if (q == std::string_view::npos) return {};
      std::size_t b = q;
      while (b > 0 && text[b - 1] == '\\') --b;
      if ((q - b) % 2 == 0) break;
    }
    cut = q;
    std::tie(error, saved) = wrap();
  }
  Outcome out;
  od::array list;
  if (!error && !doc.get_array().get(list)) {
    for (auto element : list) {
      od::value v;
      if (element.get(v) || !impl_->read_event(v)) break;
      // What follows the event: a comma, the list's own ']', or the wrapper's at `cut`.
      const char* next = nullptr;
      if (doc.current_location().get(next)) break;
      const auto at = static_cast<std::size_t>(next - text);
      if (at > cut) break;
      out.end = *next == ',' ? at + 1 : at;
      out.list_ended = *next == ']' && at < cut;
      event(impl_->event);
      if (out.list_ended || at == cut) break;
    }
  }
  text[cut] = saved;
  return out;
}

}  // namespace npuscope::importer

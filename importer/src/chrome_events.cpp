// See Note [Streaming Chrome events] in chrome_events.h.
#include "chrome_events.h"

#include <charconv>
#include <limits>
#include <optional>

#include "chrome_events_sax.h"
#include "chrome_events_simd.h"
#include "json_window.h"
#include "npuscope/importer/import.h"

namespace npuscope::importer {
namespace {

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// The top level of a Chrome trace, walked by hand (its few structural bytes); every value in it is
// parsed by the fast path (the events) or the careful one (the rest), see the Note.
class ChromeReader {
 public:
  ChromeReader(const std::string& path, const ChromeHandlers& handlers) : in_(path), h_(handlers) {
    on_event_ = [this](const ChromeEvent& e) {
      ++result_.events;
      if (h_.event) h_.event(e);
      if (h_.progress && (result_.events & 0xffff) == 0) h_.progress(in_.bytes_read());
    };
    on_top_level_ = [this](std::string_view key, std::string_view json) {
      if (h_.top_level) h_.top_level(key, json);
    };
  }

  ChromeStreamResult run() {
    skip_bom();
    const int c = next_token();
    if (c == '[') {
      in_.consume(1);
      events();
    } else if (c == '{') {
      in_.consume(1);
      object();
    } else {
      if (c < 0) malformed(0, "The document is empty.");
      not_a_trace();
    }
    result_.bytes = in_.bytes_read();
    return result_;
  }

 private:
  // The first byte that is no whitespace, reading more as needed; -1 at the end of the file.
  int next_token() {
    for (;;) {
      char* p = in_.data();
      std::size_t i = 0;
      const std::size_t n = in_.size();
      while (i < n && is_space(p[i])) ++i;
      in_.consume(i);
      if (i < n) return static_cast<unsigned char>(p[i]);
      if (!in_.read_more()) return -1;
    }
  }

  void skip_bom() {
    while (in_.size() < 3 && in_.read_more()) {
    }
    if (in_.size() >= 3 && std::string_view(in_.data(), 3) == "\xEF\xBB\xBF") in_.consume(3);
  }

  // The top-level object: its members, "traceEvents" the list of events.
  void object() {
    for (bool first = true;; first = false) {
      int c = next_token();
      if (c == '}') return in_.consume(1);
      if (!first) {
        if (c != ',') return structure_error(c, "Missing a comma or '}' after an object member.");
        in_.consume(1);
        c = next_token();
      }
      if (c != '"') return structure_error(c, "Missing a name for object member.");
      const std::optional<std::string> key = read_key();
      if (!key) return cut_short(in_.size());
      c = next_token();
      if (c != ':') return structure_error(c, "Missing a colon after a name of object member.");
      in_.consume(1);
      c = next_token();
      if (*key == "traceEvents") {
        if (c != '[') return c < 0 ? cut_short(0) : not_a_trace();  // must be the list of events
        in_.consume(1);
        if (!events()) return;
      } else if (!top_level_value(*key)) {
        return;
      }
    }
  }

  // A member's name (its raw text: the names that matter have no escapes).
  std::optional<std::string> read_key() {
    for (;;) {
      const char* p = in_.data();
      const std::size_t n = in_.size();
      for (std::size_t i = 1; i < n; ++i) {
        if (p[i] == '\\') {
          ++i;
        } else if (p[i] == '"') {
          std::string key(p + 1, i - 1);
          in_.consume(i + 1);
          return key;
        }
      }
      if (!in_.read_more()) return std::nullopt;
    }
  }

  bool top_level_value(const std::string& key) {
    for (;;) {
      const SaxOutcome r = sax_top_level_value({in_.data(), in_.size()}, key, on_top_level_);
      if (r.kind == SaxOutcome::Kind::kDone) {
        in_.consume(r.end);
        return true;
      }
      if (r.kind != SaxOutcome::Kind::kIncomplete) return fail(r), false;
      if (!in_.read_more()) return cut_short(in_.size()), false;
    }
  }

  // The list of events, after its '['; false when the file ended inside it.
  bool events() {
    for (bool first = true;;) {
      int c = next_token();
      if (c == ']') {
        in_.consume(1);
        return true;
      }
      if (!first) {
        if (c != ',') return structure_error(c, "Missing a comma or ']' after an array element."), false;
        in_.consume(1);
        c = next_token();
      }
      if (c < 0) return cut_short(0), false;
      first = false;
      // The fast path takes what it can of the window; the careful path the event it stopped at,
      // and the rest of the window after it (that the fast path not index it again and again).
      if (in_.offset(0) >= careful_until_) {
        const SimdEvents::Outcome fast = simd_.parse(in_.data(), in_.size(), on_event_);
        in_.consume(fast.end);
        if (fast.list_ended) {
          in_.consume(1);
          return true;
        }
        if (fast.end > 0) {
          first = in_.data()[-1] == ',';  // else a comma or ']' must come next
          continue;
        }
        careful_until_ = in_.bytes_read();
      }
      for (;;) {
        const SaxOutcome r = sax_event({in_.data(), in_.size()}, on_event_);
        if (r.kind == SaxOutcome::Kind::kDone) {
          in_.consume(r.end);
          break;
        }
        if (r.kind != SaxOutcome::Kind::kIncomplete) return fail(r), false;
        if (!in_.read_more()) return cut_short(in_.size()), false;
      }
    }
  }

  // ---- endings -------------------------------------------------------------------------------------
  // The file ended inside the JSON (a killed profiler, a truncated copy): the events before the cut
  // stand, unless there were none.
  void cut_short(std::size_t at) {
    if (result_.events > 0) {
      result_.truncated = true;
      return;
    }
    throw ImportError(in_.path() + ": malformed JSON at byte " + std::to_string(in_.offset(at)) +
                      ": the file ends there (cut short before its first event?)");
  }
  void structure_error(int c, const char* what) {
    if (c < 0) return cut_short(in_.size());
    malformed(0, what);
  }
  [[noreturn]] void malformed(std::size_t at, const std::string& what) {
    throw ImportError(in_.path() + ": malformed JSON at byte " + std::to_string(in_.offset(at)) + ": " + what);
  }
  [[noreturn]] void not_a_trace() {
    throw ImportError(in_.path() + ": not a Chrome trace (at byte " + std::to_string(in_.offset(0)) +
                      "): expected a JSON array of events, or an object with \"traceEvents\"");
  }
  void fail(const SaxOutcome& r) {
    if (r.kind == SaxOutcome::Kind::kNotATrace) {
      in_.consume(r.at);
      not_a_trace();
    }
    if (in_.cut_short() && in_.at_eof()) return cut_short(r.at);
    malformed(r.at, r.error);
  }

  JsonWindow in_;
  const ChromeHandlers& h_;
  SimdEvents simd_;
  std::int64_t careful_until_ = 0;  // file offset before which events take the careful path
  ChromeStreamResult result_;
  std::function<void(const ChromeEvent&)> on_event_;
  std::function<void(std::string_view, std::string_view)> on_top_level_;
};

}  // namespace

const ChromeArg* ChromeEvent::arg(std::string_view key) const {
  for (const ChromeArg& a : args) {
    if (a.key == key) return &a;
  }
  return nullptr;
}

std::optional<std::int64_t> parse_us_as_ns(std::string_view t) {
  if (t.empty()) return std::nullopt;
  bool negative = false;
  std::size_t i = 0;
  if (t[0] == '-') negative = true, ++i;
  std::int64_t whole = 0;
  std::size_t digits = 0;
  for (; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i, ++digits) {
    if (whole > (std::numeric_limits<std::int64_t>::max() - 9) / 10) return std::nullopt;
    whole = whole * 10 + (t[i] - '0');
  }
  std::int64_t frac = 0;  // nanoseconds: three digits after the point
  int round = 0;
  if (i < t.size() && t[i] == '.') {
    ++i;
    int k = 0;
    for (; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i, ++k, ++digits) {
      if (k < 3) {
        frac = frac * 10 + (t[i] - '0');
      } else if (k == 3) {
        round = t[i] >= '5' ? 1 : 0;
      }
    }
    for (; k < 3; ++k) frac *= 10;
  }
  if (digits == 0) return std::nullopt;
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {  // an exponent: rare (a writer's float); through double
    const auto d = parse_double(t);
    if (!d || !(*d * 1000.0 < 9.2e18 && *d * 1000.0 > -9.2e18)) return std::nullopt;
    return static_cast<std::int64_t>(*d * 1000.0 + (*d < 0 ? -0.5 : 0.5));
  }
  if (i != t.size()) return std::nullopt;
  if (whole > (std::numeric_limits<std::int64_t>::max() - 1000) / 1000) return std::nullopt;
  const std::int64_t ns = whole * 1000 + frac + round;
  return negative ? -ns : ns;
}

std::optional<std::int64_t> parse_int(std::string_view t) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc()) return std::nullopt;
  if (end == t.data() + t.size()) return v;
  // "7.0": an integer written as a float
  std::string_view rest(end, static_cast<std::size_t>(t.data() + t.size() - end));
  if (rest.size() >= 2 && rest[0] == '.' && rest.find_first_not_of('0', 1) == std::string_view::npos) return v;
  return std::nullopt;
}

std::optional<double> parse_double(std::string_view t) {
  double v = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || end != t.data() + t.size()) return std::nullopt;
  return v;
}

ChromeStreamResult stream_chrome_events(const std::string& path, const ChromeHandlers& handlers) {
  return ChromeReader(path, handlers).run();
}

}  // namespace npuscope::importer

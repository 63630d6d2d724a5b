// See Note [Streaming Chrome events] in chrome_events.h.
#include "chrome_events.h"

#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>
#include <zlib.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <limits>

#include "npuscope/importer/import.h"

namespace npuscope::importer {
namespace {

constexpr std::size_t kReadBytes = std::size_t{1} << 20;

// A RapidJSON input stream over gzread (plain files read through it unchanged).
class GzStream {
 public:
  using Ch = char;
  explicit GzStream(const std::string& path) : path_(path), file_(gzopen(path.c_str(), "rb")) {
    if (file_ == nullptr) throw ImportError(path + ": cannot open: " + std::strerror(errno));
    gzbuffer(file_, static_cast<unsigned>(kReadBytes));
    fill();
  }
  ~GzStream() { gzclose(file_); }
  GzStream(const GzStream&) = delete;
  GzStream& operator=(const GzStream&) = delete;

  // RapidJSON calls these for every byte: inlined, the refill out of line.
  [[gnu::always_inline]] Ch Peek() const { return pos_ < end_ ? data_[pos_] : '\0'; }
  [[gnu::always_inline]] Ch Take() {
    if (pos_ >= end_) [[unlikely]]
      return '\0';
    const Ch c = data_[pos_++];
    if (pos_ == end_) [[unlikely]]
      fill();
    return c;
  }
  std::size_t Tell() const { return static_cast<std::size_t>(consumed_ + static_cast<std::int64_t>(pos_)); }
  // Unused (output side of the stream concept).
  Ch* PutBegin() { return nullptr; }
  void Put(Ch) {}
  void Flush() {}
  std::size_t PutEnd(Ch*) { return 0; }

  bool cut_short() const { return cut_short_; }
  std::int64_t bytes() const { return consumed_ + static_cast<std::int64_t>(pos_); }

 private:
  [[gnu::noinline]] void fill() {
    consumed_ += static_cast<std::int64_t>(end_);
    pos_ = end_ = 0;
    if (eof_) return;
    const int n = gzread(file_, buf_.data(), static_cast<unsigned>(buf_.size()));
    if (n < 0) {
      int err = 0;
      const char* msg = gzerror(file_, &err);
      // A .gz cut short reads as a data/buffer error at its end: what was read stands.
      if (err == Z_BUF_ERROR || err == Z_DATA_ERROR) {
        cut_short_ = true;
        eof_ = true;
        return;
      }
      throw ImportError(path_ + ": cannot read: " + msg);
    }
    if (n == 0) {
      eof_ = true;
      int err = 0;
      gzerror(file_, &err);
      if (err == Z_BUF_ERROR) cut_short_ = true;  // a gzip member without its end
      return;
    }
    end_ = static_cast<std::size_t>(n);
  }

  std::string path_;
  gzFile file_;
  std::vector<char> buf_ = std::vector<char>(kReadBytes);
  const char* data_ = buf_.data();
  std::size_t pos_ = 0, end_ = 0;
  std::int64_t consumed_ = 0;
  bool eof_ = false, cut_short_ = false;
};

// Text kept while an event is read: offsets into one buffer, views once the event is whole.
struct Span {
  std::uint32_t at = 0, size = 0;
};

class Handler : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, Handler> {
 public:
  Handler(const ChromeHandlers& h, ChromeStreamResult& result, GzStream& in) : h_(h), result_(result), in_(in) {}

  bool Null() { return scalar("null", 4, ChromeArg::Kind::kNull); }
  bool Bool(bool b) {
    return b ? scalar("true", 4, ChromeArg::Kind::kBool) : scalar("false", 5, ChromeArg::Kind::kBool);
  }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) { return scalar(s, n, ChromeArg::Kind::kNumber); }
  bool String(const char* s, rapidjson::SizeType n, bool) { return scalar(s, n, ChromeArg::Kind::kString); }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    if (capture_depth_ > 0) {
      capture_comma();
      capture_string(s, n);
      capture_.push_back(':');
      after_key_ = true;
      return true;
    }
    key_.assign(s, n);
    return true;
  }

  bool StartObject() { return start('{'); }
  bool EndObject(rapidjson::SizeType) { return end('}'); }
  bool StartArray() { return start('['); }
  bool EndArray(rapidjson::SizeType) { return end(']'); }

 private:
  enum class Where : std::uint8_t { kRoot, kTopObject, kEvents, kEvent, kArgs, kDone };

  // ---- values --------------------------------------------------------------------------------------
  bool scalar(const char* s, std::size_t n, ChromeArg::Kind kind) {
    if (capture_depth_ > 0) {
      capture_comma();
      if (kind == ChromeArg::Kind::kString) {
        capture_string(s, n);
      } else {
        capture_.append(s, n);
      }
      return true;
    }
    switch (where_) {
      case Where::kEvent: return event_member(s, n, kind);
      case Where::kArgs: args_.push_back({text(key_), text(s, n), kind}); return true;
      case Where::kTopObject:
        if (key_ == "traceEvents") return false;  // must be the list of events
        if (h_.top_level) h_.top_level(key_, std::string_view(s, n));
        return true;
      default: return false;  // a scalar where an event or the trace should be
    }
  }

  bool event_member(const char* s, std::size_t n, ChromeArg::Kind kind) {
    const std::string_view k = key_;
    const Span v = text(s, n);
    if (k == "ph")
      ph_ = v;
    else if (k == "name")
      name_ = v;
    else if (k == "cat")
      cat_ = v;
    else if (k == "pid")
      pid_ = v;
    else if (k == "tid")
      tid_ = v;
    else if (k == "ts")
      ts_ = v, has_ts_ = true;
    else if (k == "dur")
      dur_ = v, has_dur_ = true;
    else if (k == "id")
      id_ = v;
    else if (k == "bp")
      bp_ = v;
    else if (k == "s")
      s_ = v;
    else
      other_.push_back({text(key_), v, kind});
    return true;
  }

  // ---- containers ----------------------------------------------------------------------------------
  bool start(char open) {
    if (capture_depth_ > 0) {
      capture_comma();
      capture_.push_back(open);
      ++capture_depth_;
      after_open_ = true;
      return true;
    }
    switch (where_) {
      case Where::kRoot:
        top_object_ = open == '{';
        where_ = top_object_ ? Where::kTopObject : Where::kEvents;
        return true;
      case Where::kTopObject:
        if (key_ == "traceEvents") {
          where_ = Where::kEvents;
          return open == '[';  // must be the list of events
        }
        return begin_capture(open, Where::kTopObject);
      case Where::kEvents:
        if (open != '{') return false;  // an event must be an object
        begin_event();
        where_ = Where::kEvent;
        return true;
      case Where::kEvent:
        if (open == '{' && key_ == "args") {
          where_ = Where::kArgs;
          return true;
        }
        return begin_capture(open, Where::kEvent);
      case Where::kArgs: return begin_capture(open, Where::kArgs);
      case Where::kDone: return false;
    }
    return false;
  }

  bool end(char close) {
    if (capture_depth_ > 0) {
      capture_.push_back(close);
      after_open_ = false;
      if (--capture_depth_ == 0) finish_capture();
      return true;
    }
    switch (where_) {
      case Where::kArgs: where_ = Where::kEvent; return true;
      case Where::kEvent:
        emit_event();
        where_ = Where::kEvents;
        return true;
      case Where::kEvents: where_ = top_object_ ? Where::kTopObject : Where::kDone; return true;
      case Where::kTopObject: where_ = Where::kDone; return true;
      default: return false;
    }
  }

  bool begin_capture(char open, Where owner) {
    capture_owner_ = owner;
    capture_key_ = key_;
    capture_.assign(1, open);
    capture_depth_ = 1;
    after_open_ = true;
    return true;
  }
  void finish_capture() {
    switch (capture_owner_) {
      case Where::kTopObject:
        if (h_.top_level) h_.top_level(capture_key_, capture_);
        break;
      case Where::kArgs: args_.push_back({text(capture_key_), text(capture_), ChromeArg::Kind::kJson}); break;
      case Where::kEvent: other_.push_back({text(capture_key_), text(capture_), ChromeArg::Kind::kJson}); break;
      default: break;
    }
  }
  void capture_comma() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (!after_open_) capture_.push_back(',');
    after_open_ = false;
  }
  void capture_string(const char* s, std::size_t n) {
    capture_.push_back('"');
    for (std::size_t i = 0; i < n; ++i) {
      const char c = s[i];
      if (c == '"' || c == '\\') {
        capture_.push_back('\\');
        capture_.push_back(c);
      } else if (static_cast<unsigned char>(c) < 0x20) {
        char esc[8];
        std::snprintf(esc, sizeof esc, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
        capture_ += esc;
      } else {
        capture_.push_back(c);
      }
    }
    capture_.push_back('"');
  }

  // ---- events --------------------------------------------------------------------------------------
  void begin_event() {
    arena_.clear();
    args_.clear();
    other_.clear();
    ph_ = name_ = cat_ = pid_ = tid_ = ts_ = dur_ = id_ = bp_ = s_ = Span{};
    has_ts_ = has_dur_ = false;
  }
  Span text(const char* s, std::size_t n) {
    const Span span{static_cast<std::uint32_t>(arena_.size()), static_cast<std::uint32_t>(n)};
    arena_.append(s, n);
    return span;
  }
  Span text(const std::string& s) { return text(s.data(), s.size()); }
  std::string_view view(Span s) const { return std::string_view(arena_).substr(s.at, s.size); }

  void emit_event() {
    event_.ph = view(ph_);
    event_.name = view(name_);
    event_.cat = view(cat_);
    event_.pid = view(pid_);
    event_.tid = view(tid_);
    event_.ts_ns = has_ts_ ? parse_us_as_ns(view(ts_)) : std::nullopt;
    event_.dur_ns = has_dur_ ? parse_us_as_ns(view(dur_)) : std::nullopt;
    event_.id = view(id_);
    event_.bp = view(bp_);
    event_.s = view(s_);
    event_.args.clear();
    for (const auto& a : args_) event_.args.push_back({view(a.key), view(a.value), a.kind});
    event_.other.clear();
    for (const auto& a : other_) event_.other.push_back({view(a.key), view(a.value), a.kind});
    ++result_.events;
    if (h_.event) h_.event(event_);
    if (h_.progress && (result_.events & 0xffff) == 0) h_.progress(in_.bytes());
  }

  struct ArgSpan {
    Span key, value;
    ChromeArg::Kind kind;
  };

  const ChromeHandlers& h_;
  ChromeStreamResult& result_;
  GzStream& in_;
  Where where_ = Where::kRoot;
  bool top_object_ = false;
  std::string key_;
  // The event being read.
  std::string arena_;
  Span ph_, name_, cat_, pid_, tid_, ts_, dur_, id_, bp_, s_;
  bool has_ts_ = false, has_dur_ = false;
  std::vector<ArgSpan> args_, other_;
  ChromeEvent event_;
  // A nested value copied out as JSON text.
  std::string capture_, capture_key_;
  int capture_depth_ = 0;
  Where capture_owner_ = Where::kRoot;
  bool after_open_ = false, after_key_ = false;
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
  ChromeStreamResult result;
  GzStream in(path);
  Handler handler(handlers, result, in);
  rapidjson::Reader reader;
  constexpr unsigned kFlags =
      rapidjson::kParseNumbersAsStringsFlag | rapidjson::kParseStopWhenDoneFlag | rapidjson::kParseNanAndInfFlag;
  const rapidjson::ParseResult ok = reader.Parse<kFlags>(in, handler);
  result.bytes = in.bytes();
  if (ok) return result;
  // Cut short: the input ended inside the JSON (a killed profiler, a truncated copy).
  const bool at_end = in.Peek() == '\0' && static_cast<std::int64_t>(ok.Offset()) >= in.bytes();
  if ((at_end || in.cut_short()) && result.events > 0) {
    result.truncated = true;
    return result;
  }
  if (ok.Code() == rapidjson::kParseErrorTermination) {
    throw ImportError(path + ": not a Chrome trace (at byte " + std::to_string(ok.Offset()) +
                      "): expected a JSON array of events, or an object with \"traceEvents\"");
  }
  throw ImportError(path + ": malformed JSON at byte " + std::to_string(ok.Offset()) + ": " +
                    rapidjson::GetParseError_En(ok.Code()) +
                    (at_end ? " (the file ends there: cut short before its first event?)" : ""));
}

}  // namespace npuscope::importer

// See Note [Streaming Chrome events] in chrome_events.h.
#include "chrome_events_sax.h"

#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include <cstdio>

namespace npuscope::importer {
namespace {

// Text kept while an event is read: offsets into one buffer, views once the event is whole.
struct Span {
  std::uint32_t at = 0, size = 0;
};

// SAX handler for one value: an event object (kEvent), or a top-level member's value (kTopValue).
class Handler : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, Handler> {
 public:
  enum class Root : std::uint8_t { kEvent, kTopValue };

  Handler(Root root, std::string_view key, const std::function<void(const ChromeEvent&)>* event,
          const std::function<void(std::string_view, std::string_view)>* top_level)
      : root_(root), event_fn_(event), top_level_fn_(top_level), key_(key) {}

  bool not_a_trace() const { return not_a_trace_; }

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
  enum class Where : std::uint8_t { kRoot, kEvent, kArgs, kDone };

  bool refuse() {
    not_a_trace_ = true;
    return false;
  }

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
      case Where::kRoot:
        if (root_ == Root::kEvent) return refuse();  // a scalar where an event should be
        if ((*top_level_fn_)) (*top_level_fn_)(key_, std::string_view(s, n));
        where_ = Where::kDone;
        return true;
      default: return refuse();
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
        if (root_ == Root::kTopValue) return begin_capture(open, Where::kRoot);
        if (open != '{') return refuse();  // an event must be an object
        where_ = Where::kEvent;
        return true;
      case Where::kEvent:
        if (open == '{' && key_ == "args") {
          where_ = Where::kArgs;
          return true;
        }
        return begin_capture(open, Where::kEvent);
      case Where::kArgs: return begin_capture(open, Where::kArgs);
      case Where::kDone: return refuse();
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
        where_ = Where::kDone;
        return true;
      default: return refuse();
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
      case Where::kRoot:
        if (*top_level_fn_) (*top_level_fn_)(capture_key_, capture_);
        where_ = Where::kDone;
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

  // ---- the event -----------------------------------------------------------------------------------
  Span text(const char* s, std::size_t n) {
    const Span span{static_cast<std::uint32_t>(arena_.size()), static_cast<std::uint32_t>(n)};
    arena_.append(s, n);
    return span;
  }
  Span text(const std::string& s) { return text(s.data(), s.size()); }
  std::string_view view(Span s) const { return std::string_view(arena_).substr(s.at, s.size); }

  void emit_event() {
    ChromeEvent e;
    e.ph = view(ph_);
    e.name = view(name_);
    e.cat = view(cat_);
    e.pid = view(pid_);
    e.tid = view(tid_);
    e.ts_ns = has_ts_ ? parse_us_as_ns(view(ts_)) : std::nullopt;
    e.dur_ns = has_dur_ ? parse_us_as_ns(view(dur_)) : std::nullopt;
    e.id = view(id_);
    e.bp = view(bp_);
    e.s = view(s_);
    for (const auto& a : args_) e.args.push_back({view(a.key), view(a.value), a.kind});
    for (const auto& a : other_) e.other.push_back({view(a.key), view(a.value), a.kind});
    (*event_fn_)(e);
  }

  struct ArgSpan {
    Span key, value;
    ChromeArg::Kind kind;
  };

  const Root root_;
  const std::function<void(const ChromeEvent&)>* event_fn_;
  const std::function<void(std::string_view, std::string_view)>* top_level_fn_;
  Where where_ = Where::kRoot;
  bool not_a_trace_ = false;
  std::string key_;
  std::string arena_;
  Span ph_, name_, cat_, pid_, tid_, ts_, dur_, id_, bp_, s_;
  bool has_ts_ = false, has_dur_ = false;
  std::vector<ArgSpan> args_, other_;
  // A nested value copied out as JSON text.
  std::string capture_, capture_key_;
  int capture_depth_ = 0;
  Where capture_owner_ = Where::kRoot;
  bool after_open_ = false, after_key_ = false;
};

SaxOutcome parse(std::string_view text, Handler& handler) {
  rapidjson::MemoryStream in(text.data(), text.size());
  rapidjson::Reader reader;
  constexpr unsigned kFlags =
      rapidjson::kParseNumbersAsStringsFlag | rapidjson::kParseStopWhenDoneFlag | rapidjson::kParseNanAndInfFlag;
  const rapidjson::ParseResult ok = reader.Parse<kFlags>(in, handler);
  SaxOutcome out;
  if (ok) {
    out.end = in.Tell();
    // A number or literal that ends with the text may go on in the bytes not read yet.
    if (out.end >= text.size() && !text.empty() && text.back() != '}' && text.back() != ']' && text.back() != '"')
      out.kind = SaxOutcome::Kind::kIncomplete;
    return out;
  }
  out.at = ok.Offset();
  if (handler.not_a_trace()) {
    out.kind = SaxOutcome::Kind::kNotATrace;
  } else if (out.at >= text.size()) {
    out.kind = SaxOutcome::Kind::kIncomplete;
  } else {
    out.kind = SaxOutcome::Kind::kMalformed;
    out.error = rapidjson::GetParseError_En(ok.Code());
  }
  return out;
}

}  // namespace

SaxOutcome sax_event(std::string_view text, const std::function<void(const ChromeEvent&)>& event) {
  Handler handler(Handler::Root::kEvent, {}, &event, nullptr);
  return parse(text, handler);
}

SaxOutcome sax_top_level_value(std::string_view text, std::string_view key,
                               const std::function<void(std::string_view, std::string_view)>& top_level) {
  Handler handler(Handler::Root::kTopValue, key, nullptr, &top_level);
  return parse(text, handler);
}

}  // namespace npuscope::importer

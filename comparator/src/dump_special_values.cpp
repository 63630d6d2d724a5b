// Note [msprobe's special values] (dump_special_values.h).
#include "dump_special_values.h"

#include <charconv>

#include "dump_values.h"

namespace npuscope::comparator {
namespace {

using collector::DumpValue;

bool is_number_char(char c) {
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

// A JSON string starting at json[i] (its opening quote) as Python's repr writes it ('text'); returns
// the index past its closing quote.
std::size_t append_string_repr(std::string& out, std::string_view json, std::size_t i) {
  out += '\'';
  for (++i; i < json.size() && json[i] != '"'; ++i) {
    if (json[i] == '\\' && i + 1 < json.size()) {
      const char c = json[++i];
      out += c == 'n' ? "\\n" : c == 't' ? "\\t" : c == '\'' ? "\\'" : std::string(1, c);
      continue;
    }
    if (json[i] == '\'') out += '\\';
    out += json[i];
  }
  out += '\'';
  return i + 1;
}

// A JSON number as Python writes the int or float json.load makes of it.
void append_number(std::string& out, std::string_view number) {
  if (number.find_first_of(".eE") == std::string_view::npos) return out.append(number), void();
  double v = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
  if (ec != std::errc() || end != number.data() + number.size()) return out.append(number), void();
  append_python_float(out, v);
}

}  // namespace

std::string python_str_of_json(std::string_view json) {
  if (json.size() >= 2 && json.front() == '"' && json.back() == '"') {  // a str: its text
    std::string out;
    for (std::size_t i = 1; i + 1 < json.size(); ++i) {
      if (json[i] == '\\' && i + 2 < json.size()) {
        const char c = json[++i];
        out += c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c;
      } else {
        out += json[i];
      }
    }
    return out;
  }
  std::string out;
  out.reserve(json.size() + json.size() / 4);
  for (std::size_t i = 0; i < json.size();) {
    const char c = json[i];
    const std::string_view rest = json.substr(i);
    if (c == '"') {
      i = append_string_repr(out, json, i);
    } else if (c == ',' || c == ':') {
      out += c;
      out += ' ';
      ++i;
    } else if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      ++i;
    } else if (rest.starts_with("null")) {
      out += "None", i += 4;
    } else if (rest.starts_with("true")) {
      out += "True", i += 4;
    } else if (rest.starts_with("false")) {
      out += "False", i += 5;
    } else if (rest.starts_with("NaN")) {
      out += "nan", i += 3;
    } else if (rest.starts_with("-Infinity")) {
      out += "-inf", i += 9;
    } else if (rest.starts_with("Infinity")) {
      out += "inf", i += 8;
    } else if (is_number_char(c)) {
      std::size_t end = i;
      while (end < json.size() && is_number_char(json[end])) ++end;
      append_number(out, json.substr(i, end - i));
      i = end;
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

SpecialValue special_value(const DumpValue& v) {
  if (v.is_tensor || is_null_value(v)) return SpecialValue::kNone;
  if (v.type == "torch.Size") return SpecialValue::kSize;
  if (v.type == "slice") return SpecialValue::kSlice;
  if (v.type == "ellipsis") return SpecialValue::kEllipsis;
  const std::size_t dot = v.slot.rfind('.');
  const std::string_view last =
      dot == std::string::npos ? std::string_view(v.slot) : std::string_view(v.slot).substr(dot + 1);
  if (last == "src" || last == "dst" || last == "group_src" || last == "group_dst") return SpecialValue::kRank;
  if (v.type == "torch.ProcessGroup") return SpecialValue::kProcessGroup;
  // The reader keeps an object without "value" whole: it starts with its own "type".
  if (v.value.starts_with("{\"type\":")) return SpecialValue::kNoValue;
  return SpecialValue::kNone;
}

std::string group_ranks(const DumpValue& v) {
  constexpr std::string_view kKey = "\"group_ranks\":";
  const std::size_t at = v.value.find(kKey);
  if (at == std::string::npos) return "None";
  const std::size_t first = at + kKey.size();
  if (first >= v.value.size() || v.value[first] != '[') return "None";  // null, or not a list
  const std::size_t last = v.value.find(']', first);                    // a list of ints: no nested brackets
  if (last == std::string::npos) return "None";
  return python_str_of_json(std::string_view(v.value).substr(first, last - first + 1));
}

}  // namespace npuscope::comparator

#include "npuscope/analyzer/text_table.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace npuscope::analyzer {
namespace {

std::string printf_string(const char* format, double v, const char* unit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v, unit);
  return buf;
}

}  // namespace

void TextTable::write(std::ostream& out, int width, const std::string& indent) const {
  const std::size_t n = columns_.size();
  std::vector<std::size_t> w(n);
  for (std::size_t c = 0; c < n; ++c) {
    w[c] = columns_[c].header.size();
    for (const auto& row : rows_) w[c] = std::max(w[c], c < row.size() ? row[c].size() : 0);
  }
  // Shrink the widest text column until the table fits (never below its header or 8 characters).
  const auto total = [&] {
    std::size_t t = indent.size();
    for (std::size_t c = 0; c < n; ++c) t += w[c] + (c ? 2 : 0);
    return t;
  };
  while (total() > static_cast<std::size_t>(width)) {
    std::size_t widest = n;
    for (std::size_t c = 0; c < n; ++c) {
      const std::size_t floor = std::max<std::size_t>(columns_[c].header.size(), 8);
      if (!columns_[c].right && w[c] > floor && (widest == n || w[c] > w[widest])) widest = c;
    }
    if (widest == n) break;
    --w[widest];
  }
  const auto cell = [&](const std::string& text, std::size_t c) {
    std::string s = text.size() > w[c] ? text.substr(0, w[c] - 1) + "~" : text;
    const std::string pad(w[c] - s.size(), ' ');
    return columns_[c].right ? pad + s : s + pad;
  };
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string s = indent;
    for (std::size_t c = 0; c < n; ++c) s += (c ? "  " : "") + cell(c < cells.size() ? cells[c] : "", c);
    while (!s.empty() && s.back() == ' ') s.pop_back();
    out << s << '\n';
  };
  std::vector<std::string> headers;
  for (const Column& c : columns_) headers.push_back(c.header);
  line(headers);
  std::vector<std::string> rule;
  for (std::size_t c = 0; c < n; ++c) rule.push_back(std::string(w[c], '-'));
  line(rule);
  for (const auto& row : rows_) line(row);
}

namespace {
// "-" + text, without g++ 12's false -Wstringop-overflow on operator+(const char*, std::string&&).
std::string negative(std::string text) {
  text.insert(text.begin(), '-');
  return text;
}
}  // namespace

std::string format_ns(double ns) {
  if (ns < 0) return negative(format_ns(-ns));  // a diff: NEW faster than BASE
  if (ns < 1e3) return printf_string("%.0f %s", ns, "ns");
  if (ns < 1e6) return printf_string(ns < 1e5 ? "%.1f %s" : "%.0f %s", ns / 1e3, "us");
  if (ns < 1e9) return printf_string("%.2f %s", ns / 1e6, "ms");
  return printf_string("%.2f %s", ns / 1e9, "s");
}

std::string format_bytes(double bytes) {
  if (bytes < 0) return negative(format_bytes(-bytes));
  if (bytes < 1024) return printf_string("%.0f %s", bytes, "B");
  if (bytes < 1024.0 * 1024) return printf_string("%.1f %s", bytes / 1024, "KiB");
  if (bytes < 1024.0 * 1024 * 1024) return printf_string("%.1f %s", bytes / 1024 / 1024, "MiB");
  return printf_string("%.2f %s", bytes / 1024 / 1024 / 1024, "GiB");
}

std::string format_pct(double pct) { return printf_string("%.1f %s", pct, "%"); }

std::string format_rate(double per_s, const char* unit) {
  const char* prefixes[] = {"", "K", "M", "G", "T", "P"};
  int p = 0;
  while (per_s >= 1000 && p < 5) {
    per_s /= 1000;
    ++p;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f %s%s", per_s, prefixes[p], unit);
  return buf;
}

std::string format_count(std::int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (n < 0 ? "-" : "") + out;
}

void TextReport::line(const std::string& text, const std::string& indent) {
  const std::size_t width = static_cast<std::size_t>(style_.width);
  std::string current = indent;
  std::size_t visible = indent.size();  // colour codes take no columns
  std::istringstream words(text);
  bool first = true;
  for (std::string word; words >> word;) {
    const std::size_t len = visible_length(word);
    if (!first && visible + 1 + len > width) {
      out_ << current << '\n';
      current = indent + "    ";
      visible = current.size();
      first = true;
    }
    current += (first ? "" : " ") + word;
    visible += (first ? 0 : 1) + len;
    first = false;
  }
  out_ << current << '\n';
}

std::size_t TextReport::visible_length(const std::string& s) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\033') {
      while (i < s.size() && s[i] != 'm') ++i;
    } else if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      ++n;
    }
  }
  return n;
}

}  // namespace npuscope::analyzer

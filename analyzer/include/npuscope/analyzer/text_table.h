// The frame of the tools' text reports (analyze, diff, cluster, compare): aligned terminal tables that fit a width
// (the widest left-aligned column gives way, cells cut with "~"; numbers right-aligned), word-wrapped
// lines, colour on request, and the unit formatting.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace npuscope::analyzer {

struct TextStyle {
  bool colour = false;  // ANSI colours (when stdout is a terminal)
  int width = 100;      // columns the tables fit in
};

class TextTable {
 public:
  struct Column {
    std::string header;
    bool right = false;  // numbers
  };
  explicit TextTable(std::vector<Column> columns) : columns_(std::move(columns)) {}
  void add(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  bool empty() const { return rows_.empty(); }
  void write(std::ostream& out, int width, const std::string& indent = "  ") const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

// The frame of a text report: headings, word-wrapped lines, colour only when asked for.
class TextReport {
 public:
  TextReport(std::ostream& out, const TextStyle& style) : out_(out), style_(style) {}

  void heading(const std::string& text) { out_ << '\n' << paint("1", text) << '\n'; }
  // Word-wrapped to the width; continuation lines indented under the first.
  void line(const std::string& text, const std::string& indent = "  ");
  static std::size_t visible_length(const std::string& s);  // colour codes take no columns
  std::string paint(const char* code, const std::string& text) const {
    return style_.colour ? "\033[" + std::string(code) + "m" + text + "\033[0m" : text;
  }
  std::string red(const std::string& t) const { return paint("31;1", t); }
  std::string yellow(const std::string& t) const { return paint("33", t); }
  std::string green(const std::string& t) const { return paint("32", t); }
  void table(const TextTable& t) { t.write(out_, style_.width); }

 private:
  std::ostream& out_;
  const TextStyle& style_;
};

std::string format_ns(double ns);                         // "812 ns", "15.3 us", "2.41 ms", "1.20 s"
std::string format_bytes(double bytes);                   // "512 B", "1.5 KiB", "20.0 MiB"
std::string format_pct(double pct);                       // "12.3 %"
std::string format_rate(double per_s, const char* unit);  // "12.3 T" + unit
std::string format_count(std::int64_t n);                 // "1,234,567"

}  // namespace npuscope::analyzer

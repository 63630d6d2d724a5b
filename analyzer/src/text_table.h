// Aligned terminal tables that fit a width: the widest left-aligned column gives way (cells cut
// with "~"), numbers are right-aligned. Plus the unit formatting the text report uses.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace npuscope::analyzer {

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

std::string format_ns(double ns);         // "812 ns", "15.3 us", "2.41 ms", "1.20 s"
std::string format_bytes(double bytes);   // "512 B", "1.5 KiB", "20.0 MiB"
std::string format_pct(double pct);       // "12.3 %"
std::string format_rate(double per_s, const char* unit);  // "12.3 T" + unit
std::string format_count(std::int64_t n); // "1,234,567"

}  // namespace npuscope::analyzer

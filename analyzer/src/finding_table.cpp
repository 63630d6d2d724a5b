// Units, cell checks and the terminal's formatting of a cell (Note [Finding tables]).
#include "npuscope/analyzer/finding_table.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <thread>

#include "npuscope/analyzer/text_table.h"

namespace npuscope::analyzer {
namespace {

// The cell type a unit takes (the variant's index).
std::size_t cell_type(Unit u) {
  switch (u) {
    case Unit::kText:
    case Unit::kOpName: return 3;
    case Unit::kCount:
    case Unit::kId:
    case Unit::kTaskId:
    case Unit::kAddress:
    case Unit::kNs:
    case Unit::kBytes: return 1;
    case Unit::kPercent:
    case Unit::kFactor:
    case Unit::kNumber:
    case Unit::kRatio:
    case Unit::kSimilarity:
    case Unit::kFlopsPerS:
    case Unit::kBytesPerS: return 2;
    case Unit::kFlag: return 4;
    case Unit::kList: return 5;
  }
  return 0;
}

std::string_view unit_suffix(Unit u) {
  switch (u) {
    case Unit::kNs: return "_ns";
    case Unit::kBytes: return "_bytes";
    case Unit::kPercent: return "_pct";
    case Unit::kFlopsPerS: return "_flops_per_s";
    case Unit::kBytesPerS: return "_bytes_per_s";
    default: return {};
  }
}

}  // namespace

std::string_view unit_name(Unit u) {
  switch (u) {
#define NPUSCOPE_UNIT_NAME(e, name) \
  case Unit::e: return name;
    NPUSCOPE_FINDING_UNITS(NPUSCOPE_UNIT_NAME)
#undef NPUSCOPE_UNIT_NAME
  }
  return "?";
}

std::string column_label(const Column& c) {
  if (!c.label.empty()) return std::string(c.label);
  std::string_view name = c.name;
  const std::string_view suffix = unit_suffix(c.unit);
  if (!suffix.empty() && name.size() > suffix.size() && name.ends_with(suffix)) name.remove_suffix(suffix.size());
  std::string label(name);
  for (char& ch : label) ch = ch == '_' ? ' ' : ch;
  return label;
}

int TableSpec::column_index(std::string_view column) const {
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].name == column) return static_cast<int>(i);
  }
  return -1;
}

void Table::add(Row row) {
  if (streamed.count > 0)
    throw std::logic_error("finding table " + std::string(spec->name) + ": rows held and streamed");
  if (row.size() != spec->columns.size()) {
    throw std::logic_error("finding table " + std::string(spec->name) + ": a row of " + std::to_string(row.size()) +
                           " cells for " + std::to_string(spec->columns.size()) + " columns");
  }
  for (std::size_t i = 0; i < row.size(); ++i) {
    const Column& c = spec->columns[i];
    if (row[i].index() != 0 && row[i].index() != cell_type(c.unit)) {
      throw std::logic_error("finding table " + std::string(spec->name) + ", column " + std::string(c.name) +
                             ": a cell of the wrong type for its unit " + std::string(unit_name(c.unit)));
    }
  }
  if (spec->layout == Layout::kRecord && !rows.empty()) {
    throw std::logic_error("finding table " + std::string(spec->name) + " is a record: one row only");
  }
  rows.push_back(std::move(row));
}

void Table::stream(StreamedRows r) {
  for (const Column& c : spec->columns) {
    if (c.unit != Unit::kText && c.unit != Unit::kOpName) {
      throw std::logic_error("finding table " + std::string(spec->name) + ": column " + std::string(c.name) +
                             " is not text, and a streamed table's cells are text (Note [Streamed tables])");
    }
  }
  if (!rows.empty()) throw std::logic_error("finding table " + std::string(spec->name) + ": rows held and streamed");
  streamed = std::move(r);
}

void Table::for_each_streamed(const std::function<void(std::span<const std::string>)>& each) const {
  std::vector<std::string> cells(spec->columns.size());
  for (std::size_t i = 0; i < streamed.count; ++i) {
    for (std::string& c : cells) c.clear();
    streamed.write(i, cells);
    each(cells);
  }
}

void Table::format_streamed(
    const std::function<void(std::size_t, std::span<const std::string>, std::string&)>& row_text,
    const std::function<void(std::string_view)>& emit) const {
  constexpr std::size_t kBlockRows = 8192;
  struct Block {
    std::vector<std::string> cells;
    std::string text;
    std::exception_ptr error;
  };
  Block blocks[2];
  for (Block& b : blocks) b.cells.resize(spec->columns.size());
  const auto format = [&](Block& b, std::size_t first) {
    b.text.clear();
    try {
      for (std::size_t i = first; i < std::min(streamed.count, first + kBlockRows); ++i) {
        for (std::string& c : b.cells) c.clear();
        streamed.write(i, b.cells);
        row_text(i, b.cells, b.text);
      }
    } catch (...) {
      b.error = std::current_exception();
    }
  };
  const bool two_threads = std::thread::hardware_concurrency() > 1;
  for (std::size_t first = 0; first < streamed.count; first += 2 * kBlockRows) {
    const std::size_t second = first + kBlockRows;
    std::thread helper;
    if (two_threads && second < streamed.count) helper = std::thread(format, std::ref(blocks[1]), second);
    format(blocks[0], first);
    if (helper.joinable()) {
      helper.join();
    } else if (second < streamed.count) {
      format(blocks[1], second);
    }
    for (Block& b : blocks) {
      if (b.error) std::rethrow_exception(b.error);
    }
    emit(blocks[0].text);
    if (second < streamed.count) emit(blocks[1].text);
  }
}

const Value* Table::cell(std::size_t row, std::string_view column) const {
  const int i = spec->column_index(column);
  return i < 0 || row >= rows.size() ? nullptr : &rows[row][static_cast<std::size_t>(i)];
}

std::int64_t Table::impact_ns() const {
  std::int64_t most = 0;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const Value* v = cell(r, spec->impact_column);
    if (v != nullptr && std::holds_alternative<std::int64_t>(*v)) most = std::max(most, std::get<std::int64_t>(*v));
  }
  return most;
}

std::string format_cell(const Column& column, const Value& v) {
  if (std::holds_alternative<std::monostate>(v)) return "-";
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "yes" : "no";
  if (const auto* list = std::get_if<std::vector<std::string>>(&v)) {
    std::string out;
    for (const std::string& item : *list) out += (out.empty() ? "" : ", ") + item;
    return out;
  }
  if (const auto* d = std::get_if<double>(&v)) {
    switch (column.unit) {
      case Unit::kPercent: return format_pct(*d);
      case Unit::kFlopsPerS: return format_rate(*d, "FLOP/s");
      case Unit::kBytesPerS: return format_rate(*d, "B/s");
      case Unit::kNumber: {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.4g", *d);
        return buf;
      }
      case Unit::kRatio:
      case Unit::kSimilarity: {  // 0.99 is msprobe's cosine threshold: 0.999999 must not read 1
        char buf[32];
        std::snprintf(buf, sizeof buf, column.unit == Unit::kRatio ? "%.3f" : "%.6f", *d);
        return buf;
      }
      default: {  // x: two decimals below 10, so that a 4 % change reads 1.04x, not 1.0x
        if (!std::isfinite(*d)) return std::isnan(*d) ? "nan" : *d > 0 ? "inf" : "-inf";
        char buf[32];
        std::snprintf(buf, sizeof buf, std::fabs(*d) < 10 ? "%.2fx" : "%.1fx", *d);
        return buf;
      }
    }
  }
  const std::int64_t n = std::get<std::int64_t>(v);
  switch (column.unit) {
    case Unit::kNs: return format_ns(static_cast<double>(n));
    case Unit::kBytes: return format_bytes(static_cast<double>(n));
    case Unit::kCount: return format_count(n);
    case Unit::kAddress: {
      char buf[24];
      std::snprintf(buf, sizeof buf, "0x%" PRIx64, static_cast<std::uint64_t>(n));
      return buf;
    }
    default: return std::to_string(n);
  }
}

}  // namespace npuscope::analyzer

// A finding is a declared table (STYLE: "one table, declared once"; Perfetto's shell prints any
// query result from its column names): a stable name, a title, columns with a name, a unit and a
// one-line doc, and rows of typed cells. The renderers (text, JSON, CSV, the viewer's findings
// panel) know units, not findings.
//
// Note [Finding tables]
// - A rule (analyzer/src/rules.cpp lists them) declares the tables it writes as constexpr
//   TableSpecs beside its code and fills them; nothing else names a finding.
// - The unit of a column decides the type of its cells and how each format writes them: ns, bytes,
//   count, id, task id and address cells are integers, written raw in JSON and CSV and formatted
//   in text (format_ns, format_bytes, ...); %, x, number, ratio, similarity, FLOP/s and B/s cells are doubles;
//   text and op name cells strings; flag cells booleans; list cells lists of strings. A cell may be
//   null (no value: JSON null, an empty CSV field, "-" in text). Table::add checks all of it.
// - Layout: kRows is a table; kRecord holds one row, written as a JSON object and in text as
//   "label: value" lines; kItems is a table that text writes as paragraphs (advice, sanitizer
//   errors): "[first cell] second cell", then a line per other cell, a text cell bare unless its
//   column has a label. text_rows caps the rows text shows, in both kRows and kItems; kNotInText
//   leaves the table out of the text report (JSON, CSV and the viewer have it), for a table whose
//   gist text says in a line of another (compare's first failing op) or whose rows are too many to
//   read in a terminal (compare's every tensor).
// - Section orders the text report and the viewer: the summary first, then alerts (overflows),
//   then advice tables by time at stake (their impact column's largest value), then the details in
//   rule order. JSON and CSV keep rule order.
// - A column of unit op name or task id lets the viewer jump to the op.
//
// Note [Streamed tables]
// A table of more rows than are worth holding as cells (a dump comparison's compare_result: a row
// per tensor, ~30 text cells each, 400,000 rows for a 100,000-entry dump) may instead be given as
// StreamedRows: its row count and a function that writes one row's cells as text. The CSV and JSON
// renderers call it row by row into their output, reusing one set of cell strings, so that no row
// is held and no cell allocates once the strings have grown; text materialises the rows it shows.
// Its columns must all be text (Table::stream checks it): the cells are their text, none is null.
// The renderers format blocks of rows on two threads at once (formatting the cells is most of
// writing them: 6 million numbers in Python's repr for that compare_result), so `write` must be
// callable from two threads for different rows: it reads what it was made from and writes only
// `cells`. A consumer that reads Table::rows (the viewer) asks for held rows instead.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace npuscope::analyzer {

// X(enumerator, name in docs): each unit once.
#define NPUSCOPE_FINDING_UNITS(X)                                                     \
  X(kText, "text")                                                                    \
  X(kOpName, "op name") /* an op instance's name: the viewer can jump to it */        \
  X(kCount, "count")                                                                  \
  X(kId, "id")          /* a device, stream or thread id */                           \
  X(kTaskId, "task id") /* TASK.task_id: the viewer can jump to it */                 \
  X(kAddress, "address")                                                              \
  X(kNs, "ns")                                                                        \
  X(kBytes, "bytes")                                                                  \
  X(kPercent, "%")                                                                    \
  X(kFactor, "x")                                                                     \
  X(kNumber, "number")         /* a measured value: errors, norms, tensor elements */ \
  X(kRatio, "ratio")           /* a share from 0 to 1, as msprof's *_ratio columns */ \
  X(kSimilarity, "similarity") /* cosine similarity, -1 to 1: six decimals */         \
  X(kFlopsPerS, "FLOP/s")                                                             \
  X(kBytesPerS, "B/s")                                                                \
  X(kFlag, "flag")                                                                    \
  X(kList, "list")

enum class Unit : std::uint8_t {
#define NPUSCOPE_UNIT_ENUM(e, name) e,
  NPUSCOPE_FINDING_UNITS(NPUSCOPE_UNIT_ENUM)
#undef NPUSCOPE_UNIT_ENUM
};
std::string_view unit_name(Unit u);

struct Column {
  std::string_view name;  // JSON key and CSV header: snake_case, stable
  Unit unit = Unit::kText;
  std::string_view doc;    // one line
  std::string_view label;  // the text and viewer header; empty: the name less its unit suffix
  bool detail = false;     // left out of the terminal table (JSON, CSV and the viewer have it)
};
std::string column_label(const Column& c);

// One table's columns from groups that several tables share (a diff's BASE, NEW, diff, ratio):
// constexpr, for a TableSpec's `columns`.
template <std::size_t... N>
constexpr std::array<Column, (N + ...)> join_columns(const Column (&... groups)[N]) {
  std::array<Column, (N + ...)> out{};
  std::size_t at = 0;
  ((std::copy(groups, groups + N, out.begin() + at), at += N), ...);
  return out;
}

enum class Layout : std::uint8_t { kRows, kRecord, kItems };
enum class Section : std::uint8_t { kSummary, kAlert, kAdvice, kDetail };

struct TableSpec {
  std::string_view name;   // JSON key, CSV file name: stable
  std::string_view title;  // heading
  std::string_view doc;    // what the table says, for docs/analyze.md
  std::span<const Column> columns;
  Layout layout = Layout::kRows;
  Section section = Section::kDetail;
  std::string_view advice;         // printed under the table when it has rows (may be empty)
  std::string_view impact_column;  // kAdvice: rows sorted by it, most first; orders the tables
  int text_rows = 0;               // the terminal shows at most this many rows (0: all; kNotInText: none)

  int column_index(std::string_view column) const;  // -1 if none
};

inline constexpr int kNotInText = -1;  // TableSpec::text_rows: the table is not in the text report

using Value = std::variant<std::monostate, std::int64_t, double, std::string, bool, std::vector<std::string>>;
using Row = std::vector<Value>;

// Note [Streamed tables].
struct StreamedRows {
  std::size_t count = 0;
  // Writes row `row`'s cells into `cells`, one per column, each empty when called.
  std::function<void(std::size_t row, std::span<std::string> cells)> write;
};

struct Table {
  const TableSpec* spec = nullptr;
  std::vector<Row> rows;
  StreamedRows streamed;  // Note [Streamed tables]: rows given this way instead (`rows` then empty)

  // Gives the rows as StreamedRows; std::logic_error when a column is not text or rows are held.
  void stream(StreamedRows rows);
  std::size_t row_count() const { return rows.size() + streamed.count; }
  // Calls `each(cells)` for every streamed row in order, the cells filled as StreamedRows::write
  // fills them (the renderers' one loop over a streamed table).
  void for_each_streamed(const std::function<void(std::span<const std::string>)>& each) const;
  // The streamed rows as text, in blocks of rows in order: `row_text(i, cells, out)` appends row
  // i's text to `out`, `emit(block)` takes each block's. Two blocks are formatted at a time, on two
  // threads (Note [Streamed tables]); `row_text` must allow it too.
  void format_streamed(const std::function<void(std::size_t, std::span<const std::string>, std::string&)>& row_text,
                       const std::function<void(std::string_view)>& emit) const;

  // Checks the row against the spec (arity, each cell's type for its unit): an error here is ours,
  // std::logic_error naming the table and column.
  void add(Row row);
  std::int64_t impact_ns() const;  // the impact column's largest value; 0 without one
  const Value* cell(std::size_t row, std::string_view column) const;  // null if no such column
};

// A cell in the terminal's words: "1.20 ms", "20.0 MiB", "12.3 %", "1,234", "-" for null.
std::string format_cell(const Column& column, const Value& v);

}  // namespace npuscope::analyzer

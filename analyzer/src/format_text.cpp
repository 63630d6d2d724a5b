// The terminal report: the finding tables in reading order (summary, alerts, advice by time at
// stake, details), cells formatted by their unit, tables that fit the width, colour on a terminal.
#include <algorithm>

#include "npuscope/analyzer/format.h"
#include "npuscope/analyzer/text_table.h"

namespace npuscope::analyzer {
namespace {

bool right_aligned(Unit u) { return u != Unit::kText && u != Unit::kOpName && u != Unit::kList && u != Unit::kFlag; }

std::string heading_of(const TextReport& w, const TableSpec& spec) {
  const std::string title(spec.title);
  if (spec.section == Section::kAlert) return w.red(title);
  return title;
}

// "label: value" per cell with a value (not null, not an empty text or list).
void record(TextReport& w, const Table& t) {
  for (std::size_t i = 0; i < t.spec->columns.size(); ++i) {
    const Column& c = t.spec->columns[i];
    const Value& v = t.rows[0][i];
    if (std::holds_alternative<std::monostate>(v) ||
        (std::holds_alternative<std::string>(v) && std::get<std::string>(v).empty()) ||
        (std::holds_alternative<std::vector<std::string>>(v) && std::get<std::vector<std::string>>(v).empty()))
      continue;
    w.line(column_label(c) + ": " + format_cell(c, v));
  }
}

void rows(TextReport& w, const Table& t) {
  std::vector<TextTable::Column> header;
  std::vector<std::size_t> shown;
  for (std::size_t i = 0; i < t.spec->columns.size(); ++i) {
    const Column& c = t.spec->columns[i];
    if (c.detail) continue;
    header.push_back({column_label(c), right_aligned(c.unit)});
    shown.push_back(i);
  }
  TextTable table(std::move(header));
  const std::size_t n = t.spec->text_rows > 0
                            ? std::min<std::size_t>(t.rows.size(), static_cast<std::size_t>(t.spec->text_rows))
                            : t.rows.size();
  for (std::size_t r = 0; r < n; ++r) {
    std::vector<std::string> cells;
    for (const std::size_t i : shown) cells.push_back(format_cell(t.spec->columns[i], t.rows[r][i]));
    table.add(std::move(cells));
  }
  w.table(table);
  if (n < t.rows.size()) w.line("... and " + std::to_string(t.rows.size() - n) + " more (all of them in JSON and CSV)");
}

// A paragraph per row: "[first] second", then the other cells indented: a text cell bare, unless
// its column has a label ("label: text"), others "label: value".
void items(TextReport& w, const Table& t) {
  const auto& cols = t.spec->columns;
  const std::size_t n = t.spec->text_rows > 0
                            ? std::min<std::size_t>(t.rows.size(), static_cast<std::size_t>(t.spec->text_rows))
                            : t.rows.size();
  for (std::size_t r = 0; r < n; ++r) {
    const Row& row = t.rows[r];
    std::string tag = format_cell(cols[0], row[0]);
    tag.insert(tag.begin(), '[');
    tag.append("] ");
    w.line(w.yellow(tag) + (cols.size() > 1 ? format_cell(cols[1], row[1]) : ""));
    for (std::size_t i = 2; i < cols.size(); ++i) {
      if (cols[i].detail || std::holds_alternative<std::monostate>(row[i])) continue;
      const std::string text = format_cell(cols[i], row[i]);
      if (text.empty()) continue;
      const bool bare = cols[i].unit == Unit::kText && cols[i].label.empty();
      w.line(bare ? text : column_label(cols[i]) + ": " + text, "      ");
    }
  }
  if (n < t.rows.size()) w.line("... and " + std::to_string(t.rows.size() - n) + " more (all of them in JSON and CSV)");
}

// A streamed table's rows held as cells (Note [Streamed tables]): the few a terminal shows.
Table held(const Table& t) {
  Table h{t.spec, {}, {}};
  t.for_each_streamed([&](std::span<const std::string> cells) { h.rows.emplace_back(cells.begin(), cells.end()); });
  return h;
}

}  // namespace

void write_text(const Report& r, std::ostream& out, const TextStyle& style) {
  TextReport w(out, style);
  bool notes_written = false;
  const auto notes = [&] {
    if (notes_written) return;
    notes_written = true;
    for (const std::string& note : r.notes) w.line(w.yellow("note: " + note));
  };
  for (const Table* t : reading_order(r)) {
    if (t->spec->section != Section::kSummary) notes();  // the notes close the summary
    if (t->row_count() == 0 || t->spec->text_rows == kNotInText) continue;
    Table streamed;
    if (t->streamed.count > 0) t = &(streamed = held(*t));
    w.heading(heading_of(w, *t->spec));
    switch (t->spec->layout) {
      case Layout::kRecord: record(w, *t); break;
      case Layout::kRows: rows(w, *t); break;
      case Layout::kItems: items(w, *t); break;
    }
    if (!t->spec->advice.empty()) w.line("advice: " + std::string(t->spec->advice));
  }
  notes();
}

}  // namespace npuscope::analyzer

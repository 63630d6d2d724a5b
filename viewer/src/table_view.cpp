#include "npuscope/viewer/table_view.h"

#include <algorithm>
#include <cctype>

namespace npuscope::viewer {
namespace {

using analyzer::Value;

bool is_null(const Value& v) { return std::holds_alternative<std::monostate>(v); }

bool number(const Value& v, double& out) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return out = static_cast<double>(*i), true;
  if (const auto* f = std::get_if<double>(&v)) return out = *f, true;
  if (const auto* flag = std::get_if<bool>(&v)) return out = *flag, true;
  return false;
}

std::string_view text(const Value& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  if (const auto* l = std::get_if<std::vector<std::string>>(&v)) return l->empty() ? "" : l->front();
  return "";
}

// Ascending order of two cells, nulls after everything.
bool less(const Value& a, const Value& b) {
  if (is_null(a) || is_null(b)) return !is_null(a) && is_null(b);
  double x = 0, y = 0;
  if (number(a, x) && number(b, y)) return x < y;
  return text(a) < text(b);
}

bool contains_ignoring_case(std::string_view hay, std::string_view needle) {
  return std::search(hay.begin(), hay.end(), needle.begin(), needle.end(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         }) != hay.end();
}

bool passes(const TableView& v, const analyzer::Row& row, int text_at, int choice_at) {
  if (choice_at >= 0) {
    const auto* s = std::get_if<std::string>(&row[static_cast<std::size_t>(choice_at)]);
    const auto it = s ? std::find(v.choices.begin(), v.choices.end(), *s) : v.choices.end();
    const auto at = static_cast<std::size_t>(it - v.choices.begin());
    if (it != v.choices.end() && at < v.chosen.size() && !v.chosen[at]) return false;
  }
  const std::string_view needle = v.text;
  if (text_at < 0 || needle.empty()) return true;
  const auto* s = std::get_if<std::string>(&row[static_cast<std::size_t>(text_at)]);
  return s != nullptr && contains_ignoring_case(*s, needle);
}

}  // namespace

void refresh(TableView& v, const analyzer::Table& t) {
  if (v.table != &t) {
    v.table = &t;
    v.dirty = true;
  }
  if (!v.dirty) return;
  v.dirty = false;
  const int text_at = v.text_column.empty() ? -1 : t.spec->column_index(v.text_column);
  const int choice_at = v.choice_column.empty() ? -1 : t.spec->column_index(v.choice_column);
  v.shown.clear();
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    if (passes(v, t.rows[r], text_at, choice_at)) v.shown.push_back(static_cast<std::uint32_t>(r));
  }
  if (v.sort_column < 0 || static_cast<std::size_t>(v.sort_column) >= t.spec->columns.size()) return;
  const auto c = static_cast<std::size_t>(v.sort_column);
  // Nulls stay last whichever way: descending swaps the order of the non-null cells only.
  std::stable_sort(v.shown.begin(), v.shown.end(), [&](std::uint32_t a, std::uint32_t b) {
    const Value &x = t.rows[a][c], &y = t.rows[b][c];
    if (is_null(x) || is_null(y)) return less(x, y);
    return v.descending ? less(y, x) : less(x, y);
  });
}

}  // namespace npuscope::viewer

// The JSON form of a report: {"rules": [...], "notes": [...], and per table its name: an array of
// row objects (a record table: one object, or null)}, keys the column names, numbers raw (ns and
// bytes as integers). docs/analyze.md lists every table and column.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "npuscope/analyzer/format.h"
#include "npuscope/collector/json_string.h"

namespace npuscope::analyzer {
namespace {

using nlohmann::json;

json cell_json(const Value& v) {
  return std::visit(
      [](const auto& x) -> json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return nullptr;
        } else if constexpr (std::is_same_v<T, double>) {
          // JSON has no infinity (a diff's ratio to a BASE of 0): the string, as CSV and text write it.
          if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
          if (std::isnan(x)) return "nan";
          return x;
        } else {
          return x;
        }
      },
      v);
}

json row_json(const TableSpec& spec, const Row& row) {
  json o = json::object();
  for (std::size_t i = 0; i < spec.columns.size(); ++i) o[std::string(spec.columns[i].name)] = cell_json(row[i]);
  return o;
}

// `text` (nlohmann's dump of a member's value) with every line after the first indented `indent` more.
void append_indented(std::string& out, std::string_view text, int indent) {
  for (std::size_t at = 0;;) {
    const std::size_t nl = text.find('\n', at);
    out.append(text.substr(at, nl == std::string_view::npos ? std::string_view::npos : nl + 1 - at));
    if (nl == std::string_view::npos) return;
    out.append(static_cast<std::size_t>(indent), ' ');
    at = nl + 1;
  }
}

// A streamed table (Note [Streamed tables]) as nlohmann would dump its rows at this depth: an array
// of objects, keys sorted, every cell a string; written into `out` a chunk at a time.
void write_streamed(const Table& t, std::ostream& out, std::string& text, int indent) {
  if (t.streamed.count == 0) {
    text += "[]";
    return;
  }
  std::vector<std::size_t> order(t.spec->columns.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return t.spec->columns[a].name < t.spec->columns[b].name; });
  const std::string row_pad(static_cast<std::size_t>(indent) + 2, ' ');
  std::vector<std::string> keys(order.size(), std::string(row_pad.size() + 2, ' '));  // each written once
  for (std::size_t k = 0; k < order.size(); ++k) {
    collector::append_json_string(keys[k], t.spec->columns[order[k]].name);
    keys[k] += ": ";
  }
  text += "[\n";
  t.format_streamed(
      [&](std::size_t row, std::span<const std::string> cells, std::string& block) {
        block += row ? ",\n" : "";
        block += row_pad;
        block += "{\n";
        for (std::size_t k = 0; k < order.size(); ++k) {
          block += keys[k];
          collector::append_json_string(block, cells[order[k]]);
          block += k + 1 < order.size() ? ",\n" : "\n";
        }
        block += row_pad;
        block += '}';
      },
      [&](std::string_view block) {
        text.append(block);
        if (text.size() >= (1u << 20)) {
          out.write(text.data(), static_cast<std::streamsize>(text.size()));
          text.clear();
        }
      });
  text += '\n';
  text.append(static_cast<std::size_t>(indent), ' ');
  text += ']';
}

}  // namespace

void write_json(const Report& r, std::ostream& out, int indent) {
  // The members in nlohmann's order (sorted keys, as to_json always wrote them), each value dumped
  // by nlohmann but a streamed table's, which is written row by row.
  std::map<std::string_view, const Table*> members{{"rules", nullptr}, {"notes", nullptr}};
  for (const Table& t : r.tables) members[t.spec->name] = &t;
  const std::string pad(static_cast<std::size_t>(indent) + 2, ' ');
  std::string text = "{\n";
  std::size_t n = 0;
  for (const auto& [name, t] : members) {
    text += n++ ? ",\n" : "";
    text += pad;
    collector::append_json_string(text, name);
    text += ": ";
    json value;
    if (t == nullptr) {
      value = name == "rules" ? r.rules : r.notes;
    } else if (t->streamed.count > 0) {
      write_streamed(*t, out, text, indent + 2);
      continue;
    } else if (t->spec->layout == Layout::kRecord) {
      value = t->rows.empty() ? json(nullptr) : row_json(*t->spec, t->rows[0]);
    } else {
      value = json::array();
      for (const Row& row : t->rows) value.push_back(row_json(*t->spec, row));
    }
    append_indented(text, value.dump(2, ' ', false, json::error_handler_t::replace), indent + 2);
  }
  text += '\n';
  text.append(static_cast<std::size_t>(indent), ' ');
  text += '}';
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

std::string to_json(const Report& r) {
  std::ostringstream out;
  write_json(r, out);
  out << '\n';
  return out.str();
}

}  // namespace npuscope::analyzer

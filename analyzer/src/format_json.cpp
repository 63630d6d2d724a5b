// The JSON form of a report: {"rules": [...], "notes": [...], and per table its name: an array of
// row objects (a record table: one object, or null)}, keys the column names, numbers raw (ns and
// bytes as integers). docs/analyze.md lists every table and column.
#include <nlohmann/json.hpp>

#include <cmath>

#include "npuscope/analyzer/format.h"

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

}  // namespace

std::string to_json(const Report& r) {
  json j = json::object();
  j["rules"] = r.rules;
  j["notes"] = r.notes;
  for (const Table& t : r.tables) {
    json& out = j[std::string(t.spec->name)];
    if (t.spec->layout == Layout::kRecord) {
      out = t.rows.empty() ? json(nullptr) : row_json(*t.spec, t.rows[0]);
      continue;
    }
    out = json::array();
    for (const Row& row : t.rows) out.push_back(row_json(*t.spec, row));
  }
  return j.dump(2) + "\n";
}

}  // namespace npuscope::analyzer

// The CSV form: one file per finding table, <name>.csv, the header its column names, numbers raw
// (ns and bytes as integers), flags true / false, lists joined by ';', null an empty field.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "npuscope/analyzer/format.h"
#include "npuscope/collector/csv.h"

namespace npuscope::analyzer {
namespace {

std::string cell_csv(const Value& v) {
  if (const auto* n = std::get_if<std::int64_t>(&v)) return std::to_string(*n);
  if (const auto* d = std::get_if<double>(&v)) {
    std::ostringstream o;
    o.precision(10);
    o << *d;
    return o.str();
  }
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (const auto* list = std::get_if<std::vector<std::string>>(&v)) {
    std::string out;
    for (const std::string& item : *list) out += (out.empty() ? "" : ";") + item;
    return out;
  }
  return "";
}

void write_table(const Table& t, const std::filesystem::path& path) {
  std::string text;
  const auto line = [&](const auto& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i) text += ',';
      collector::append_csv_field(text, cells[i]);
    }
    text += '\n';
  };
  std::vector<std::string> header;
  for (const Column& c : t.spec->columns) header.emplace_back(c.name);
  line(header);
  for (const Row& row : t.rows) {
    std::vector<std::string> cells;
    for (const Value& v : row) cells.push_back(cell_csv(v));
    line(cells);
  }
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out.flush()) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace

void write_csv(const Report& r, const std::string& dir_name) {
  const std::filesystem::path dir(dir_name);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!std::filesystem::is_directory(dir)) throw std::runtime_error("cannot create the directory " + dir_name);
  for (const Table& t : r.tables) write_table(t, dir / (std::string(t.spec->name) + ".csv"));
}

}  // namespace npuscope::analyzer

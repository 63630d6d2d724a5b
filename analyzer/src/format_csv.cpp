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

// A file written a chunk at a time: a table of any size in bounded memory.
class ChunkedFile {
 public:
  explicit ChunkedFile(const std::filesystem::path& path) : path_(path), out_(path, std::ios::binary) {
    text.reserve(kChunk + 4096);
  }
  void flush_if_full() {
    if (text.size() >= kChunk) flush();
  }
  void close() {
    flush();
    if (!out_.flush()) throw std::runtime_error("cannot write " + path_.string());
  }
  std::string text;

 private:
  static constexpr std::size_t kChunk = 1 << 20;
  void flush() {
    out_.write(text.data(), static_cast<std::streamsize>(text.size()));
    text.clear();
  }
  std::filesystem::path path_;
  std::ofstream out_;
};

template <class Cells, class Text>
void line(std::string& text, const Cells& cells, Text cell_text) {
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (i) text += ',';
    collector::append_csv_field(text, cell_text(cells[i]));
  }
  text += '\n';
}

void write_table(const Table& t, const std::filesystem::path& path) {
  ChunkedFile file(path);
  line(file.text, t.spec->columns, [](const Column& c) { return c.name; });
  for (const Row& row : t.rows) {
    line(file.text, row, [](const Value& v) { return cell_csv(v); });
    file.flush_if_full();
  }
  t.format_streamed(  // Note [Streamed tables]
      [](std::size_t, std::span<const std::string> cells, std::string& text) {
        line(text, cells, [](const std::string& c) -> std::string_view { return c; });
      },
      [&](std::string_view block) {
        file.text.append(block);
        file.flush_if_full();
      });
  file.close();
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

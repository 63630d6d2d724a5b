// Finding tables given as streamed rows (Note [Streamed tables]): every renderer writes them as it
// writes the same rows held, in order across the blocks formatted on two threads, and a table
// that is not all text cannot be streamed.
#include "npuscope/analyzer/finding_table.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "npuscope/analyzer/format.h"
#include "npuscope/analyzer/report.h"

namespace npuscope::analyzer {
namespace {

constexpr Column kColumns[] = {
    {"name", Unit::kOpName, "a row's name"},
    {"text", Unit::kText, "a cell CSV must quote", "text"},
};
constexpr TableSpec kTable{"streamed", "Streamed", "rows written on demand", kColumns};
constexpr TableSpec kShownTable{
    "shown", "Shown", "rows written on demand, in text too", kColumns, Layout::kRows, Section::kDetail, {}, {}, 3};

constexpr Column kCount[] = {{"n", Unit::kCount, "a count"}};
constexpr TableSpec kCounts{"counts", "Counts", "not text", kCount};

// Row i: "op{i}" and a cell with a comma, a quote and a non-ASCII character.
void write_row(std::size_t i, std::span<std::string> cells) {
  cells[0] += "op" + std::to_string(i);
  cells[1] += "a, \"b\" \u00e9 " + std::to_string(i * 7);
}

Report report_of(std::size_t rows, bool streamed, const TableSpec& spec = kTable) {
  Table t{&spec, {}, {}};
  if (streamed) {
    t.stream({rows, write_row});
  } else {
    std::vector<std::string> cells(2);
    for (std::size_t i = 0; i < rows; ++i) {
      for (std::string& c : cells) c.clear();
      write_row(i, cells);
      t.add({cells[0], cells[1]});
    }
  }
  Report r;
  r.rules = {"test"};
  r.notes = {"a note"};
  r.tables.push_back(std::move(t));
  return r;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

TEST(FindingTableTest, StreamedRowsRenderAsHeldRows) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("npuscope_streamed_" + std::to_string(::getpid()));
  for (const std::size_t rows : {std::size_t{0}, std::size_t{1}, std::size_t{40000}}) {  // 40000: five blocks
    const Report held = report_of(rows, false), streamed = report_of(rows, true);
    EXPECT_EQ(streamed.tables[0].row_count(), rows);
    EXPECT_TRUE(streamed.tables[0].rows.empty());
    EXPECT_EQ(to_json(streamed), to_json(held)) << rows;
    write_csv(held, (dir / "held").string());
    write_csv(streamed, (dir / "streamed").string());
    EXPECT_EQ(slurp(dir / "streamed/streamed.csv"), slurp(dir / "held/streamed.csv")) << rows;
  }
  const std::string csv = slurp(dir / "streamed/streamed.csv");
  EXPECT_NE(csv.find("op39999,\"a, \"\"b\"\" \u00e9 279993\"\n"), std::string::npos);
  const auto json = nlohmann::json::parse(to_json(report_of(40000, true)));
  ASSERT_EQ(json["streamed"].size(), 40000u);
  EXPECT_EQ(json["streamed"][12345]["name"], "op12345");
  std::ostringstream nested;
  write_json(report_of(2, true), nested, 4);
  EXPECT_EQ(nlohmann::json::parse(nested.str()), nlohmann::json::parse(to_json(report_of(2, false))));
  std::filesystem::remove_all(dir);
}

TEST(FindingTableTest, TextShowsAStreamedTablesFirstRows) {
  std::ostringstream held, streamed;
  write_text(report_of(5, false, kShownTable), held);
  write_text(report_of(5, true, kShownTable), streamed);
  EXPECT_EQ(streamed.str(), held.str());
  EXPECT_NE(streamed.str().find("op2"), std::string::npos);
  EXPECT_NE(streamed.str().find("... and 2 more"), std::string::npos);
}

TEST(FindingTableTest, OnlyTextTablesStream) {
  Table counts{&kCounts, {}, {}};
  EXPECT_THROW(counts.stream({1, [](std::size_t, std::span<std::string>) {}}), std::logic_error);
  Table t{&kTable, {}, {}};
  t.stream({1, write_row});
  EXPECT_THROW(t.add({std::string("x"), std::string("y")}), std::logic_error);
}

}  // namespace
}  // namespace npuscope::analyzer

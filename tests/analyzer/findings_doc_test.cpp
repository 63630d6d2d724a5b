// docs/analyze.md's finding tables are what the declarations say (npuscope analyze --describe), and
// every declared table and column is documented and named the way JSON and CSV need.
#include <gtest/gtest.h>

#include "npuscope/analyzer/analyze.h"
#include "npuscope/analyzer/report.h"
#include "table_docs_util.h"

using namespace npuscope::analyzer;

namespace {

TEST(FindingsDocTest, CheckedInDocMatchesTheDeclarations) {
  npuscope::testing::expect_generated_doc_current("analyze", kGeneratedMarker, findings_markdown());
}

TEST(FindingsDocTest, EveryTableAndColumnIsDeclaredOnceAndDocumented) {
  const std::string doc = findings_markdown();
  npuscope::testing::expect_tables_documented(all_table_specs(), doc);
  for (const std::string& rule : all_rules()) EXPECT_NE(doc.find("| `" + rule + "` |"), std::string::npos) << rule;
}

TEST(FindingsDocTest, ACellOfTheWrongTypeIsRefused) {
  const TableSpec* spec = all_table_specs().front();  // summary
  Table t{spec, {}};
  EXPECT_THROW(t.add({}), std::logic_error);
  Row row(spec->columns.size());
  row[static_cast<std::size_t>(spec->column_index("span_ns"))] = 1.5;  // ns are integers
  EXPECT_THROW(t.add(row), std::logic_error);
}

}  // namespace

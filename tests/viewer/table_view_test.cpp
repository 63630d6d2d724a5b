// A finding table's rows as a panel shows them (npuscope/viewer/table_view.h): filtered by a text
// in one column (ignoring case) and by switched-off values of another (a verdict), sorted by any
// column either way with nulls last, rebuilt only when something changed.
#include "npuscope/viewer/table_view.h"

#include <gtest/gtest.h>

#include <cstring>

namespace {

using npuscope::analyzer::Column;
using npuscope::analyzer::Table;
using npuscope::analyzer::TableSpec;
using npuscope::analyzer::Unit;
using npuscope::analyzer::Value;
using npuscope::viewer::refresh;
using npuscope::viewer::TableView;

constexpr Column kColumns[] = {
    {"entry", Unit::kOpName, "name"},
    {"verdict", Unit::kText, "pass, fail or n/a"},
    {"cosine", Unit::kSimilarity, "lowest cosine; null when none"},
};
constexpr TableSpec kSpec{"entries", "Entries", "test", kColumns};

Table entries() {
  Table t{&kSpec, {}};
  t.add({std::string("Functional.conv2d.0.forward"), std::string("pass"), 0.99});
  t.add({std::string("Tensor.add_.0.forward"), std::string("fail"), 0.5});
  t.add({std::string("Functional.Conv2d.1.forward"), std::string("n/a"), Value()});
  t.add({std::string("Module.conv1.Conv2d.forward.0"), std::string("fail"), 0.7});
  return t;
}

TableView verdict_view() {
  TableView v;
  v.text_column = "entry";
  v.choice_column = "verdict";
  v.choices = {"fail", "pass", "n/a"};
  v.chosen = {1, 1, 1};
  return v;
}

std::vector<std::uint32_t> rows(std::initializer_list<std::uint32_t> r) { return r; }

TEST(TableView, FiltersByTextIgnoringCaseAndByVerdict) {
  const Table t = entries();
  TableView v = verdict_view();
  refresh(v, t);
  EXPECT_EQ(v.shown, rows({0, 1, 2, 3})) << "the report's order, nothing filtered";
  std::strcpy(v.text, "CONV2D");
  v.dirty = true;
  refresh(v, t);
  EXPECT_EQ(v.shown, rows({0, 2, 3}));
  v.chosen = {1, 0, 1};  // pass off
  v.dirty = true;
  refresh(v, t);
  EXPECT_EQ(v.shown, rows({2, 3}));
  v.text[0] = '\0';
  v.chosen = {1, 0, 0};  // fail only
  v.dirty = true;
  refresh(v, t);
  EXPECT_EQ(v.shown, rows({1, 3}));
}

TEST(TableView, SortsEitherWayWithNullsLastAndBackToTheReportsOrder) {
  const Table t = entries();
  TableView v = verdict_view();
  v.sort_column = 2;  // cosine
  refresh(v, t);
  EXPECT_EQ(v.shown, rows({1, 3, 0, 2}));
  v.descending = true;
  v.dirty = true;
  refresh(v, t);
  EXPECT_EQ(v.shown, rows({0, 3, 1, 2})) << "the null stays last";
  v.sort_column = 0;  // entry, by bytes: upper case first
  v.descending = false;
  v.dirty = true;
  refresh(v, t);
  EXPECT_EQ(v.shown, rows({2, 0, 3, 1}));
  v.sort_column = -1;
  v.dirty = true;
  refresh(v, t);
  EXPECT_EQ(v.shown, rows({0, 1, 2, 3}));
}

TEST(TableView, RebuildsOnlyWhenSomethingChanged) {
  const Table t = entries(), other = entries();
  TableView v = verdict_view();
  refresh(v, t);
  v.shown.clear();  // what a rebuild would fill again
  refresh(v, t);
  EXPECT_TRUE(v.shown.empty()) << "not dirty, same table: not rebuilt";
  refresh(v, other);
  EXPECT_EQ(v.shown.size(), 4u) << "another table: rebuilt";
  EXPECT_EQ(v.table, &other);
}

}  // namespace

// docs/schema.md is what the generator writes from the table descriptors; every column is
// documented; the documented example queries run on a real trace.
#include <algorithm>
#include <fstream>
#include <sstream>

#include "../../collector/src/schema_doc.h"
#include "trace_test_util.h"

using namespace npuscope::collector;
using namespace npuscope::collector::testing;

namespace {

// tests/collector/schema_doc_test.cpp -> the repository root.
std::filesystem::path source_root() {
  return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path();
}

TEST(SchemaDocTest, CheckedInDocMatchesTheGenerator) {
  const std::filesystem::path doc = source_root() / "docs" / "schema.md";
  std::ifstream in(doc, std::ios::binary);
  ASSERT_TRUE(in) << doc << " is missing; generate it with: " << schema::kRegenerateCommand;
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_TRUE(text.str() == schema::markdown())
      << "docs/schema.md is out of date with collector/src/schema*.cpp; regenerate it with:\n  "
      << schema::kRegenerateCommand;
}

TEST(SchemaDocTest, EveryTableAndColumnIsDocumented) {
  const std::string doc = schema::markdown();
  ASSERT_EQ(schema::all_tables().size(), 28u);
  for (const schema::TableInfo* table : schema::all_tables()) {
    EXPECT_FALSE(table->doc.empty()) << table->name;
    EXPECT_NE(doc.find("## <a id=\"" + std::string(table->name) + "\">"), std::string::npos) << table->name;
    for (const schema::ColumnInfo& c : table->columns) {
      EXPECT_GT(c.doc.size(), 10u) << table->name << "." << c.name;
      EXPECT_NE(doc.find("| `" + std::string(c.name) + "` |"), std::string::npos) << c.name;
    }
  }
  for (const char* needle :
       {"### task_type", "| 2 | `AI_CPU` |", "### copy_kind", "| 8 | `DtoD` |", "### memory_op", "### dtype",
        "| 2 | `bf16` |", "### role", "### api_kind", "| 2 | `synchronize` |", "### marker_kind", "`stat.<name>`",
        "```sql", "### collective_kind", "| 7 | `HCCL` |", "### link_transport"}) {
    EXPECT_NE(doc.find(needle), std::string::npos) << needle;
  }
  // Every counter a trace can keep, with its severity (Note [Trace stats]).
  for (const StatInfo& stat : kStats) {
    EXPECT_GT(stat.doc.size(), 10u) << stat.name;
    EXPECT_NE(doc.find("| `" + std::string(stat.name) + "` | " + std::string(severity_name(stat.severity)) + " |"),
              std::string::npos)
        << stat.name;
  }
}

TEST(SchemaDocTest, TaskHasTheColumnsToolsRelyOn) {
  const schema::TableInfo* task = schema::find_table("TASK");
  ASSERT_NE(task, nullptr);
  // A view (Note [Kernel table]) with DESIGN.md's columns, in the descriptor's order.
  const std::string ddl = schema::create_table_sql(*task);
  EXPECT_EQ(ddl.rfind("CREATE VIEW TASK AS SELECT e.task_id, e.start_ns, e.end_ns,", 0), 0u) << ddl;
  for (const char* column : {"start_ns", "end_ns", "device_id", "stream_id", "name_id", "op_type_id", "task_type",
                             "connection_id", "block_dim", "flops", "bytes", "overflow"}) {
    EXPECT_TRUE(std::any_of(task->columns.begin(), task->columns.end(), [&](const schema::ColumnInfo& c) {
      return c.name == column && c.type == schema::SqlType::kInteger;
    })) << column;
    EXPECT_NE(ddl.find(std::string(".") + column + ","), std::string::npos) << column << " in " << ddl;
  }
  EXPECT_EQ(schema::find_table("NOPE"), nullptr);
  EXPECT_EQ(schema::create_table_sql(*schema::find_table("STRING_IDS")),
            "CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT)");
}

// Every row of `sql`, columns joined by '|', rows by '\n'.
std::string query_all(const std::string& db_path, std::string_view sql) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* stmt = nullptr;
  std::string out;
  if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr) != SQLITE_OK) {
    ADD_FAILURE() << sql << "\n: " << sqlite3_errmsg(db);
  } else {
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      for (int i = 0; i < sqlite3_column_count(stmt); ++i) {
        const auto* text = sqlite3_column_text(stmt, i);
        if (i) out += '|';
        out += text ? reinterpret_cast<const char*>(text) : "NULL";
      }
      out += "\n";
    }
    EXPECT_EQ(rc, SQLITE_DONE) << sql << "\n: " << sqlite3_errmsg(db);
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return out;
}

class SchemaExamplesTest : public TraceTest {};

TEST_F(SchemaExamplesTest, ExampleQueriesRunAndAnswer) {
  {
    auto w = TraceWriter::create(path());
    const StringId mm = w->intern("MatMul"), add = w->intern("Add"), api = w->intern("aclnnMatMul");
    std::vector<TaskRow> tasks = {make_task(0, mm, mm), make_task(1, add, add), make_task(2, mm, mm)};
    tasks[0].end_ns = tasks[0].start_ns + 50'000;  // MatMul: 50 + 2 us in all, Add: 1.1 us
    tasks[2].end_ns = tasks[2].start_ns + 2'000;
    tasks[1].overflow = 1;
    tasks[0].overflow = tasks[2].overflow = 0;
    tasks[1].underflow = 12;
    w->add(tasks);
    const ApiRow call{tasks[0].queued_ns, tasks[0].queued_ns + 3'000, api, tasks[0].connection_id, 0};
    w->add(std::span(&call, 1));
    const std::vector<MemoryRow> memory = {{.ts_ns = 1, .allocated_bytes = 100, .reserved_bytes = 200},
                                           {.ts_ns = 2, .allocated_bytes = 300, .reserved_bytes = 400},
                                           {.ts_ns = 3, .allocated_bytes = 50, .reserved_bytes = 400}};
    w->add(memory);
    w->add(TensorRow{.task_id = 2, .role = 1, .shape = "4", .numel = 4, .nan_count = 1});
    w->finalize();
  }
  for (const schema::ExampleQuery& q : schema::example_queries()) {
    SCOPED_TRACE(std::string(q.title));
    query_all(path(), q.sql);
  }
  const auto& q = schema::example_queries();
  EXPECT_EQ(query_all(path(), q[0].sql).substr(0, 14), "MatMul|2|52.0|");
  EXPECT_NE(query_all(path(), q[2].sql).find("aclnnMatMul|MatMul|7000|50000"), std::string::npos);
  EXPECT_EQ(query_all(path(), q[3].sql), "0|300|400\n");
  EXPECT_EQ(query_all(path(), q[4].sql), "0|2|300\n");
  EXPECT_NE(query_all(path(), q[5].sql).find("|Add|Add|"), std::string::npos);
  EXPECT_NE(query_all(path(), q[6].sql).find("|Add|12|0\n"), std::string::npos) << query_all(path(), q[6].sql);
  EXPECT_NE(query_all(path(), q[8].sql).find("2|Add|output|0|4|1|0"), std::string::npos);
}

}  // namespace

// Shared pieces of the trace store tests: a fixture with a private temporary directory, sample
// rows, row comparison column by column, and direct SQLite access for checking the file itself.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

// Internal headers of the collector (the test link line gives no include path to them).
#include "../../collector/src/schema.h"
#include "npuscope/collector/trace_reader.h"
#include "npuscope/collector/trace_writer.h"

namespace npuscope::collector::testing {

class TraceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("npuscope_" + std::string(info->name()) + "_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string path(const std::string& name = "trace.db") const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

// A deterministic task; `name_id`/`op_type_id` are the caller's interned ids.
inline TaskRow make_task(std::int64_t i, StringId name_id, StringId op_type_id) {
  TaskRow t;
  t.task_id = i + 1;
  t.queued_ns = 1'000'000 + i * 1'500;
  t.start_ns = t.queued_ns + 7'000;
  t.end_ns = t.start_ns + 1'000 + (i % 17) * 100;
  t.device_id = static_cast<std::int32_t>(i % 2);
  t.stream_id = static_cast<std::int32_t>(i % 3);
  t.name_id = name_id;
  t.op_type_id = op_type_id;
  t.task_type = static_cast<std::int32_t>(i % 3);
  t.connection_id = i + 100;
  t.block_dim = 24;
  t.flops = i * 1'000'003;
  t.bytes = i * 4096;
  t.overflow = static_cast<std::int32_t>(i % 11 == 0);
  t.fallback = static_cast<std::int32_t>(i % 13 == 0);
  t.compute_dtype = 1;
  t.call_index = static_cast<std::int32_t>(i / 7);
  t.emulation_ns = 20'000 + i;
  t.thread_id = static_cast<std::int32_t>(i % 4);
  return t;
}

inline std::vector<std::uint8_t> zstd_compress(const std::vector<std::uint8_t>& raw) {
  std::vector<std::uint8_t> out(ZSTD_compressBound(raw.size()));
  const std::size_t n = ZSTD_compress(out.data(), out.size(), raw.data(), raw.size(), 3);
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}

// Every column of two rows equal, named on failure (the descriptors cover every member).
template <class Row>
void expect_row_eq(const Row& expected, const Row& actual, const std::string& where) {
  const schema::Table<Row>& table = schema::table_for<Row>();
  for (std::size_t i = 0; i < table.fields.size(); ++i) {
    std::visit(
        [&](auto member) { EXPECT_EQ(expected.*member, actual.*member) << where << "." << table.info.columns[i].name; },
        table.fields[i]);
  }
}

template <class Row>
void expect_rows_eq(const std::vector<Row>& expected, const std::vector<Row>& actual) {
  ASSERT_EQ(expected.size(), actual.size()) << schema::table_for<Row>().info.name;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const std::string where = std::string(schema::table_for<Row>().info.name) + "[" + std::to_string(i) + "]";
    expect_row_eq(expected[i], actual[i], where);
  }
}

// Column `column` of the first row of `sql` on a read-only connection of its own ("" if no row).
inline std::string sql_text(const std::string& db_path, const std::string& sql, int column = 0) {
  sqlite3* db = nullptr;
  std::string out;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
      ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db);
    } else if (sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_text(stmt, column)) {
      out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, column));
    }
    sqlite3_finalize(stmt);
  } else {
    ADD_FAILURE() << "cannot open " << db_path;
  }
  sqlite3_close(db);
  return out;
}

// Runs statements on a read-write connection of its own (to tamper with a trace).
inline void sql_exec(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr), SQLITE_OK);
  char* error = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  EXPECT_EQ(rc, SQLITE_OK) << sql << ": " << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
}

// Gives a trace written now the shape of schema 4 (before Note [Clustered tables]): API,
// MEMORY_RECORD and TASK_EXEC rowid tables with their time indexes, rows in insertion order.
inline void downgrade_to_schema_4(const std::string& db_path) {
  namespace schema = npuscope::collector::schema;
  std::string sql = "DROP VIEW TASK; DROP VIEW API; DROP VIEW MEMORY_RECORD; ";
  for (const auto& [stored, name, index] :
       {std::tuple{&schema::table_for<npuscope::collector::ApiRow>().info, "API", "start_ns"},
        std::tuple{&schema::table_for<npuscope::collector::MemoryRow>().info, "MEMORY_RECORD", "ts_ns, seq"},
        std::tuple{&schema::table_for<schema::TaskExecRow>().info, "TASK_EXEC", "start_ns"}}) {
    std::string columns;
    for (const schema::ColumnInfo& c : stored->columns) columns += (columns.empty() ? "" : ", ") + std::string(c.name);
    const std::string old = std::string(name) + "_V4";
    sql += "CREATE TABLE " + old + " AS SELECT " + columns + " FROM " + std::string(stored->name) +
           " ORDER BY rowid; DROP TABLE " + std::string(stored->name) + "; ALTER TABLE " + old + " RENAME TO " + name +
           "; CREATE INDEX " + name + "_v4 ON " + name + " (" + index + "); ";
  }
  sql += schema::create_table_sql(*schema::find_table("TASK")) + "; ";
  sql_exec(db_path, sql + "UPDATE META SET value = '4' WHERE key = 'schema_version'");
}

// Expects `f` to throw a TraceError whose message contains `needle`.
template <class F>
void expect_trace_error(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no TraceError; expected one containing: " << needle;
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << "message: " << e.what();
  }
}

// Rows of every table, written by write_all() and expected back from the reader.
struct Sample {
  std::vector<DeviceInfoRow> devices;
  std::vector<ApiRow> apis;
  std::vector<TaskRow> tasks;
  std::vector<MemoryRow> memory;
  std::vector<MemcpyRow> memcpys;
  std::vector<MarkerRow> markers;
  std::vector<TensorRow> tensors;  // as written (data compressed)
  std::vector<std::uint8_t> raw;   // the uncompressed data of tensors[1]
};

inline Sample write_all(TraceWriter& w, std::int64_t task_count) {
  Sample s;
  const StringId matmul = w.intern("layer0/MatMul"), add = w.intern("layer0/Add");
  const StringId matmul_type = w.intern("MatMul"), add_type = w.intern("Add");
  s.devices.push_back(
      {0, "ascend910b", 24, 48, 1.8e9, 3.54e14, 1.77e14, 1.6e12, 64ll << 30, "allow_mix_precision", "inf_nan"});
  s.devices.push_back({1, "tiny", 2, 4, 1e9, 1e12, 5e11, 1e11, 1ll << 20, "must_keep_origin_dtype", "saturation"});
  for (std::int64_t i = 0; i < task_count; ++i) {
    s.tasks.push_back(make_task(i, i % 2 ? matmul : add, i % 2 ? matmul_type : add_type));
  }
  std::reverse(s.tasks.begin(), s.tasks.end());                          // written out of start order: the reader sorts
  constexpr auto kLaunch = static_cast<std::int32_t>(ApiKind::kLaunch);  // as old traces' names read too
  s.apis = {{500, 900, w.intern("aclnnMatMul"), 100, 0, kLaunch}, {100, 400, w.intern("aclnnAdd"), 101, 1, kLaunch}};
  s.memory = {{10, 0, 2, 1 << 20, 2 << 20, 0, 2 << 20, 0, 1},
              {20, 0, 0, 1 << 20, 4096, 4096, 2 << 20, 0, 2},
              {30, 0, 1, 1 << 20, 4096, 0, 2 << 20, 1, 3}};
  s.memcpys = {{7, 300, 800, 250, 0, 1, 1 << 16, 1, 102}, {8, 900, 950, 880, 0, 1, 64, 2, 103}};
  s.markers = {{50, 5000, w.intern("forward"), 0, 0, -1}, {40, 6000, 0, 0, 1, 3}};
  for (int i = 0; i < 4096; ++i) s.raw.push_back(static_cast<std::uint8_t>(i * 7));
  TensorRow stats_only{5, 1, 0, 1, "2,3", 6, -1.5, 2.5, 0.25, 3.0, 0, 1, {}, 0};
  TensorRow dumped{3, 0, 1, 0, "1024", 1024, -1, 1, 0, 10, 2, 0, zstd_compress(s.raw), 4096};
  TensorRow first{3, 0, 0, 5, "", 1, 4, 4, 4, 4, 0, 0, {}, 0};
  s.tensors = {first, dumped, stats_only};

  w.add(s.devices[0]);
  w.add(s.devices[1]);
  // Small spans are batched, big ones go straight in: exercise both.
  const std::span<const TaskRow> tasks(s.tasks);
  const std::size_t head = std::min<std::size_t>(tasks.size(), 10);
  for (std::size_t i = 0; i < head; ++i) w.add(tasks.subspan(i, 1));
  w.add(tasks.subspan(head));
  w.add(s.apis);
  w.add(s.memory);
  w.add(s.memcpys);
  w.add(s.markers);
  w.add(stats_only);
  w.add(dumped);
  w.add(first);
  return s;
}

template <class Row, class Key>
inline std::vector<Row> sorted(std::vector<Row> rows, Key key) {
  std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) { return key(a) < key(b); });
  return rows;
}

// The rows write_all() wrote, read back (the reader sorts by time; tensor data decompressed).
inline void expect_sample_read_back(const Sample& s, const TraceReader& reader) {
  expect_rows_eq(s.devices, reader.rows<collector::DeviceInfoRow>());
  expect_rows_eq(sorted(s.tasks, [](const TaskRow& t) { return t.start_ns; }), reader.rows<collector::TaskRow>());
  expect_rows_eq(sorted(s.apis, [](const ApiRow& r) { return r.start_ns; }), reader.rows<collector::ApiRow>());
  expect_rows_eq(s.memory, reader.rows<collector::MemoryRow>());
  expect_rows_eq(s.memcpys, reader.rows<collector::MemcpyRow>());
  expect_rows_eq(sorted(s.markers, [](const MarkerRow& r) { return r.start_ns; }), reader.rows<collector::MarkerRow>());
  // Without data: the blob is left out, data_bytes still says what was dumped.
  std::vector<TensorRow> expected = s.tensors;  // already in (task, role, idx) order
  expected[1].data.clear();
  expect_rows_eq(expected, reader.rows<collector::TensorRow>());
  expected[1].data = s.raw;  // with data: decompressed
  expect_rows_eq(expected, reader.rows<collector::TensorRow>({.with_data = true}));
}

}  // namespace npuscope::collector::testing

// Shared pieces of the trace store tests: a fixture with a private temporary directory, sample
// rows, row comparison column by column, and direct SQLite access for checking the file itself.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>
#include <zstd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <string>
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

}  // namespace npuscope::collector::testing

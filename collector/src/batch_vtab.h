// The batch table-valued functions the writer inserts through.
//
// Note [Batch inserts]
// The writer inserts a whole batch of rows with one prepared statement per table,
//     INSERT INTO TASK (cols) SELECT cols FROM npuscope_batch_TASK(?1)
// where ?1 is bound (sqlite3_bind_pointer) to the rows in memory and npuscope_batch_TASK is an
// eponymous virtual table that hands SQLite each column of each row. Compared with a multi-row
// INSERT ... VALUES (?, ...), (?, ...) of 128 rows it makes no sqlite3_bind_* call per value
// (about 10 % less CPU per 19-column TASK row, measured with bench/trace_writer_bench.cpp) and
// needs no tail statement: one statement takes a batch of any size.
#pragma once

#include <sqlite3.h>

#include <cstddef>

#include "row_codec.h"
#include "schema.h"
#include "sqlite_util.h"

namespace npuscope::collector::schema {

inline constexpr char kBatchPointerType[] = "npuscope_batch";

// What ?1 points at while the INSERT runs.
struct Batch {
  const void* rows = nullptr;  // const Row*
  std::size_t size = 0;
};

// One table's module: its columns, and how to read column `col` of row `i` of a batch.
struct BatchSource {
  const TableInfo* info;
  void (*column)(const Batch& batch, std::size_t i, int col, sqlite3_context* ctx);
};

template <class Row>
const BatchSource& batch_source() {
  static const BatchSource source{
      &table_for<Row>().info, [](const Batch& batch, std::size_t i, int col, sqlite3_context* ctx) {
        const Row& row = static_cast<const Row*>(batch.rows)[i];
        result_column(ctx, table_for<Row>().fields[static_cast<std::size_t>(col)], row);
      }};
  return source;
}

// Registers batch_module_name(*source.info) on `db`. `source` must outlive the connection.
void register_batch_module(sqlite::Db& db, const BatchSource& source);

}  // namespace npuscope::collector::schema

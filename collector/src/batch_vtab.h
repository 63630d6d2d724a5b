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
#include <vector>

#include "row_codec.h"
#include "schema.h"
#include "sqlite_util.h"

namespace npuscope::collector::schema {

inline constexpr char kBatchPointerType[] = "npuscope_batch";

// What ?1 points at while the INSERT runs.
struct Batch {
  const void* rows = nullptr;  // const Row*
  std::size_t size = 0;
  const void* const* order = nullptr;  // set: row i is *order[i] (a const Row*), rows unused
};

// The cursor every batch module uses: the batch bound to ?1 and the row it is on.
struct BatchCursor {
  sqlite3_vtab_cursor base;  // first: SQLite sees a sqlite3_vtab_cursor*
  const void* fields;        // const std::vector<Field<Row>>*
  std::size_t columns;
  const Batch* batch;
  std::size_t row;
};

// xColumn, typed so that the per-value path has no indirect call.
template <class Row>
int batch_column(sqlite3_vtab_cursor* base, sqlite3_context* ctx, int col) {
  const auto* cursor = reinterpret_cast<const BatchCursor*>(base);
  if (static_cast<std::size_t>(col) >= cursor->columns) return SQLITE_OK;  // the hidden argument: NULL
  const auto& fields = *static_cast<const std::vector<Field<Row>>*>(cursor->fields);
  const Batch& batch = *cursor->batch;
  const Row& row = batch.order != nullptr ? *static_cast<const Row*>(batch.order[cursor->row])
                                          : static_cast<const Row*>(batch.rows)[cursor->row];
  result_column(ctx, fields[static_cast<std::size_t>(col)], row);
  return SQLITE_OK;
}

using ColumnFn = int (*)(sqlite3_vtab_cursor*, sqlite3_context*, int);
sqlite3_module make_batch_module(ColumnFn column);

// One table's module: its columns and their members.
struct BatchSource {
  const TableInfo* info;
  const void* fields;  // const std::vector<Field<Row>>*
  sqlite3_module module;
};

template <class Row>
const BatchSource& batch_source() {
  static const BatchSource source{&table_for<Row>().info, &table_for<Row>().fields,
                                  make_batch_module(&batch_column<Row>)};
  return source;
}

// Registers batch_module_name(*source.info) on `db`. `source` must outlive the connection.
void register_batch_module(sqlite::Db& db, const BatchSource& source);

}  // namespace npuscope::collector::schema

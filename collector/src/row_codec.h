// Moving a row's members in and out of SQLite, column by column, as the table's descriptor says
// (Note [One table, declared once] in schema.h).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "schema.h"

namespace npuscope::collector::schema {

// Sets the result of a batch table-valued function column (batch_vtab.h) to `row`'s member: the
// writer's innermost loop, hence a plain switch rather than std::visit. Strings and blobs are
// SQLITE_STATIC: the rows outlive the INSERT that reads them.
template <class Row>
inline void result_column(sqlite3_context* ctx, const Field<Row>& field, const Row& row) {
  static_assert(std::variant_size_v<Field<Row>> == 5);
  switch (field.index()) {
    case 0: sqlite3_result_int64(ctx, row.*(*std::get_if<0>(&field))); return;
    case 1: sqlite3_result_int64(ctx, row.*(*std::get_if<1>(&field))); return;
    case 2: sqlite3_result_double(ctx, row.*(*std::get_if<2>(&field))); return;
    case 3: {
      const std::string& text = row.*(*std::get_if<3>(&field));
      sqlite3_result_text(ctx, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
      return;
    }
    default: {
      const std::vector<std::uint8_t>& blob = row.*(*std::get_if<4>(&field));
      if (blob.empty()) {
        sqlite3_result_zeroblob(ctx, 0);  // a null pointer would make it NULL
      } else {
        sqlite3_result_blob64(ctx, blob.data(), blob.size(), SQLITE_STATIC);
      }
    }
  }
}

// Reads the current row of a SELECT made by select_sql() into `row`. NULL reads as 0 / empty, and as NaN
// for a REAL column.
// Columns marked in `left_out` (selected as NULL) are not read at all: their members keep their value.
template <class Row>
void read_row(sqlite3_stmt* stmt, const Table<Row>& table, Row& row, const std::vector<bool>& left_out = {}) {
  for (int i = 0; i < static_cast<int>(table.fields.size()); ++i) {
    if (static_cast<std::size_t>(i) < left_out.size() && left_out[static_cast<std::size_t>(i)]) continue;
    std::visit(
        [&](auto member) {
          auto& value = row.*member;
          using T = std::remove_cvref_t<decltype(value)>;
          if constexpr (std::is_same_v<T, std::int32_t>) {
            value = static_cast<std::int32_t>(sqlite3_column_int64(stmt, i));
          } else if constexpr (std::is_same_v<T, std::int64_t>) {
            value = sqlite3_column_int64(stmt, i);
          } else if constexpr (std::is_same_v<T, double>) {  // NULL: a metric that does not apply
            value = sqlite3_column_type(stmt, i) == SQLITE_NULL ? std::numeric_limits<double>::quiet_NaN()
                                                                : sqlite3_column_double(stmt, i);
          } else if constexpr (std::is_same_v<T, std::string>) {
            const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, i));
            value.assign(text ? text : "", static_cast<std::size_t>(sqlite3_column_bytes(stmt, i)));
          } else {
            const auto* blob = static_cast<const std::uint8_t*>(sqlite3_column_blob(stmt, i));
            value.assign(blob, blob + (blob ? sqlite3_column_bytes(stmt, i) : 0));
          }
        },
        table.fields[static_cast<std::size_t>(i)]);
  }
}

}  // namespace npuscope::collector::schema

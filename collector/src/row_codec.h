// Moving a row's members in and out of SQLite, column by column, as the table's descriptor says
// (Note [One table, declared once] in schema.h).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "schema.h"

namespace npuscope::collector::schema {

// Sets the result of a batch table-valued function column (batch_vtab.cpp) to `row`'s member.
// Strings and blobs are passed as SQLITE_STATIC: the rows outlive the INSERT that reads them.
template <class Row>
void result_column(sqlite3_context* ctx, const Field<Row>& field, const Row& row) {
  std::visit(
      [&](auto member) {
        const auto& value = row.*member;
        using T = std::remove_cvref_t<decltype(value)>;
        if constexpr (std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t>) {
          sqlite3_result_int64(ctx, value);
        } else if constexpr (std::is_same_v<T, double>) {
          sqlite3_result_double(ctx, value);
        } else if constexpr (std::is_same_v<T, std::string>) {
          sqlite3_result_text(ctx, value.data(), static_cast<int>(value.size()), SQLITE_STATIC);
        } else if (value.empty()) {
          sqlite3_result_zeroblob(ctx, 0);  // a null pointer would make it NULL
        } else {
          sqlite3_result_blob64(ctx, value.data(), value.size(), SQLITE_STATIC);
        }
      },
      field);
}

// Reads the current row of a SELECT made by select_sql() into `row`. NULL reads as 0 / empty.
template <class Row>
void read_row(sqlite3_stmt* stmt, const Table<Row>& table, Row& row) {
  for (int i = 0; i < static_cast<int>(table.fields.size()); ++i) {
    std::visit(
        [&](auto member) {
          auto& value = row.*member;
          using T = std::remove_cvref_t<decltype(value)>;
          if constexpr (std::is_same_v<T, std::int32_t>) {
            value = static_cast<std::int32_t>(sqlite3_column_int64(stmt, i));
          } else if constexpr (std::is_same_v<T, std::int64_t>) {
            value = sqlite3_column_int64(stmt, i);
          } else if constexpr (std::is_same_v<T, double>) {
            value = sqlite3_column_double(stmt, i);
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

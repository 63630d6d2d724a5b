// SQL generated from the table descriptors (Note [One table, declared once] in schema.h).
#include <string>

#include "schema.h"

namespace npuscope::collector::schema {
namespace {

std::string column_list(const TableInfo& table) {
  std::string out;
  for (const ColumnInfo& c : table.columns) {
    if (!out.empty()) out += ", ";
    out += c.name;
  }
  return out;
}

std::string joined(const std::vector<std::string_view>& parts, std::string_view separator) {
  std::string out;
  for (std::string_view p : parts) {
    if (!out.empty()) out += separator;
    out += p;
  }
  return out;
}

}  // namespace

std::string create_table_sql(const TableInfo& table, bool if_missing, bool rowid_table) {
  const std::string create = if_missing ? " IF NOT EXISTS " : " ";
  if (!table.view_select.empty()) {
    return "CREATE VIEW" + create + std::string(table.name) + " AS " + std::string(table.view_select);
  }
  std::string sql = "CREATE TABLE" + create + std::string(table.name) + " (";
  for (std::size_t i = 0; i < table.columns.size(); ++i) {
    const ColumnInfo& c = table.columns[i];
    sql += (i ? ", " : "") + std::string(c.name) + " " + sql_type_name(c.type);
    if (c.name == table.primary_key) sql += " PRIMARY KEY";
  }
  if (table.clustered && rowid_table) return sql + ", rowid INTEGER PRIMARY KEY)";  // Note [Ranked tables]
  // Note [Clustered tables]
  if (table.clustered)
    return sql + ", rowid INTEGER, PRIMARY KEY (" + std::string(table.order_by) + ", rowid)) WITHOUT ROWID";
  return sql + ")";
}

std::vector<std::string> create_index_sql(const TableInfo& table) {
  std::vector<std::string> out;  // a view has none: its tables' indexes serve it
  for (const IndexInfo& index : table.indexes) {
    out.push_back("CREATE INDEX IF NOT EXISTS " + std::string(table.name) + "_" + joined(index.columns, "_") + " ON " +
                  std::string(table.name) + " (" + joined(index.columns, ", ") + ")");
  }
  return out;
}

std::string batch_module_name(const TableInfo& table) { return "npuscope_batch_" + std::string(table.name); }

// The batch table-valued function: the table's columns plus the hidden argument the batch pointer
// is bound to.
std::string batch_vtab_declaration(const TableInfo& table) {
  std::string sql = "CREATE TABLE x(";
  for (const ColumnInfo& c : table.columns) sql += std::string(c.name) + " " + sql_type_name(c.type) + ", ";
  return sql + "batch HIDDEN)";
}

std::string insert_sql(const TableInfo& table, bool ranked) {
  const std::string columns = column_list(table);
  if (table.clustered && !ranked) {  // ?2: the rowid of the batch's first row (Note [Clustered tables])
    return "INSERT INTO " + std::string(table.name) + " (" + columns + ", rowid) SELECT " + columns +
           ", ?2 + rowid FROM " + batch_module_name(table) + "(?1)";
  }
  return std::string(table.replace ? "INSERT OR REPLACE INTO " : "INSERT INTO ") + std::string(table.name) + " (" +
         columns + ") SELECT " + columns + " FROM " + batch_module_name(table) + "(?1)";
}

std::string select_sql(const TableInfo& table, bool with_blobs, std::string_view where,
                       const std::vector<bool>& leave_out, bool ranked) {
  std::string sql = "SELECT ";
  for (std::size_t i = 0; i < table.columns.size(); ++i) {
    const ColumnInfo& c = table.columns[i];
    if (i) sql += ", ";
    const bool out = (c.type == SqlType::kBlob && !with_blobs) || (i < leave_out.size() && leave_out[i]);
    sql += out ? "NULL" : std::string(c.name);  // NULL: no record decoding, and it reads as 0 / empty
  }
  sql += " FROM " + std::string(table.name);
  if (!where.empty()) sql += " WHERE " + std::string(where);
  if (ranked) return sql + " ORDER BY rowid";
  if (!table.order_by.empty()) sql += " ORDER BY " + std::string(table.order_by) + ", rowid";
  return sql;
}

}  // namespace npuscope::collector::schema

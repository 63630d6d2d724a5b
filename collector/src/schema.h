// The trace database's tables, declared once.
//
// Note [One table, declared once]
// Every table of a trace is declared in exactly one place, schema.cpp: its name, a doc line, its
// columns (name, the row-struct member it stores, doc), the order the reader streams it in and the
// indexes finalize() builds. A column's SQL type follows from its member's C++ type. Everything
// else is generated from these descriptors: the CREATE TABLE / CREATE INDEX statements
// (schema_sql.cpp), the writer's batch INSERTs and the reader's SELECT lists (schema_sql.cpp),
// moving values between rows and SQLite (row_codec.h) and docs/schema.md (schema_doc.cpp, written
// by the npuscope_schema_doc tool). schema.cpp static_asserts that each table's columns name every
// member of its row struct exactly once, so a field added to trace_rows.h without a column, or a
// column listed twice, does not compile. (Perfetto declares its tables the same way.)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "npuscope/collector/trace_rows.h"

namespace npuscope::collector::schema {

enum class SqlType { kInteger, kReal, kText, kBlob };
const char* sql_type_name(SqlType type);

// The member of Row a column stores. The alternatives are the C++ types rows use; their order
// matches kSqlTypeOfField below.
template <class Row>
using Field = std::variant<std::int32_t Row::*, std::int64_t Row::*, double Row::*, std::string Row::*,
                           std::vector<std::uint8_t> Row::*>;
inline constexpr SqlType kSqlTypeOfField[] = {SqlType::kInteger, SqlType::kInteger, SqlType::kReal, SqlType::kText,
                                              SqlType::kBlob};

template <class Row>
struct Column {
  std::string_view name;
  Field<Row> field;
  std::string_view doc;
};

struct ColumnInfo {
  std::string_view name;
  SqlType type;
  std::string_view doc;
};

struct IndexInfo {
  std::vector<std::string_view> columns;
};

// What the SQL and doc generators need of a table, whatever its row type.
struct TableInfo {
  std::string_view name;
  std::string_view doc;
  std::vector<ColumnInfo> columns;
  std::vector<IndexInfo> indexes;  // built by finalize()
  std::string_view primary_key;    // a column name, or empty
  std::string_view order_by;       // the reader's row order (rowid breaks ties)
  bool replace = false;            // INSERT OR REPLACE (META: later values win)
  // Non-empty: a view, `SELECT ...` giving exactly `columns` (Note [Kernel table]); no rows of its own.
  std::string_view view_select;
  std::string_view rows_in;  // a view: the table holding one row per row of it (counted there)
  bool clustered = false;    // Note [Clustered tables]
};

// A table and the members its columns store: fields[i] is columns[i].
template <class Row>
struct Table {
  TableInfo info;
  std::vector<Field<Row>> fields;
};

// Note [Kernel table]
// A task row repeats what its kernel is (name, op type, unit, block dim, FLOPs, bytes, compute dtype,
// fallback) at every launch of it. The writer stores that once per distinct kernel in KERNEL and
// keeps only the task's own columns in TASK_EXEC, as msprof keeps COMPUTE_TASK_INFO beside TASK:
// 12 columns per task instead of 19, which is what lets SQLite take 3M task rows per second
// (bench/trace_writer_bench.cpp) and makes traces smaller and faster to read. TASK, the table users
// query (DESIGN.md's columns, docs/schema.md), is a view joining the two; the reader joins them in
// memory. A schema version 1 trace (TASK a table) is given this shape when it is opened: Note [Reading schema 1] in
// trace_reader.cpp.
struct TaskExecRow {
  std::int64_t task_id = 0;
  std::int64_t start_ns = 0, end_ns = 0, queued_ns = 0;
  std::int32_t device_id = 0, stream_id = 0;
  std::int64_t kernel_id = 0;
  std::int64_t connection_id = 0;
  std::int32_t overflow = 0, call_index = 0;
  std::int64_t emulation_ns = 0;
  std::int32_t thread_id = 0;
  std::int64_t pytorch_api_id = 0;
  std::int64_t underflow = 0, subnormal = 0;
};
struct KernelRow {
  std::int64_t kernel_id = 0;
  StringId name_id = 0, op_type_id = 0;
  std::int32_t task_type = 0, block_dim = 0;
  std::int64_t flops = 0, bytes = 0;
  std::int32_t compute_dtype = 0, fallback = 0;
  StringId input_shapes_id = 0, input_dtypes_id = 0;
  StringId input_formats_id = 0, output_shapes_id = 0, output_dtypes_id = 0, output_formats_id = 0;
};

// Note [Clustered tables]
// The tables a trace has most rows in (TASK_EXEC, API_CALL, MEMORY_OP) are read in time order, and
// a rowid table with an index on the time builds that index in finalize(), after the workload
// exited: a sort of the whole table. They are stored instead WITHOUT ROWID, as a b-tree keyed by
// (order_by..., rowid), where `rowid` is a real column the writer fills with the insertion order (1,
// 2, ...): rows arrive from the drain nearly in time order, so each insert lands near the right
// edge of the tree, and the table is its own index. Measured on 100k launches (2 cores): 8-18 ms
// less per table than insert + CREATE INDEX. The reader's ORDER BY order_by, rowid and its range
// queries run on the key; ties keep the insertion order, as with a rowid table. The `rowid`
// column would show in users' SELECT *, so API and MEMORY_RECORD, the tables users query, are views
// with their documented columns (TASK already was one); TASK_EXEC shows it.

// Note [Ranked tables]
// A converter that has every row before anyone reads the trace (npuscope run converting the spool
// after the workload exited, the recovery of a killed run) stores the clustered tables
// instead as plain rowid tables whose rowid is each row's rank in order_by order, ties in insertion
// order (WriterOptions::ranked): the writer holds their rows in memory (Note [Holding rows cheaply]
// in held_rows.h) and in finalize() appends them in that order, SQLite numbering them 1, 2, ...
// Appending to a rowid b-tree's right edge skips what every WITHOUT ROWID insert pays (NOT NULL
// checks on the key, the columns copied into key order, a uniqueness seek): SQLite's share of
// converting 100k launches' spool fell by 30 % (perf), and `npuscope run`'s trace is ready that much
// sooner. META's ranked_tables names the tables stored so: the reader streams them ORDER BY rowid
// and finds a start-time range by bisecting on rowid. The writer makes these tables only when it
// knows their layout: a table whose rows outgrow its bound (WriterOptions::ranked_bytes, 32 MiB:
// ~300k tasks) is made clustered then and takes the rest as a clustered table does, so a long run
// holds no more memory than that. Not for imports: a big import's tables outgrow the bound (peak
// RSS importing 4 GB of Kineto JSON went from 89 to 311 MiB with a 128 MiB bound, and no faster);
// a small one gained nothing measurable. `rowid` is a column in every layout (INTEGER
// PRIMARY KEY here), so SELECT * and users' queries see the same shape; an older npuscope reads a
// ranked trace correctly, sorting it.

// Note [Indexes finalize builds]
// A trace is ready when its indexes are built, and under `npuscope run` that happens after the
// workload exited, while the user waits: each index of a 100k-row table costs ~12 ms (a sort of the
// table), a third of the conversion of a launch-heavy trace. finalize() therefore builds only the
// indexes the reader's queries use: each table's order_by (streamed in that order, and the range
// queries of TASK by start_ns). Joins in users' SQL (API.connection_id = TASK.connection_id,
// TASK_EXEC.kernel_id) need none: SQLite builds an automatic index for the query that joins (the
// example queries of docs/schema.md run as fast without a stored one).

// The two tables without a public row struct.
struct MetaRow {
  std::string key;
  std::string value;
};
struct StringRow {
  std::int64_t id = 0;
  std::string value;
};

template <class Row>
const Table<Row>& table_for();
template <>
const Table<MetaRow>& table_for<MetaRow>();
template <>
const Table<StringRow>& table_for<StringRow>();
template <>
const Table<TaskExecRow>& table_for<TaskExecRow>();
template <>
const Table<KernelRow>& table_for<KernelRow>();
// One per table of NPUSCOPE_TRACE_ROWS (TaskRow's is the TASK view), defined in schema.cpp.
#define NPUSCOPE_DECLARE_TABLE_FOR(Row) \
  template <>                           \
  const Table<Row>& table_for<Row>();
NPUSCOPE_TRACE_ROWS(NPUSCOPE_DECLARE_TABLE_FOR)
#undef NPUSCOPE_DECLARE_TABLE_FOR

// Every table, in creation (and documentation) order.
const std::vector<const TableInfo*>& all_tables();
const TableInfo* find_table(std::string_view name);  // nullptr if unknown

// META keys.
inline constexpr std::string_view kMetaSchemaVersion = "schema_version";
inline constexpr std::string_view kMetaStatus = "status";
inline constexpr std::string_view kMetaCreatedAt = "created_at";
inline constexpr std::string_view kMetaFinalizedAt = "finalized_at";
inline constexpr std::string_view kMetaToolVersion = "npuscope_version";
inline constexpr std::string_view kStatPrefix = "stat.";
inline constexpr std::string_view kStatusIncomplete = "incomplete";
inline constexpr std::string_view kStatusComplete = "complete";
inline constexpr std::string_view kMetaRankedTables = "ranked_tables";  // Note [Ranked tables]: "A,B"

// Generated SQL (schema_sql.cpp).
// `if_missing`: CREATE ... IF NOT EXISTS (a table added to traces written before it existed).
// `rowid_table`: a clustered table as a rowid table (Note [Ranked tables]).
std::string create_table_sql(const TableInfo& table, bool if_missing = false, bool rowid_table = false);
std::vector<std::string> create_index_sql(const TableInfo& table);
// The writer's insert: every row of a batch bound as one pointer (see batch_vtab.h).
// `ranked`: rows appended in rank order, their rowids 1, 2, ... given by SQLite (Note [Ranked tables]).
std::string insert_sql(const TableInfo& table, bool ranked = false);
std::string batch_module_name(const TableInfo& table);
std::string batch_vtab_declaration(const TableInfo& table);
// The reader's query, in order_by order. Without blobs, BLOB columns read as NULL.
// leave_out[i]: select NULL for column i (see ReaderOptions::skip_columns). `ranked`: the rows are
// stored in order, ORDER BY rowid (Note [Ranked tables]).
std::string select_sql(const TableInfo& table, bool with_blobs, std::string_view where = {},
                       const std::vector<bool>& leave_out = {}, bool ranked = false);

}  // namespace npuscope::collector::schema

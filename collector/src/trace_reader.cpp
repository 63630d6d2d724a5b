// The SQLite trace reader: opens read-only, validates, and streams rows through the descriptors
// (Note [One table, declared once] in schema.h).
#include "npuscope/collector/trace_reader.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "row_codec.h"
#include "schema.h"
#include "sqlite_util.h"
#include "tensor_check.h"

namespace npuscope::collector {
namespace {

namespace fs = std::filesystem;

// A truncated SQLite file opens and reads fine until a query reaches the missing pages. Its header
// says how long it should be (bytes 16-17 page size, 28-31 page count, valid when the change
// counter at 24 equals the one at 92), so the cut is caught on open without reading the file.
void check_not_truncated(const std::string& path) {
  std::error_code ec;
  const auto wal = fs::file_size(path + "-wal", ec);
  if (!ec && wal > 0) return;  // the header lags the write-ahead log
  std::ifstream in(path, std::ios::binary);
  std::array<unsigned char, 100> h{};
  if (!in.read(reinterpret_cast<char*>(h.data()), h.size())) return;  // too short: SQLite says what it is
  if (std::memcmp(h.data(), "SQLite format 3", 16) != 0) return;
  const auto be32 = [&](std::size_t at) {
    return std::uint64_t{h[at]} << 24 | std::uint64_t{h[at + 1]} << 16 | std::uint64_t{h[at + 2]} << 8 | h[at + 3];
  };
  if (be32(24) != be32(92)) return;  // the in-header size is not valid
  const std::uint64_t page = h[16] == 0 && h[17] == 1 ? 65536 : (std::uint64_t{h[16]} << 8 | h[17]);
  const std::uint64_t expected = page * be32(28);
  const auto size = fs::file_size(path, ec);
  if (!ec && size < expected) {
    throw TraceError(path + ": corrupt trace, truncated (" + std::to_string(size) + " bytes of " +
                     std::to_string(expected) + ")");
  }
}

std::optional<std::int64_t> parse_int(std::string_view text) {
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// What an error from the first query of a file means for the user.
[[noreturn]] void throw_open_error(const std::string& path, sqlite3* db, int rc) {
  const std::string reason = sqlite3_errmsg(db);
  switch (rc & 0xff) {
    case SQLITE_NOTADB: throw NotADatabaseError(path + ": not an npuscope trace (not an SQLite file)");
    case SQLITE_CORRUPT: throw TraceError(path + ": corrupt trace, damaged or truncated (" + reason + ")");
    case SQLITE_ERROR:
      if (reason.rfind("no such table", 0) == 0) throw TraceError(path + ": not an npuscope trace (no META table)");
      break;
    default: break;
  }
  throw TraceError(path + ": cannot read trace: " + reason);
}

class SqliteTraceReader final : public TraceReader {
 public:
  SqliteTraceReader(const std::string& path, const ReaderOptions& options)
      : db_(path, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX) {
    check_not_truncated(path);
    load_meta();
    check_version();
    load_ranked_tables();
    if (options.verify) check_integrity();
    adapt_older_schema();
    add_missing_tables();
    load_strings();
    load_kernels();
    for (const std::string& column : options.skip_columns) leave_out(column);
    note_tensor_columns_read();
  }

  const std::string& path() const override { return db_.path(); }

  std::optional<std::string> meta(const std::string& key) const override {
    const auto it = meta_.find(key);
    if (it == meta_.end()) return std::nullopt;
    return it->second;
  }

  bool complete() const override { return meta(std::string(schema::kMetaStatus)) == schema::kStatusComplete; }
  int schema_version() const override { return schema_version_; }

  const std::string& string(StringId id) const override {
    static const std::string kEmpty;
    const auto it = strings_.find(id);
    return it == strings_.end() ? kEmpty : it->second;
  }

  std::vector<StatValue> stats() const override {
    std::vector<StatValue> out;
    const std::string prefix(schema::kStatPrefix);
    for (auto it = meta_.lower_bound(prefix); it != meta_.end() && it->first.starts_with(prefix); ++it) {
      StatValue& s = out.emplace_back(StatValue{it->first.substr(prefix.size()), parse_int(it->second).value_or(0)});
      if (const StatInfo* info = find_stat(s.name)) {
        s.severity = info->severity;
        s.doc = info->doc;
      }
    }
    return out;
  }

  void scan(const RowCallback& f, const RowQuery& query) const override {
    std::visit([&](auto* callback) { scan_table(*callback, query); }, f);
  }

  TaskSummary task_summary() const override {
    const std::lock_guard lock(mutex_);
    sqlite::Stmt stmt(db_,
                      "SELECT count(*), coalesce(sum(overflow), 0), coalesce(min(start_ns), 0), "
                      "coalesce(max(end_ns), 0) FROM TASK_EXEC");
    stmt.step();
    return {sqlite3_column_int64(stmt.get(), 0), sqlite3_column_int64(stmt.get(), 1),
            sqlite3_column_int64(stmt.get(), 2), sqlite3_column_int64(stmt.get(), 3)};
  }

  std::pair<std::int64_t, std::int64_t> task_start_range() const override {
    const std::lock_guard lock(mutex_);
    // Two queries: SQLite answers a lone min() or max() from the index, not both in one.
    const bool by_rank = ranked("TASK_EXEC");  // Note [Ranked tables]: the first and last rows
    sqlite::Stmt first(
        db_, by_rank ? "SELECT start_ns FROM TASK_EXEC ORDER BY rowid LIMIT 1" : "SELECT min(start_ns) FROM TASK_EXEC");
    sqlite::Stmt last(db_, by_rank ? "SELECT start_ns FROM TASK_EXEC ORDER BY rowid DESC LIMIT 1"
                                   : "SELECT max(start_ns) FROM TASK_EXEC");
    first.step();
    last.step();
    if (sqlite3_column_type(first.get(), 0) == SQLITE_NULL) return {0, -1};
    return {sqlite3_column_int64(first.get(), 0), sqlite3_column_int64(last.get(), 0)};
  }

  std::int64_t count(const std::string& table) const override {
    const schema::TableInfo* info = schema::find_table(table);
    if (!info) {
      std::string known;
      for (const schema::TableInfo* t : schema::all_tables()) {
        known += (known.empty() ? "" : ", ") + std::string(t->name);
      }
      throw TraceError(path() + ": no table '" + table + "' in a trace (tables: " + known + ")");
    }
    const std::lock_guard lock(mutex_);
    const std::string name(info->rows_in.empty() ? info->name : info->rows_in);  // a view: where its rows are
    sqlite::Stmt stmt(db_, "SELECT count(*) FROM " + name);
    stmt.step();
    return sqlite3_column_int64(stmt.get(), 0);
  }

 private:
  // One table's rows, as the query asks.
  template <class Row>
  void scan_table(const std::function<void(Row&)>& f, const RowQuery& query) const {
    const Where where = where_of(schema::table_for<Row>().info, query);
    if constexpr (std::is_same_v<Row, TaskRow>) {
      tasks_where(where.sql, where.args, f);
    } else if constexpr (std::is_same_v<Row, TensorRow>) {
      if (query.with_data) map_for_blobs();
      for_each<TensorRow>(
          query.with_data,
          [&](TensorRow& row) {
            check_tensor(row, query.with_data);
            f(row);
          },
          where.sql, where.args);
    } else {
      for_each<Row>(false, f, where.sql, where.args);
    }
  }

  // A query's filters as SQL, each on a column the table must have.
  struct Where {
    std::string sql;
    std::vector<std::int64_t> args;  // ?1, ?2, ...
  };
  Where where_of(const schema::TableInfo& table, const RowQuery& query) const {
    Where w;
    const auto require = [&](std::string_view column) {
      const bool has = std::any_of(table.columns.begin(), table.columns.end(),
                                   [&](const schema::ColumnInfo& c) { return c.name == column; });
      if (!has) {
        throw TraceError("cannot read " + std::string(table.name) + " by " + std::string(column) +
                         ": the table has no such column (a bug in the caller)");
      }
    };
    const auto add = [&](std::string_view column, std::string_view op, std::int64_t value) {
      require(column);
      w.sql += std::string(w.sql.empty() ? "" : " AND ") + std::string(column) + " " + std::string(op) + " ?" +
               std::to_string(w.args.size() + 1);
      w.args.push_back(value);
    };
    if (query.task_id) add("task_id", "=", *query.task_id);
    if (query.task_ids) {
      add("task_id", ">=", query.task_ids->first);
      add("task_id", "<", query.task_ids->second);
    }
    if (query.id) add("id", "=", *query.id);
    if (query.starting) {
      const std::string_view stored = table.rows_in.empty() ? table.name : table.rows_in;
      if (table.order_by == "start_ns" && ranked(stored)) {  // Note [Ranked tables]: a range of ranks
        const auto rowid_from = [&](std::string_view op, std::int64_t start_ns) {
          w.sql += std::string(w.sql.empty() ? "" : " AND ") + "rowid " + std::string(op) + " ?" +
                   std::to_string(w.args.size() + 1);
          w.args.push_back(first_rank_from(stored, start_ns));
        };
        rowid_from(">=", query.starting->first);
        rowid_from("<", query.starting->second);
      } else {
        add("start_ns", ">=", query.starting->first);
        add("start_ns", "<", query.starting->second);
      }
    }
    if (query.with_data && table.name != schema::table_for<TensorRow>().info.name) {
      throw TraceError("cannot read " + std::string(table.name) + " with data: only TENSOR rows carry data");
    }
    return w;
  }

  // Tasks in start order, TASK_EXEC rows joined here with the kernels read on open.
  void tasks_where(std::string_view where, const std::vector<std::int64_t>& args,
                   const std::function<void(TaskRow&)>& f) const {
    static const schema::KernelRow kUnknown;
    TaskRow t;
    for_each<schema::TaskExecRow>(
        false,
        [&](const schema::TaskExecRow& e) {
          const auto k = static_cast<std::size_t>(e.kernel_id);
          const schema::KernelRow& kernel = k < kernels_.size() ? kernels_[k] : kUnknown;
          t = {e.task_id,
               e.start_ns,
               e.end_ns,
               e.queued_ns,
               e.device_id,
               e.stream_id,
               kernel.name_id,
               kernel.op_type_id,
               kernel.task_type,
               e.connection_id,
               kernel.block_dim,
               kernel.flops,
               kernel.bytes,
               e.overflow,
               kernel.fallback,
               kernel.compute_dtype,
               e.call_index,
               e.emulation_ns,
               e.thread_id,
               kernel.input_shapes_id,
               kernel.input_dtypes_id,
               e.pytorch_api_id,
               e.underflow,
               e.subnormal,
               kernel.input_formats_id,
               kernel.output_shapes_id,
               kernel.output_dtypes_id,
               kernel.output_formats_id};
          f(t);
        },
        where, args);
  }

  // Streams a table in its documented order, in batches of reused row objects: read under the lock,
  // handed to `f` outside it (see the header's thread-safety sentence). With blobs a batch is one
  // row, so that memory stays one tensor's. `where` may use ?1, ?2, ... bound to `args`.
  template <class Row, class F>
  void for_each(bool with_blobs, F&& f, std::string_view where = {}, const std::vector<std::int64_t>& args = {}) const {
    const schema::Table<Row>& table = schema::table_for<Row>();
    const auto skipped = skipped_.find(table.info.name);
    static const std::vector<bool> kNone;
    const std::vector<bool>& left_out = skipped == skipped_.end() ? kNone : skipped->second;
    std::vector<Row> batch(with_blobs ? 1 : kBatchRows);
    std::unique_lock lock(mutex_);
    sqlite::Stmt stmt(db_, schema::select_sql(table.info, with_blobs, where, left_out,
                                              ranked(table.info.name)));  // finalized under the lock
    int i = 0;
    for (const std::int64_t a : args) sqlite3_bind_int64(stmt.get(), ++i, a);
    for (;;) {
      std::size_t n = 0;
      while (n < batch.size() && stmt.step()) schema::read_row(stmt.get(), table, batch[n++], left_out);
      if (n == 0) return;
      lock.unlock();
      try {
        for (std::size_t r = 0; r < n; ++r) f(batch[r]);
      } catch (...) {
        lock.lock();
        throw;
      }
      lock.lock();
      if (n < batch.size()) return;  // the statement is done: another step() would run it again
    }
  }

  // Tensor data straight from the page cache rather than through read(2): ~20 % faster comparisons
  // (bench/compare_traces_bench.cpp). Only for blobs: mapped pages count in the resident size, and
  // an analysis that reads only rows would look 40 % bigger. The file was checked not truncated.
  void map_for_blobs() const {
    const std::lock_guard lock(mutex_);
    if (mapped_) return;
    db_.exec("PRAGMA mmap_size = 1099511627776");
    mapped_ = true;
  }
  void leave_out(const std::string& column);
  void load_ranked_tables();
  bool ranked(std::string_view table) const {
    return std::find(ranked_.begin(), ranked_.end(), table) != ranked_.end();
  }
  // The rowid of a ranked table's first row starting at or after start_ns (its last rowid + 1 if none).
  std::int64_t first_rank_from(std::string_view table, std::int64_t start_ns) const;
  void adapt_schema_1();
  void adapt_schema_2();
  void adapt_schema_3();
  void adapt_schema_4();
  void adapt_schema_5();
  void adapt_schema_6();
  void adapt_schema_7();
  void adapt_schema_10();
  void adapt_schema_11();
  void adapt_schema_12();
  void adapt_schema_13();
  void adapt_schema_14();
  // Note [Older traces]: an empty TEMP table for each stored table the trace lacks.
  void add_missing_tables();
  // Shadows `table` with a TEMP view that reads the columns in `added`, which an older trace lacks, as 0.
  void view_with_zeros(const schema::TableInfo& table, std::initializer_list<std::string_view> added);
  void load_kernels();
  void load_meta();
  void check_version();
  void adapt_older_schema();
  void check_integrity();
  void load_strings();
  void note_tensor_columns_read();
  // Note [Checked tensor rows]: throws TraceError naming the row; with_data: also decompresses.
  void check_tensor(TensorRow& row, bool with_data) const;
  [[noreturn]] void bad_tensor(const TensorRow& row, const std::string& problem) const;

  static constexpr std::size_t kBatchRows = 256;

  // Whoever holds it uses the connection (SQLITE_OPEN_NOMUTEX: ours to serialise) and mapped_.
  // Taken per batch of rows, rather than SQLite's FULLMUTEX, which locks for every column of every
  // row (a third of a 10M-task load); never held while a caller's callback runs, so a callback may
  // call the reader again, and threads sharing a reader take turns batch by batch.
  mutable std::mutex mutex_;
  mutable sqlite::Db db_;
  mutable bool mapped_ = false;
  // Set on open, read-only afterwards (no lock needed).
  std::map<std::string_view, std::vector<bool>> skipped_;  // by table: the columns read as NULL
  std::vector<schema::KernelRow> kernels_;                 // by kernel_id
  std::map<std::string, std::string> meta_;
  std::vector<std::string> ranked_;  // Note [Ranked tables]: the tables whose rowid is the rank
  std::unordered_map<StringId, std::string> strings_;
  int schema_version_ = 0;
  tensor_check::ColumnsRead tensor_columns_;
};

// Note [Reading schema 1]
// A schema 1 trace has TASK as a table (each task with its kernel's columns) and no TASK_EXEC or
// KERNEL. On open it is given the schema 2 shape, in the connection's TEMP schema (writable on a
// read-only connection; nothing touches the file): a KERNEL table of the distinct kernels, numbered,
// and a TASK_EXEC view of TASK with each task's kernel_id. TEMP names come first in name lookup, so
// every query of the reader has one form for both versions. It costs one scan of TASK on open.
void SqliteTraceReader::adapt_schema_1() {
  const schema::TableInfo& exec = schema::table_for<schema::TaskExecRow>().info;
  const schema::TableInfo& kernel = schema::table_for<schema::KernelRow>().info;
  std::string kernel_columns, same_kernel, exec_columns = "t.rowid AS rowid";
  std::string kernel_values;  // kernel_columns, with 0 for those schema 6 added
  for (const schema::ColumnInfo& c : kernel.columns) {
    if (c.name == "kernel_id") continue;
    const std::string name(c.name);
    const bool added_later = c.name == "input_shapes_id" || c.name == "input_dtypes_id" ||
                             c.name == "input_formats_id" || c.name == "output_shapes_id" ||
                             c.name == "output_dtypes_id" || c.name == "output_formats_id";
    kernel_columns += (kernel_columns.empty() ? "" : ", ") + name;
    kernel_values += (kernel_values.empty() ? "" : ", ") + (added_later ? "0 AS " + name : name);
    if (!added_later) same_kernel += (same_kernel.empty() ? "" : " AND ") + ("k." + name + " IS t." + name);
  }
  for (const schema::ColumnInfo& c : exec.columns) {
    exec_columns += ", " +
                    (c.name == "pytorch_api_id" || c.name == "underflow" || c.name == "subnormal" ? std::string("0 AS ")
                     : c.name == "kernel_id"                                                      ? std::string("k.")
                                                                                                  : std::string("t.")) +
                    std::string(c.name);
  }
  db_.exec("CREATE TEMP TABLE KERNEL AS SELECT row_number() OVER () AS kernel_id, " + kernel_columns +
           " FROM (SELECT DISTINCT " + kernel_values + " FROM main.TASK)");
  db_.exec("CREATE INDEX temp.KERNEL_of ON KERNEL (" + kernel_columns + ")");
  db_.exec("CREATE TEMP VIEW TASK_EXEC AS SELECT " + exec_columns + " FROM main.TASK t JOIN temp.KERNEL k ON " +
           same_kernel);
}

void SqliteTraceReader::load_kernels() {
  for_each<schema::KernelRow>(false, [&](const schema::KernelRow& k) {
    if (k.kernel_id < 0 || k.kernel_id > std::int64_t{1} << 32) return;  // not a writer's id: reads as unknown
    if (static_cast<std::size_t>(k.kernel_id) >= kernels_.size())
      kernels_.resize(static_cast<std::size_t>(k.kernel_id) + 1);
    kernels_[static_cast<std::size_t>(k.kernel_id)] = k;
  });
}

void SqliteTraceReader::leave_out(const std::string& column) {
  const auto dot = column.find('.');
  const schema::TableInfo* table = dot == std::string::npos ? nullptr : schema::find_table(column.substr(0, dot));
  const std::string_view name =
      dot == std::string::npos ? std::string_view() : std::string_view(column).substr(dot + 1);
  const auto index_in = [&](const schema::TableInfo& t) {
    const auto it =
        std::find_if(t.columns.begin(), t.columns.end(), [&](const schema::ColumnInfo& c) { return c.name == name; });
    return static_cast<std::size_t>(it - t.columns.begin());
  };
  if (!table || index_in(*table) == table->columns.size()) {
    throw TraceError("cannot leave out '" + column + "': not a TABLE.column of a trace (see docs/schema.md)");
  }
  // A view's columns are read from its table (TASK's own from TASK_EXEC; those of its kernel cost
  // nothing and stay).
  if (!table->rows_in.empty()) table = schema::find_table(table->rows_in);
  const std::size_t i = index_in(*table);
  if (i == table->columns.size()) return;  // a kernel column
  std::vector<bool>& skip = skipped_[table->name];
  skip.resize(table->columns.size());
  skip[i] = true;
}

void SqliteTraceReader::load_meta() {
  const schema::Table<schema::MetaRow>& table = schema::table_for<schema::MetaRow>();
  const std::string sql = schema::select_sql(table.info, true);
  sqlite3_stmt* raw = nullptr;
  const int rc = sqlite3_prepare_v2(db_.get(), sql.c_str(), -1, &raw, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(raw);
    throw_open_error(path(), db_.get(), rc);
  }
  sqlite3_finalize(raw);
  for_each<schema::MetaRow>(true, [&](const schema::MetaRow& row) { meta_[row.key] = row.value; });
}

void SqliteTraceReader::load_ranked_tables() {
  const std::string list = meta(std::string(schema::kMetaRankedTables)).value_or("");
  for (std::size_t at = 0; at < list.size();) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    ranked_.push_back(list.substr(at, comma - at));
    at = comma + 1;
  }
}

std::int64_t SqliteTraceReader::first_rank_from(std::string_view table, std::int64_t start_ns) const {
  const std::lock_guard lock(mutex_);
  const std::string name(table);
  sqlite::Stmt last(db_, "SELECT coalesce(max(rowid), 0) FROM " + name);
  last.step();
  std::int64_t lo = 1, hi = sqlite3_column_int64(last.get(), 0) + 1;
  sqlite::Stmt at(db_, "SELECT start_ns FROM " + name + " WHERE rowid = ?1");
  while (lo < hi) {  // rowids 1..n, start_ns not decreasing along them
    const std::int64_t mid = lo + (hi - lo) / 2;
    sqlite3_bind_int64(at.get(), 1, mid);
    const bool found = at.step();
    const std::int64_t value = found ? sqlite3_column_int64(at.get(), 0) : start_ns;
    at.reset();
    if (value >= start_ns) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

void SqliteTraceReader::check_version() {
  const auto text = meta(std::string(schema::kMetaSchemaVersion));
  if (!text) throw TraceError(path() + ": not an npuscope trace (META has no schema_version)");
  const auto version = parse_int(*text);
  if (!version || *version < 1) {
    throw TraceError(path() + ": not an npuscope trace (bad schema_version '" + *text + "')");
  }
  if (*version > kSchemaVersion) {
    throw TraceError(path() + ": written by a newer npuscope (schema " + *text + ", this build reads up to " +
                     std::to_string(kSchemaVersion) + "): upgrade npuscope");
  }
  schema_version_ = static_cast<int>(*version);
}

// An older trace is given the current schema's shape on open, one step per schema version, in the
// connection's TEMP schema (the file stays untouched): every read then has one path.
void SqliteTraceReader::adapt_older_schema() {
  if (schema_version_ < 2) adapt_schema_1();  // Note [Reading schema 1]
  if (schema_version_ < 3) adapt_schema_2();
  if (schema_version_ < 4) adapt_schema_3();
  if (schema_version_ < 5) adapt_schema_4();
  if (schema_version_ < 6) adapt_schema_5();
  if (schema_version_ < 7) adapt_schema_6();
  if (schema_version_ < 8) adapt_schema_7();
  if (schema_version_ < 11) adapt_schema_10();
  if (schema_version_ < 12) adapt_schema_11();
  if (schema_version_ < 13) adapt_schema_12();
  if (schema_version_ < 14) adapt_schema_13();
  if (schema_version_ < 15) adapt_schema_14();
}

void SqliteTraceReader::view_with_zeros(const schema::TableInfo& table, std::initializer_list<std::string_view> added) {
  std::string columns;
  for (const schema::ColumnInfo& c : table.columns) {
    const bool is_new = std::find(added.begin(), added.end(), c.name) != added.end();
    columns += (is_new ? "0 AS " : "") + std::string(c.name) + ", ";
  }
  db_.exec("CREATE TEMP VIEW " + std::string(table.name) + " AS SELECT " + columns + "rowid AS rowid FROM main." +
           std::string(table.name));
}

// Note [Older traces]
// A trace is read by every later build. Tables added since it was written (PYTORCH_API in schema 6,
// the custom kernels' tables in 9, the ranks' communication in 10, COMPARE_RESULT until compared,
// every table added to NPUSCOPE_TRACE_ROWS from now on) read as empty: each stored table the file
// lacks is created, empty, in the connection's TEMP schema (writable on a read-only connection;
// the file stays untouched). So adding a table needs no step here and no schema version. Columns
// added to an existing table do: one adapt_schema_N step per version below, each a TEMP view that
// reads the columns the older trace lacks as 0.
void SqliteTraceReader::add_missing_tables() {
  for (const schema::TableInfo* table : schema::all_tables()) {
    if (!table->view_select.empty()) continue;
    sqlite::Stmt stmt(db_,
                      "SELECT 1 FROM sqlite_master WHERE name = ?1 UNION ALL "
                      "SELECT 1 FROM sqlite_temp_master WHERE name = ?1");
    const std::string name(table->name);
    sqlite3_bind_text(stmt.get(), 1, name.c_str(), -1, SQLITE_TRANSIENT);
    if (!stmt.step()) db_.exec(schema::create_table_sql(*table).insert(std::string_view("CREATE ").size(), "TEMP "));
  }
}

// Schema 15 added TENSOR.crc32 (`--dump md5`): an older trace's tensors read as 0, none. (Before schema
// 7, adapt_schema_6 shadows TENSOR with it already.)
void SqliteTraceReader::adapt_schema_14() {
  if (schema_version_ >= 7) view_with_zeros(schema::table_for<TensorRow>().info, {"crc32"});
}

// Schema 14 added PYTORCH_API.args_id (msprobe fragments): an older trace's ops read as 0, none. (Before
// schema 12, adapt_schema_11 shadows PYTORCH_API with it already.)
void SqliteTraceReader::adapt_schema_13() {
  if (schema_version_ >= 12) view_with_zeros(schema::table_for<PytorchApiRow>().info, {"args_id"});
}

// Schema 13 added API.level: an older trace's calls read as 0, unknown. (Before schema 5,
// adapt_schema_4 makes API_CALL with it already.)
void SqliteTraceReader::adapt_schema_12() {
  if (schema_version_ >= 5) view_with_zeros(schema::table_for<ApiRow>().info, {"level"});
}

// Schema 12 added what real profiles say of a kernel (KERNEL's formats and output shapes and dtypes)
// and of a framework op (PYTORCH_API.stack_id): an older trace's read as 0, not recorded. (Before
// schema 6, adapt_schema_5 shadows KERNEL with them already, and PYTORCH_API is made empty.)
void SqliteTraceReader::adapt_schema_11() {
  if (schema_version_ < 6) return;
  view_with_zeros(schema::table_for<schema::KernelRow>().info,
                  {"input_formats_id", "output_shapes_id", "output_dtypes_id", "output_formats_id"});
  view_with_zeros(schema::table_for<PytorchApiRow>().info, {"stack_id", "args_id"});
}

// Schema 11 added TASK_EXEC's underflow counts: an older trace's tasks read as 0, not counted. (Before
// schema 6, adapt_schema_5 shadows TASK_EXEC with them already.)
void SqliteTraceReader::adapt_schema_10() {
  if (schema_version_ >= 6) view_with_zeros(schema::table_for<schema::TaskExecRow>().info, {"underflow", "subnormal"});
}

// Schema 8 added DEVICE_INFO's calibrated ceilings: an older trace's read as 0, and the analyzer
// judges its tasks against the peaks, as it did then.
void SqliteTraceReader::adapt_schema_7() {
  view_with_zeros(schema::table_for<DeviceInfoRow>().info,
                  {"cube_ceiling_flops", "vector_ceiling_flops", "memory_ceiling_bandwidth", "cube_f32_rate"});
}

// Schema 7 added TENSOR.address: an older trace's tensors read as 0, not recorded.
void SqliteTraceReader::adapt_schema_6() { view_with_zeros(schema::table_for<TensorRow>().info, {"address", "crc32"}); }

// Schema 6 added each task's input shapes and dtypes (KERNEL) and the PyTorch op that launched it
// (TASK_EXEC): an older trace has none of them, read as 0 (its PYTORCH_API: Note [Older traces]).
void SqliteTraceReader::adapt_schema_5() {
  // A schema 1 trace's TASK_EXEC and KERNEL are TEMP already (Note [Reading schema 1]): shadowed again here.
  if (schema_version_ >= 2) {
    view_with_zeros(schema::table_for<schema::TaskExecRow>().info, {"pytorch_api_id", "underflow", "subnormal"});
    view_with_zeros(schema::table_for<schema::KernelRow>().info,
                    {"input_shapes_id", "input_dtypes_id", "input_formats_id", "output_shapes_id", "output_dtypes_id",
                     "output_formats_id"});
  }
}

// Schema 3 added API.kind. An older trace gets it from its API names, the way the emulator has
// always named its calls, through a temporary view that shadows the table.
void SqliteTraceReader::adapt_schema_2() {
  db_.exec(
      "CREATE TEMP VIEW API AS SELECT a.start_ns, a.end_ns, a.name_id, a.connection_id, a.thread_id, "
      "CASE WHEN s.value GLOB 'aclnn*' THEN " +
      std::to_string(static_cast<int>(ApiKind::kLaunch)) + " WHEN s.value GLOB 'aclrtSynchronize*' THEN " +
      std::to_string(static_cast<int>(ApiKind::kSynchronize)) + " WHEN s.value = 'aclrtMemcpy' THEN " +
      std::to_string(static_cast<int>(ApiKind::kMemcpy)) + " WHEN s.value = 'aclrtMemcpyAsync' THEN " +
      std::to_string(static_cast<int>(ApiKind::kMemcpyAsync)) + " WHEN s.value = 'aclrtMalloc' THEN " +
      std::to_string(static_cast<int>(ApiKind::kMalloc)) + " WHEN s.value = 'aclrtFree' THEN " +
      std::to_string(static_cast<int>(ApiKind::kFree)) +
      " WHEN s.value IN ('aclrtRecordEvent', 'aclrtStreamWaitEvent') THEN " +
      std::to_string(static_cast<int>(ApiKind::kEvent)) + " ELSE " + std::to_string(static_cast<int>(ApiKind::kOther)) +
      " END AS kind, a.rowid AS rowid FROM main.API a LEFT JOIN main.STRING_IDS s ON s.id = a.name_id");
}

// Schema 4 added MEMORY_RECORD.seq, the allocator's order of operations with equal times. An
// older trace's rows keep the order they were written in: seq is the rowid (the order the reader
// has always broken ties in).
void SqliteTraceReader::adapt_schema_3() {
  std::string columns;
  for (const schema::ColumnInfo& c : schema::table_for<MemoryRow>().info.columns) {
    columns += ", " + (c.name == "seq" ? std::string("m.rowid AS seq") : "m." + std::string(c.name));
  }
  db_.exec("CREATE TEMP VIEW MEMORY_RECORD AS SELECT m.rowid AS rowid" + columns + " FROM main.MEMORY_RECORD m");
}

// Schema 5 stores API and MEMORY_RECORD clustered in time order as API_CALL and MEMORY_OP, with the
// insertion order as a `rowid` column (Note [Clustered tables]); an older trace's tables (or the
// views the steps above made of them, which carry the rowid) serve under those names.
void SqliteTraceReader::adapt_schema_4() {
  for (const auto& [stored, name] : {std::pair{&schema::table_for<ApiRow>().info, "API"},
                                     std::pair{&schema::table_for<MemoryRow>().info, "MEMORY_RECORD"}}) {
    std::string columns;
    for (const schema::ColumnInfo& c : stored->columns) {
      columns += (c.name == "level" ? "0 AS " : "") + std::string(c.name) + ", ";  // API.level: schema 13
    }
    db_.exec("CREATE TEMP VIEW " + std::string(stored->name) + " AS SELECT " + columns + "rowid AS rowid FROM " + name);
  }
}

void SqliteTraceReader::check_integrity() {
  std::string result;
  try {
    result = db_.query_text("PRAGMA quick_check");
  } catch (const TraceError&) {
    result = sqlite3_errmsg(db_.get());
  }
  if (result != "ok") throw TraceError(path() + ": corrupt trace, damaged or truncated (" + result + ")");
}

void SqliteTraceReader::load_strings() {
  for_each<schema::StringRow>(false, [&](schema::StringRow& row) { strings_[row.id] = std::move(row.value); });
}

void SqliteTraceReader::note_tensor_columns_read() {
  const auto skipped = skipped_.find(schema::table_for<TensorRow>().info.name);
  if (skipped == skipped_.end()) return;
  const auto& columns = schema::table_for<TensorRow>().info.columns;
  for (std::size_t i = 0; i < columns.size() && i < skipped->second.size(); ++i) {
    if (!skipped->second[i]) continue;
    const std::string_view c = columns[i].name;
    for (auto [name, read] : {std::pair{"role", &tensor_columns_.role},
                              {"idx", &tensor_columns_.idx},
                              {"dtype", &tensor_columns_.dtype},
                              {"shape", &tensor_columns_.shape},
                              {"numel", &tensor_columns_.numel},
                              {"data_bytes", &tensor_columns_.data_bytes}}) {
      if (c == name) *read = false;
    }
  }
}

void SqliteTraceReader::check_tensor(TensorRow& row, bool with_data) const {
  std::string problem = tensor_check::row_problem(row, tensor_columns_);
  if (problem.empty() && with_data) problem = tensor_check::decompress(row);
  if (!problem.empty()) [[unlikely]]
    bad_tensor(row, problem);
}

void SqliteTraceReader::bad_tensor(const TensorRow& row, const std::string& problem) const {
  std::string op;
  tasks_where("task_id = ?1", {row.task_id}, [&](const TaskRow& t) { op = string(t.name_id); });
  const auto role = enum_from_value<TensorRole>(row.role);
  throw TraceError(path() + ": bad TENSOR row (task " + std::to_string(row.task_id) +
                   (op.empty() ? "" : ", op '" + op + "'") + ", " +
                   (role ? std::string(enum_name(*role)) : "role " + std::to_string(row.role)) + " " +
                   std::to_string(row.idx) + "): " + problem + ". The trace is damaged or was edited: record it again");
}

}  // namespace

std::unique_ptr<TraceReader> TraceReader::open(const std::string& path, const ReaderOptions& options) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) throw TraceError(path + ": no such trace file");
  if (fs::is_directory(status)) throw TraceError(path + ": is a directory, not a trace file");
  return std::make_unique<SqliteTraceReader>(path, options);
}

}  // namespace npuscope::collector

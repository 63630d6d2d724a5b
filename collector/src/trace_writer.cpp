// The SQLite trace writer. See Note [Trace durability] in trace_writer.h and Note [Batch inserts]
// in batch_vtab.h.
#include "npuscope/collector/trace_writer.h"

#include <algorithm>
#include <ctime>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <variant>
#include <vector>

#include "batch_vtab.h"
#include "held_rows.h"
#include "kernel_ids.h"
#include "output_file.h"
#include "schema.h"
#include "sqlite_util.h"
#include "string_ids.h"

#ifndef NPUSCOPE_VERSION
#define NPUSCOPE_VERSION "unknown"
#endif

namespace npuscope::collector {
namespace {

using schema::Batch;

// Rows added in small spans wait here until a batch this big is ready (or the next commit).
constexpr std::size_t kBatchRows = 1024;

// What every table's writer is made with.
struct WriterArgs {
  sqlite::Db& db;
  std::size_t ranked_bytes;  // > 0: a clustered table is ranked (Note [Ranked tables] in schema.h)
};

// One table's insert statement and the rows waiting for it.
template <class Row>
class TableWriter {
 public:
  explicit TableWriter(const WriterArgs& args) : db_(args.db) {
    if constexpr (schema::HeldRows<Row>::kHoldable) {
      if (info().clustered && args.ranked_bytes > 0) {  // Note [Ranked tables]: its table made later
        held_.emplace(args.ranked_bytes);
        return;
      }
    }
    prepare(info().clustered);
    pending_.reserve(kBatchRows);
  }

  void add(std::span<const Row> rows) {
    if constexpr (schema::HeldRows<Row>::kHoldable) {
      if (held_) {
        if (held_->add(rows)) return;
        // Too many to hold: the table is made clustered now, and takes them as they came.
        db_.exec(schema::create_table_sql(info()));
        prepare(true);
        held_->as_added([&](const Batch& batch) { insert(batch); });
        held_.reset();
      }
    }
    if (rows.size() >= kBatchRows) {  // big spans go straight in, without a copy
      flush();
      insert({rows.data(), rows.size()});
      return;
    }
    pending_.insert(pending_.end(), rows.begin(), rows.end());
    if (pending_.size() >= kBatchRows) flush();
  }

  void add_now(const Row& row) {
    flush();
    insert({&row, 1});
  }

  void flush() {
    if (pending_.empty()) return;
    insert({pending_.data(), pending_.size()});
    pending_.clear();
  }

  // The rows held for ranking, stored now in rank order in a rowid table made for them; true if
  // the table is ranked.
  bool store_held() {
    if constexpr (schema::HeldRows<Row>::kHoldable) {
      if (held_) {
        db_.exec(schema::create_table_sql(info(), false, true));
        prepare(false);
        held_->ranked([&](const Batch& batch) { insert(batch); });
        held_.reset();
        return true;
      }
    }
    return false;
  }

 private:
  static const schema::TableInfo& info() { return schema::table_for<Row>().info; }

  // `clustered`: rows get their insertion order as `rowid` (Note [Clustered tables]); else SQLite
  // numbers them (a ranked table) or the table has no such column.
  void prepare(bool clustered) {
    stmt_.emplace(db_, schema::insert_sql(info(), !clustered));
    clustered_ = clustered;
  }

  void insert(Batch batch) {
    const std::size_t count = batch.size;
    sqlite::Stmt& stmt = *stmt_;
    sqlite3_bind_pointer(stmt.get(), 1, &batch, schema::kBatchPointerType, nullptr);
    if (clustered_) sqlite3_bind_int64(stmt.get(), 2, inserted_ + 1);  // the batch's rows are 0, 1, ...
    struct ResetOnExit {
      sqlite::Stmt& stmt;
      ~ResetOnExit() { stmt.reset(); }  // also unbinds &batch
    } reset{stmt};
    stmt.step();
    inserted_ += static_cast<std::int64_t>(count);
  }

  sqlite::Db& db_;
  std::optional<sqlite::Stmt> stmt_;  // none while the rows are held
  bool clustered_ = false;
  std::int64_t inserted_ = 0;  // rows so far: the next rowid of a clustered table is inserted_ + 1
  std::vector<Row> pending_;
  std::optional<schema::HeldRows<Row>> held_;  // a ranked table's rows until finalize()
};

// A stored table's row type: TASK's rows are stored as TASK_EXEC and KERNEL rows (Note [Kernel table]).
template <class Row>
struct StoredAs {
  using type = Row;
};
template <>
struct StoredAs<TaskRow> {
  using type = schema::TaskExecRow;
};
template <class Row>
using TableWriterOf = TableWriter<typename StoredAs<Row>::type>;

// The statements of every table. Destroyed before the connection closes.
struct TableWriters {
  explicit TableWriters(const WriterArgs& args) : meta(args), strings(args), kernels(args), rows(construct(args)) {}

  template <class Row>
  TableWriterOf<Row>& of() {
    return std::get<TraceRows::index_of<Row>()>(rows);
  }

  // Everything pending goes in before a commit: a committed row's strings are committed with it.
  void flush() {
    strings.flush();
    meta.flush();
    kernels.flush();
    std::apply([](auto&... table) { (table.flush(), ...); }, rows);
  }

  TableWriter<schema::MetaRow> meta;
  TableWriter<schema::StringRow> strings;
  TableWriter<schema::KernelRow> kernels;
  TraceRows::Each<std::tuple, TableWriterOf> rows;  // one per table of NPUSCOPE_TRACE_ROWS

 private:
  // The tuple of TableWriters, each made on `db` in place (they hold statements: not movable).
  template <class W>
  static const WriterArgs& args_for(const WriterArgs& args) {
    return args;
  }
  static TraceRows::Each<std::tuple, TableWriterOf> construct(const WriterArgs& args) {
    return [&args]<class... W>(std::tuple<W...>*) {
      return std::tuple<W...>(args_for<W>(args)...);
    }(static_cast<TraceRows::Each<std::tuple, TableWriterOf>*>(nullptr));
  }
};

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

class SqliteTraceWriter final : public TraceWriter {
 public:
  SqliteTraceWriter(const std::string& path, const WriterOptions& options)
      : db_(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX),
        interval_(options.commit_interval),
        durable_(options.durable),
        ranked_bytes_(options.ranked ? std::max<std::size_t>(options.ranked_bytes, 1) : 0),
        clock_(options.clock) {
    create_schema();
  }

  ~SqliteTraceWriter() override {
    if (finalized_ || !writers_) return;
    try {  // keep what we have; the trace stays marked incomplete
      writers_->flush();
      store_held_rows();
      db_.exec("COMMIT");
    } catch (const TraceError&) {
    }
    writers_.reset();
  }

  StringId intern(std::string_view s) override {
    const auto [id, is_new] = strings_.intern(s);
    if (!is_new) return id;
    check_writable();
    const schema::StringRow row{id, std::string(s)};
    writers_->strings.add({&row, 1});
    return id;
  }

  void set_meta(std::string_view key, std::string_view value) override {
    check_writable();
    writers_->meta.add_now({std::string(key), std::string(value)});
  }

  using TraceWriter::set_stat;
  void set_stat(std::string_view name, std::int64_t value) override {
    set_meta(std::string(schema::kStatPrefix) + std::string(name), std::to_string(value));
  }

  void add_rows(const RowSpan& rows) override {
    check_writable();
    std::visit([&](auto span) { add_span(span); }, rows);
  }

  void commit() override {
    check_writable();
    writers_->flush();
    db_.exec("COMMIT");
    db_.exec("BEGIN");
    last_commit_ = clock_();
  }

  void finalize(TraceStatus status) override;

  std::int64_t rows_written() const override { return rows_written_; }

 private:
  void create_schema();
  void store_held_rows();

  template <class Row>
  void add_span(std::span<const Row> rows) {
    if constexpr (std::is_same_v<Row, TaskRow>) {
      add_tasks(rows);
    } else if constexpr (std::is_same_v<Row, TensorRow>) {
      for (const TensorRow& row : rows) writers_->of<TensorRow>().add_now(row);  // not buffered: no copy of the data
    } else {
      writers_->of<Row>().add(rows);
    }
    after_add(rows.size());
  }

  // Note [Kernel table]: a TASK_EXEC row per task, a KERNEL row per kernel not seen before.
  void add_tasks(std::span<const TaskRow> rows) {
    exec_rows_.clear();
    fresh_kernels_.clear();
    for (const TaskRow& t : rows) {
      exec_rows_.push_back({t.task_id, t.start_ns, t.end_ns, t.queued_ns, t.device_id, t.stream_id,
                            kernel_ids_.id_of(t, fresh_kernels_), t.connection_id, t.overflow, t.call_index,
                            t.emulation_ns, t.thread_id, t.pytorch_api_id, t.underflow, t.subnormal});
    }
    if (!fresh_kernels_.empty()) writers_->kernels.add(fresh_kernels_);
    writers_->of<TaskRow>().add(exec_rows_);
  }

  void after_add(std::size_t rows) {
    rows_written_ += static_cast<std::int64_t>(rows);
    if (clock_() - last_commit_ >= interval_) commit();
  }

  void check_writable() const {
    if (finalized_) throw TraceError(db_.path() + ": the trace is finalized: nothing more can be written to it");
  }

  sqlite::Db db_;
  std::unique_ptr<TableWriters> writers_;
  StringIds strings_;
  KernelIds kernel_ids_;
  std::vector<schema::TaskExecRow> exec_rows_;  // add_tasks' buffers, reused
  std::vector<schema::KernelRow> fresh_kernels_;
  std::chrono::milliseconds interval_;
  bool durable_;
  std::size_t ranked_bytes_;  // > 0: Note [Ranked tables]
  std::chrono::steady_clock::time_point (*clock_)();
  std::chrono::steady_clock::time_point last_commit_;
  std::int64_t rows_written_ = 0;  // rows of the data tables (not META, not STRING_IDS)
  bool finalized_ = false;
};

void SqliteTraceWriter::create_schema() {
  db_.exec("PRAGMA page_size = 65536");  // fewer, larger page writes: the fastest setting measured
  if (durable_) {
    if (db_.query_text("PRAGMA journal_mode = WAL") != "wal") db_.fail("cannot use write-ahead logging");
    db_.exec("PRAGMA synchronous = NORMAL");  // WAL commits survive a killed process; fsync at checkpoints
  } else {                                    // rebuilt from a durable source: every page written once, no fsync
    db_.exec("PRAGMA journal_mode = OFF");
    db_.exec("PRAGMA synchronous = OFF");
  }
  // KiB. Durable: the writer lives inside the profiled process. Not durable (a spool's conversion):
  // every page is written once, so a page cache bigger than the pages being filled (the right edge
  // of each table's b-tree) only adds fresh memory to fault in and zero: 12 % of a conversion's time
  // with 16 MiB against 2 MiB.
  db_.exec(durable_ ? "PRAGMA cache_size = -16384" : "PRAGMA cache_size = -2048");
  schema::register_batch_module(db_, schema::batch_source<schema::MetaRow>());
  schema::register_batch_module(db_, schema::batch_source<schema::StringRow>());
  schema::register_batch_module(db_, schema::batch_source<schema::KernelRow>());
  TraceRows::for_each_type(
      [&]<class Row>() { schema::register_batch_module(db_, schema::batch_source<typename StoredAs<Row>::type>()); });
  db_.exec("BEGIN");
  for (const schema::TableInfo* table : schema::all_tables()) {
    // A ranked writer makes the clustered tables when it knows their layout (Note [Ranked tables]);
    // the views over them resolve their names when read.
    if (!(table->clustered && ranked_bytes_ > 0)) db_.exec(schema::create_table_sql(*table));
  }
  writers_ = std::make_unique<TableWriters>(WriterArgs{db_, ranked_bytes_});
  set_meta(schema::kMetaSchemaVersion, std::to_string(kSchemaVersion));
  set_meta(schema::kMetaStatus, schema::kStatusIncomplete);
  set_meta(schema::kMetaCreatedAt, utc_now_iso8601());
  set_meta(schema::kMetaToolVersion, NPUSCOPE_VERSION);
  db_.exec("COMMIT");  // from here on the file is a valid (incomplete) trace
  db_.exec("BEGIN");
  last_commit_ = clock_();
}

void SqliteTraceWriter::finalize(TraceStatus status) {
  if (finalized_) return;
  commit();  // the rows are safe before the slower index builds
  store_held_rows();
  for (const schema::TableInfo* table : schema::all_tables()) {
    for (const std::string& sql : schema::create_index_sql(*table)) db_.exec(sql);
  }
  set_meta(schema::kMetaFinalizedAt, utc_now_iso8601());
  if (status == TraceStatus::kComplete) set_meta(schema::kMetaStatus, schema::kStatusComplete);
  db_.exec("COMMIT");
  finalized_ = true;
  writers_.reset();
  // One self-contained file. A reader that has it open keeps it in WAL mode: still complete.
  if (durable_) {
    try {
      db_.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      db_.query_text("PRAGMA journal_mode = DELETE");
    } catch (const TraceError&) {
    }
  }
  db_.close();
}

// Note [Ranked tables]: the rows held stored in rank order, the tables so stored named in META.
void SqliteTraceWriter::store_held_rows() {
  if (ranked_bytes_ == 0) return;
  std::string ranked;
  std::apply(
      [&](auto&... table) {
        const auto store = [&]<class Row>(TableWriter<Row>& writer) {
          if (writer.store_held())
            ranked += (ranked.empty() ? "" : ",") + std::string(schema::table_for<Row>().info.name);
        };
        (store(table), ...);
      },
      writers_->rows);
  set_meta(schema::kMetaRankedTables, ranked);
}

}  // namespace

std::unique_ptr<TraceWriter> TraceWriter::create(const std::string& path, const WriterOptions& options) {
  prepare_output_file(path, options.overwrite);
  try {
    return std::make_unique<SqliteTraceWriter>(path, options);
  } catch (const TraceError&) {
    remove_output_file(path);  // leave no half-made file behind
    throw;
  }
}

}  // namespace npuscope::collector

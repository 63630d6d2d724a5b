// The SQLite trace writer. See Note [Trace durability] in trace_writer.h and Note [Batch inserts]
// in batch_vtab.h.
#include "npuscope/collector/trace_writer.h"

#include <ctime>
#include <string>
#include <vector>

#include "batch_vtab.h"
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

// One table's insert statement and the rows waiting for it.
template <class Row>
class TableWriter {
 public:
  explicit TableWriter(sqlite::Db& db)
      : stmt_(db, schema::insert_sql(schema::table_for<Row>().info)),
        clustered_(schema::table_for<Row>().info.clustered) {
    pending_.reserve(kBatchRows);
  }

  void add(std::span<const Row> rows) {
    if (rows.size() >= kBatchRows) {  // big spans go straight in, without a copy
      flush();
      insert(rows.data(), rows.size());
      return;
    }
    pending_.insert(pending_.end(), rows.begin(), rows.end());
    if (pending_.size() >= kBatchRows) flush();
  }

  void add_now(const Row& row) {
    flush();
    insert(&row, 1);
  }

  void flush() {
    if (pending_.empty()) return;
    insert(pending_.data(), pending_.size());
    pending_.clear();
  }

 private:
  void insert(const Row* rows, std::size_t count) {
    Batch batch{rows, count};
    sqlite3_bind_pointer(stmt_.get(), 1, &batch, schema::kBatchPointerType, nullptr);
    if (clustered_) sqlite3_bind_int64(stmt_.get(), 2, inserted_ + 1);  // the batch's rows are 0, 1, ...
    struct ResetOnExit {
      sqlite::Stmt& stmt;
      ~ResetOnExit() { stmt.reset(); }  // also unbinds &batch
    } reset{stmt_};
    stmt_.step();
    inserted_ += static_cast<std::int64_t>(count);
  }

  sqlite::Stmt stmt_;
  const bool clustered_;
  std::int64_t inserted_ = 0;  // rows so far: the next rowid of a clustered table is inserted_ + 1
  std::vector<Row> pending_;
};

// The statements of every table. Destroyed before the connection closes.
struct TableWriters {
  explicit TableWriters(sqlite::Db& db)
      : meta(db),
        strings(db),
        devices(db),
        apis(db),
        kernels(db),
        tasks(db),
        tensors(db),
        memory(db),
        memcpys(db),
        markers(db),
        pytorch_apis(db),
        gradients(db),
        loss_scales(db),
        op_checks(db),
        kernel_blocks(db),
        pipe_instructions(db),
        kernel_findings(db),
        communicators(db),
        communications(db),
        communication_links(db) {}

  // Everything pending goes in before a commit: a committed row's strings are committed with it.
  void flush() {
    strings.flush();
    meta.flush();
    devices.flush();
    apis.flush();
    kernels.flush();
    tasks.flush();
    memory.flush();
    memcpys.flush();
    markers.flush();
    pytorch_apis.flush();
    gradients.flush();
    loss_scales.flush();
    op_checks.flush();
    kernel_blocks.flush();
    pipe_instructions.flush();
    kernel_findings.flush();
    communicators.flush();
    communications.flush();
    communication_links.flush();
    tensors.flush();
  }

  TableWriter<schema::MetaRow> meta;
  TableWriter<schema::StringRow> strings;
  TableWriter<DeviceInfoRow> devices;
  TableWriter<ApiRow> apis;
  TableWriter<schema::KernelRow> kernels;
  TableWriter<schema::TaskExecRow> tasks;
  TableWriter<TensorRow> tensors;
  TableWriter<MemoryRow> memory;
  TableWriter<MemcpyRow> memcpys;
  TableWriter<MarkerRow> markers;
  TableWriter<PytorchApiRow> pytorch_apis;
  TableWriter<GradientRow> gradients;
  TableWriter<LossScaleRow> loss_scales;
  TableWriter<OpCheckRow> op_checks;
  TableWriter<KernelBlockRow> kernel_blocks;
  TableWriter<PipeInstructionRow> pipe_instructions;
  TableWriter<KernelFindingRow> kernel_findings;
  TableWriter<CommunicatorRow> communicators;
  TableWriter<CommunicationRow> communications;
  TableWriter<CommunicationLinkRow> communication_links;
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
        durable_(options.durable) {
    create_schema();
  }

  ~SqliteTraceWriter() override {
    if (finalized_ || !writers_) return;
    try {  // keep what we have; the trace stays marked incomplete
      writers_->flush();
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

  void add_device(const DeviceInfoRow& row) override { add_rows(writers_->devices, std::span(&row, 1)); }
  // Note [Kernel table]: a TASK_EXEC row per task, a KERNEL row per kernel not seen before.
  void add_tasks(std::span<const TaskRow> rows) override {
    check_writable();
    exec_rows_.clear();
    fresh_kernels_.clear();
    for (const TaskRow& t : rows) {
      exec_rows_.push_back({t.task_id, t.start_ns, t.end_ns, t.queued_ns, t.device_id, t.stream_id,
                            kernel_ids_.id_of(t, fresh_kernels_), t.connection_id, t.overflow, t.call_index,
                            t.emulation_ns, t.thread_id, t.pytorch_api_id, t.underflow, t.subnormal});
    }
    if (!fresh_kernels_.empty()) writers_->kernels.add(fresh_kernels_);
    writers_->tasks.add(exec_rows_);
    after_add(rows.size());
  }
  void add_apis(std::span<const ApiRow> rows) override { add_rows(writers_->apis, rows); }
  void add_memory(std::span<const MemoryRow> rows) override { add_rows(writers_->memory, rows); }
  void add_memcpys(std::span<const MemcpyRow> rows) override { add_rows(writers_->memcpys, rows); }
  void add_markers(std::span<const MarkerRow> rows) override { add_rows(writers_->markers, rows); }
  void add_pytorch_apis(std::span<const PytorchApiRow> rows) override { add_rows(writers_->pytorch_apis, rows); }
  void add_gradients(std::span<const GradientRow> rows) override { add_rows(writers_->gradients, rows); }
  void add_loss_scales(std::span<const LossScaleRow> rows) override { add_rows(writers_->loss_scales, rows); }
  void add_op_checks(std::span<const OpCheckRow> rows) override { add_rows(writers_->op_checks, rows); }
  void add_kernel_blocks(std::span<const KernelBlockRow> rows) override { add_rows(writers_->kernel_blocks, rows); }
  void add_pipe_instructions(std::span<const PipeInstructionRow> rows) override {
    add_rows(writers_->pipe_instructions, rows);
  }
  void add_kernel_findings(std::span<const KernelFindingRow> rows) override {
    add_rows(writers_->kernel_findings, rows);
  }
  void add_communicators(std::span<const CommunicatorRow> rows) override { add_rows(writers_->communicators, rows); }
  void add_communications(std::span<const CommunicationRow> rows) override { add_rows(writers_->communications, rows); }
  void add_communication_links(std::span<const CommunicationLinkRow> rows) override {
    add_rows(writers_->communication_links, rows);
  }

  void add_tensor(const TensorRow& row) override {
    check_writable();
    writers_->tensors.add_now(row);  // not buffered: no copy of the data
    after_add(1);
  }

  void commit() override {
    check_writable();
    writers_->flush();
    db_.exec("COMMIT");
    db_.exec("BEGIN");
    last_commit_ = std::chrono::steady_clock::now();
  }

  void finalize(TraceStatus status) override;

  std::int64_t rows_written() const override { return rows_written_; }

 private:
  void create_schema();

  template <class Row>
  void add_rows(TableWriter<Row>& table, std::span<const Row> rows) {
    check_writable();
    table.add(rows);
    after_add(rows.size());
  }

  void after_add(std::size_t rows) {
    rows_written_ += static_cast<std::int64_t>(rows);
    if (std::chrono::steady_clock::now() - last_commit_ >= interval_) commit();
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
  db_.exec("PRAGMA cache_size = -16384");  // KiB: the writer lives inside the profiled process
  for (const schema::BatchSource* source :
       {&schema::batch_source<schema::MetaRow>(),     &schema::batch_source<schema::StringRow>(),
        &schema::batch_source<DeviceInfoRow>(),       &schema::batch_source<ApiRow>(),
        &schema::batch_source<schema::TaskExecRow>(), &schema::batch_source<schema::KernelRow>(),
        &schema::batch_source<TensorRow>(),           &schema::batch_source<MemoryRow>(),
        &schema::batch_source<MemcpyRow>(),           &schema::batch_source<MarkerRow>(),
        &schema::batch_source<PytorchApiRow>(),       &schema::batch_source<GradientRow>(),
        &schema::batch_source<LossScaleRow>(),        &schema::batch_source<OpCheckRow>(),
        &schema::batch_source<KernelBlockRow>(),      &schema::batch_source<PipeInstructionRow>(),
        &schema::batch_source<KernelFindingRow>(),    &schema::batch_source<CommunicatorRow>(),
        &schema::batch_source<CommunicationRow>(),    &schema::batch_source<CommunicationLinkRow>()}) {
    schema::register_batch_module(db_, *source);
  }
  db_.exec("BEGIN");
  for (const schema::TableInfo* table : schema::all_tables()) db_.exec(schema::create_table_sql(*table));
  writers_ = std::make_unique<TableWriters>(db_);
  set_meta(schema::kMetaSchemaVersion, std::to_string(kSchemaVersion));
  set_meta(schema::kMetaStatus, schema::kStatusIncomplete);
  set_meta(schema::kMetaCreatedAt, utc_now_iso8601());
  set_meta(schema::kMetaToolVersion, NPUSCOPE_VERSION);
  db_.exec("COMMIT");  // from here on the file is a valid (incomplete) trace
  db_.exec("BEGIN");
  last_commit_ = std::chrono::steady_clock::now();
}

void SqliteTraceWriter::finalize(TraceStatus status) {
  if (finalized_) return;
  commit();  // the rows are safe before the slower index builds
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

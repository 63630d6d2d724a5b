// TraceReader::open refuses what is not a readable npuscope trace, with a message a user can act
// on; streams come back in their documented order; tensor data is decompressed on request.
#include <atomic>
#include <fstream>
#include <random>
#include <thread>
#include <tuple>
#include <utility>

#include "trace_test_util.h"

using namespace npuscope::collector;
using namespace npuscope::collector::testing;

namespace {

class TraceReaderTest : public TraceTest {
 protected:
  // A finalized trace of `tasks` tasks.
  void write_trace(const std::string& file, std::int64_t tasks) {
    auto writer = TraceWriter::create(file);
    const StringId op = writer->intern("op");
    std::vector<TaskRow> rows;
    for (std::int64_t i = 0; i < tasks; ++i) rows.push_back(make_task(i, op, op));
    writer->add(rows);
    writer->finalize();
  }

  void write_bytes(const std::string& file, const std::vector<char>& bytes) {
    std::ofstream out(file, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
};

TEST_F(TraceReaderTest, MissingFile) {
  expect_trace_error([&] { TraceReader::open(path("missing.db")); }, "missing.db: no such trace file");
}

TEST_F(TraceReaderTest, Directory) {
  expect_trace_error([&] { TraceReader::open(dir_.string()); }, "is a directory");
}

TEST_F(TraceReaderTest, RandomBytesAreNotSqlite) {
  std::mt19937 rng(42);
  std::vector<char> bytes(64 * 1024);
  for (char& b : bytes) b = static_cast<char>(rng());
  write_bytes(path(), bytes);
  expect_trace_error([&] { TraceReader::open(path()); }, "not an npuscope trace (not an SQLite file)");
  EXPECT_THROW(TraceReader::open(path()), NotADatabaseError);  // the CLI's hint hangs on the type
}

TEST_F(TraceReaderTest, EmptyFileIsNotATrace) {
  write_bytes(path(), {});
  expect_trace_error([&] { TraceReader::open(path()); }, "not an npuscope trace");
}

TEST_F(TraceReaderTest, SqliteFileThatIsNotATrace) {
  sql_exec(path(), "CREATE TABLE songs (title TEXT); INSERT INTO songs VALUES ('x')");
  expect_trace_error([&] { TraceReader::open(path()); }, "not an npuscope trace (no META table)");
  sql_exec(path("meta.db"), "CREATE TABLE META (key TEXT, value TEXT); INSERT INTO META VALUES ('owner', 'me')");
  expect_trace_error([&] { TraceReader::open(path("meta.db")); }, "not an npuscope trace (META has no schema_version)");
}

TEST_F(TraceReaderTest, NewerSchemaAsksForAnUpgrade) {
  write_trace(path(), 3);
  sql_exec(path(), "UPDATE META SET value = '99' WHERE key = 'schema_version'");
  expect_trace_error([&] { TraceReader::open(path()); },
                     "written by a newer npuscope (schema 99, this build reads up to " +
                         std::to_string(kSchemaVersion) + "): upgrade npuscope");
}

TEST_F(TraceReaderTest, TruncatedTraceIsCorrupt) {
  write_trace(path(), 50'000);  // tens of 64 KiB pages
  const auto size = std::filesystem::file_size(path());
  ASSERT_GT(size, 1'000'000u);
  std::filesystem::resize_file(path(), size / 2);
  expect_trace_error([&] { TraceReader::open(path()); }, "corrupt");
}

TEST_F(TraceReaderTest, DamagedPageIsCorrupt) {
  write_trace(path(), 50'000);
  {  // overwrite the middle of the file (table pages) with garbage
    std::fstream f(path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(std::filesystem::file_size(path()) / 2));
    const std::vector<char> junk(70'000, '\x5a');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  expect_trace_error([&] { TraceReader::open(path()); }, "corrupt");
}

TEST_F(TraceReaderTest, TruncationIsFoundWithoutVerifying) {
  write_trace(path(), 50'000);
  const auto size = std::filesystem::file_size(path());
  std::filesystem::resize_file(path(), size - 65'536);  // the last page: no query would touch it early
  expect_trace_error(
      [&] { TraceReader::open(path(), {.verify = false}); },
      "corrupt trace, truncated (" + std::to_string(size - 65'536) + " bytes of " + std::to_string(size) + ")");
}

TEST_F(TraceReaderTest, DamageMetWhileReadingIsCorrupt) {
  write_trace(path(), 50'000);
  {  // garbage over the middle of the file: opening without verify does not notice, reading all does
    std::fstream f(path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(std::filesystem::file_size(path()) / 2));
    const std::vector<char> junk(70'000, '\x5a');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  const auto reader = TraceReader::open(path(), {.verify = false});
  expect_trace_error([&] { reader->for_each([](const TaskRow&) {}); }, "corrupt trace, damaged or truncated");
}

TEST_F(TraceReaderTest, TasksOfATimeWindow) {
  write_trace(path(), 1'000);
  const auto reader = TraceReader::open(path());
  const auto [first, last] = reader->task_start_range();
  const std::vector<TaskRow> all = reader->rows<TaskRow>();
  EXPECT_EQ(first, all.front().start_ns);
  EXPECT_EQ(last, all.back().start_ns);
  // Two windows that meet at a task's start: each task exactly once, in start order.
  const std::int64_t middle = all[400].start_ns;
  std::vector<std::int64_t> ids;
  std::int64_t previous = first;
  for (const auto& [a, b] : {std::pair{first, middle}, std::pair{middle, last + 1}}) {
    reader->for_each(
        [&](const TaskRow& t) {
          EXPECT_GE(t.start_ns, previous);
          EXPECT_TRUE(t.start_ns >= a && t.start_ns < b);
          previous = t.start_ns;
          ids.push_back(t.task_id);
        },
        {.starting = {{a, b}}});
    if (a == first) {
      EXPECT_EQ(ids.size(), 400u);
    }
  }
  ASSERT_EQ(ids.size(), all.size());
  for (std::size_t i = 0; i < all.size(); ++i) EXPECT_EQ(ids[i], all[i].task_id);
}

TEST_F(TraceReaderTest, SkippedColumnsReadAsZero) {
  write_trace(path(), 10);
  const std::vector<TaskRow> all = TraceReader::open(path())->rows<TaskRow>();
  // TASK.flops is its kernel's (Note [Kernel table]): accepted, and kept, since it costs nothing.
  const auto reader =
      TraceReader::open(path(), {.skip_columns = {"TASK.queued_ns", "TASK.connection_id", "TASK.flops"}});
  const std::vector<TaskRow> some = reader->rows<TaskRow>();
  ASSERT_EQ(some.size(), all.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(some[i].queued_ns, 0);
    EXPECT_EQ(some[i].connection_id, 0);
    EXPECT_EQ(some[i].bytes, all[i].bytes) << "the other columns are read";
    EXPECT_EQ(some[i].task_id, all[i].task_id);
  }
  const auto api = TraceReader::open(path(), {.skip_columns = {"API.connection_id"}});  // another table
  expect_trace_error([&] { TraceReader::open(path(), {.skip_columns = {"TASK.flop"}}); },
                     "cannot leave out 'TASK.flop': not a TABLE.column of a trace");
  expect_trace_error([&] { TraceReader::open(path(), {.skip_columns = {"flops"}}); }, "cannot leave out 'flops'");
}

// Note [Kernel table]: each kernel stored once, TASK a view that reads like the old table, and a
// schema 1 trace (TASK a table) still read as it is.
TEST_F(TraceReaderTest, KernelsStoredOnceAndSchema1TracesStillRead) {
  {  // one op name launched 1000 times with 5 distinct costs: 5 kernels
    auto writer = TraceWriter::create(path());
    const StringId op = writer->intern("op");
    std::vector<TaskRow> rows;
    for (std::int64_t i = 0; i < 1'000; ++i) {
      TaskRow t = make_task(i, op, op);
      t.flops = (i % 5) * 1'000;
      t.bytes = (i % 5) * 64;
      t.task_type = t.fallback = 0;
      rows.push_back(t);
    }
    writer->add(rows);
    writer->finalize();
  }
  const std::vector<TaskRow> all = TraceReader::open(path())->rows<TaskRow>();
  EXPECT_EQ(sql_text(path(), "SELECT count(*) FROM KERNEL"), "5");
  EXPECT_EQ(sql_text(path(), "SELECT count(*) FROM TASK"), "1000");
  EXPECT_EQ(sql_text(path(), "SELECT flops FROM TASK WHERE task_id = 8"), std::to_string(all[7].flops));
  downgrade_to_schema_4(path());
  sql_exec(path(),
           "CREATE TABLE TASK_V1 AS SELECT * FROM TASK; DROP VIEW TASK; ALTER TABLE TASK_V1 RENAME TO TASK; "
           "DROP TABLE TASK_EXEC; DROP TABLE KERNEL; UPDATE META SET value = '1' WHERE key = 'schema_version'");
  const auto v1 = TraceReader::open(path());
  EXPECT_EQ(v1->schema_version(), 1);
  expect_rows_eq(all, v1->rows<TaskRow>());
  EXPECT_EQ(v1->count("TASK"), 1'000);
  EXPECT_EQ(v1->task_start_range().first, all.front().start_ns);
}

// Schema 3 added API.kind; a schema 2 trace gets it from the call names (adapt_older_schema).
TEST_F(TraceReaderTest, Schema2TracesGetApiKindsFromTheirNames) {
  const std::vector<std::pair<std::string, ApiKind>> calls = {
      {"aclnnMatMul", ApiKind::kLaunch},     {"aclrtSynchronizeStream", ApiKind::kSynchronize},
      {"aclrtMemcpy", ApiKind::kMemcpy},     {"aclrtMemcpyAsync", ApiKind::kMemcpyAsync},
      {"aclrtMalloc", ApiKind::kMalloc},     {"aclrtFree", ApiKind::kFree},
      {"aclrtRecordEvent", ApiKind::kEvent}, {"aclrtSynchronizeEvent", ApiKind::kSynchronize},
      {"somethingElse", ApiKind::kOther}};
  {
    auto writer = TraceWriter::create(path());
    std::vector<ApiRow> rows;
    for (std::size_t i = 0; i < calls.size(); ++i) {
      ApiRow a;
      a.start_ns = static_cast<std::int64_t>(i) * 10;
      a.end_ns = a.start_ns + 5;
      a.name_id = writer->intern(calls[i].first);
      a.kind = static_cast<std::int32_t>(calls[i].second);
      rows.push_back(a);
    }
    writer->add(rows);
    writer->finalize();
  }
  const auto kinds_read = [&] {
    std::vector<std::int32_t> out;
    for (const ApiRow& a : TraceReader::open(path())->rows<ApiRow>()) out.push_back(a.kind);
    return out;
  };
  const std::vector<std::int32_t> v3 = kinds_read();
  ASSERT_EQ(v3.size(), calls.size());
  for (std::size_t i = 0; i < calls.size(); ++i)
    EXPECT_EQ(v3[i], static_cast<std::int32_t>(calls[i].second)) << calls[i].first;
  downgrade_to_schema_4(path());
  EXPECT_EQ(kinds_read(), v3);
  sql_exec(path(), "ALTER TABLE API DROP COLUMN kind; UPDATE META SET value = '2' WHERE key = 'schema_version'");
  EXPECT_EQ(kinds_read(), v3);
  EXPECT_EQ(TraceReader::open(path())->schema_version(), 2);
}

// Schema 7 added TENSOR.address (the buffer a tensor lives in, joining one task's output to another's
// input): a schema 6 trace reads it as 0, "not recorded", and the rest of the row as written.
TEST_F(TraceReaderTest, Schema6TracesReadTensorAddressesAsZero) {
  {
    auto writer = TraceWriter::create(path());
    writer->add(TensorRow{
        .task_id = 3, .role = 1, .idx = 0, .dtype = 0, .shape = "2", .numel = 2, .max = 5, .address = 0x7f0012345640});
    writer->finalize();
  }
  const auto read = [&] { return TraceReader::open(path())->rows<TensorRow>().at(0); };
  EXPECT_EQ(read().address, 0x7f0012345640);
  sql_exec(path(),
           "ALTER TABLE TENSOR DROP COLUMN address; ALTER TABLE TENSOR DROP COLUMN crc32; UPDATE META SET value = "
           "'6' WHERE key = 'schema_version'");
  const TensorRow old = read();
  EXPECT_EQ(old.address, 0);
  EXPECT_EQ(old.task_id, 3);
  EXPECT_EQ(old.max, 5);
  EXPECT_EQ(old.shape, "2");
}

// Schema 15 added TENSOR.crc32 (`--dump md5`): a schema 14 trace reads it as 0, none.
TEST_F(TraceReaderTest, Schema14TracesReadTensorCrcsAsZero) {
  {
    auto writer = TraceWriter::create(path());
    writer->add(TensorRow{.task_id = 3, .shape = "2", .numel = 2, .address = 0x40, .crc32 = 0xcbf43926});
    writer->finalize();
  }
  const auto read = [&] { return TraceReader::open(path())->rows<TensorRow>().at(0); };
  EXPECT_EQ(read().crc32, 0xcbf43926);
  sql_exec(path(), "ALTER TABLE TENSOR DROP COLUMN crc32; UPDATE META SET value = '14' WHERE key = 'schema_version'");
  const TensorRow old = read();
  EXPECT_EQ(old.crc32, 0);
  EXPECT_EQ(old.address, 0x40);
  EXPECT_EQ(old.numel, 2);
}

// Schema 12 added what real profiles say of a kernel and of a framework op: a schema 11 trace reads
// them as 0, not recorded, and the rest of its rows as written; the tables real profiles fill
// (TASK_PMU, COUNTER, UNMAPPED) read as empty in it (Note [Older traces]).
TEST_F(TraceReaderTest, Schema11TracesReadKernelFormatsAsZeroAndImportTablesAsEmpty) {
  {
    auto writer = TraceWriter::create(path());
    const StringId op = writer->intern("op"), nz = writer->intern("FRACTAL_NZ;"), stack = writer->intern("a.py:1");
    TaskRow t = make_task(1, op, op);
    t.input_formats_id = nz;
    t.output_shapes_id = writer->intern("16,16;");
    writer->add(t);
    writer->add(PytorchApiRow{.id = 1, .start_ns = 0, .end_ns = 5, .name_id = op, .stack_id = stack});
    writer->add(TaskPmuRow{.task_id = 1, .name_id = op, .value = 0.5});
    writer->add(CounterRow{.ts_ns = 3, .device_id = 0, .name_id = op, .value = 1800});
    writer->add(UnmappedRow{.source_id = op, .what_id = op, .count = 7});
    writer->finalize();
  }
  {
    const auto reader = TraceReader::open(path());
    EXPECT_EQ(reader->string(reader->rows<TaskRow>().at(0).input_formats_id), "FRACTAL_NZ;");
    EXPECT_EQ(reader->string(reader->rows<TaskRow>().at(0).output_shapes_id), "16,16;");
    EXPECT_EQ(reader->string(reader->rows<PytorchApiRow>().at(0).stack_id), "a.py:1");
    EXPECT_EQ(reader->rows<TaskPmuRow>({.task_id = 1}).at(0).value, 0.5);
    EXPECT_EQ(reader->rows<CounterRow>().at(0).value, 1800);
    EXPECT_EQ(reader->rows<UnmappedRow>().at(0).count, 7);
  }
  sql_exec(path(),
           "DROP VIEW TASK; ALTER TABLE KERNEL DROP COLUMN input_formats_id; ALTER TABLE KERNEL DROP COLUMN "
           "output_shapes_id; "
           "ALTER TABLE KERNEL DROP COLUMN output_dtypes_id; ALTER TABLE KERNEL DROP COLUMN output_formats_id; "
           "ALTER TABLE PYTORCH_API DROP COLUMN stack_id; ALTER TABLE PYTORCH_API DROP COLUMN args_id; DROP TABLE "
           "TASK_PMU; DROP TABLE COUNTER; "
           "DROP TABLE UNMAPPED; UPDATE META SET value = '11' WHERE key = 'schema_version'");
  const auto old = TraceReader::open(path());
  const TaskRow t = old->rows<TaskRow>().at(0);
  EXPECT_EQ(t.input_formats_id, 0);
  EXPECT_EQ(t.output_shapes_id, 0);
  EXPECT_EQ(old->string(t.name_id), "op");
  EXPECT_EQ(old->rows<PytorchApiRow>().at(0).stack_id, 0);
  EXPECT_EQ(old->rows<PytorchApiRow>().at(0).end_ns, 5);
  EXPECT_TRUE(old->rows<TaskPmuRow>().empty());
  EXPECT_TRUE(old->rows<CounterRow>().empty());
  EXPECT_EQ(old->count("UNMAPPED"), 0);
}

// Schema 14 added PYTORCH_API.args_id (msprobe fragments' arguments): a schema 13 trace reads it as 0.
TEST_F(TraceReaderTest, FragmentArgumentsRoundTripAndSchema13TracesReadThemAsZero) {
  {
    auto writer = TraceWriter::create(path());
    const StringId name = writer->intern("Functional.relu.0.forward"), args = writer->intern("{\"input_args\":[]}");
    writer->add(PytorchApiRow{.id = 1,
                              .start_ns = 0,
                              .end_ns = 5,
                              .name_id = name,
                              .kind = static_cast<std::int32_t>(HostOpKind::kApi),
                              .args_id = args});
    writer->finalize();
  }
  {
    const auto reader = TraceReader::open(path());
    EXPECT_EQ(reader->string(reader->rows<PytorchApiRow>().at(0).args_id), "{\"input_args\":[]}");
  }
  sql_exec(path(),
           "ALTER TABLE PYTORCH_API DROP COLUMN args_id; UPDATE META SET value = '13' WHERE key = 'schema_version'");
  const auto old = TraceReader::open(path());
  EXPECT_EQ(old->rows<PytorchApiRow>().at(0).args_id, 0);
  EXPECT_EQ(old->rows<PytorchApiRow>().at(0).end_ns, 5);
}

// Schema 13 added API.level (and, a new table, OP_MEMORY): a schema 12 trace's calls read as level 0,
// unknown, and it has no per-op memory.
TEST_F(TraceReaderTest, ApiLevelsRoundTripAndSchema12TracesReadThemAsZero) {
  {
    auto writer = TraceWriter::create(path());
    const StringId add = writer->intern("aclnnAdd");
    writer->add(ApiRow{.start_ns = 1,
                       .end_ns = 5,
                       .name_id = add,
                       .connection_id = 7,
                       .kind = static_cast<std::int32_t>(ApiKind::kLaunch),
                       .level = static_cast<std::int32_t>(ApiLevel::kNode)});
    writer->add(OpMemoryRow{.name_id = add, .bytes = 512, .allocation_ns = 2, .release_ns = 4});
    writer->finalize();
  }
  {
    const auto reader = TraceReader::open(path());
    EXPECT_EQ(reader->rows<ApiRow>().at(0).level, static_cast<std::int32_t>(ApiLevel::kNode));
    const OpMemoryRow block = reader->rows<OpMemoryRow>().at(0);
    EXPECT_EQ(block.bytes, 512);
    EXPECT_EQ(block.release_ns, 4);
    EXPECT_EQ(block.active_release_ns, -1);
  }
  sql_exec(path(),
           "DROP VIEW API; ALTER TABLE API_CALL DROP COLUMN level; DROP TABLE OP_MEMORY; "
           "CREATE VIEW API AS SELECT start_ns, end_ns, name_id, connection_id, thread_id, kind FROM API_CALL; "
           "UPDATE META SET value = '12' WHERE key = 'schema_version'");
  const auto old = TraceReader::open(path());
  EXPECT_EQ(old->schema_version(), 12);
  const ApiRow call = old->rows<ApiRow>().at(0);
  EXPECT_EQ(call.level, 0);
  EXPECT_EQ(call.connection_id, 7);
  EXPECT_EQ(call.kind, static_cast<std::int32_t>(ApiKind::kLaunch));
  EXPECT_TRUE(old->rows<OpMemoryRow>().empty());
}

// Schema 4 added MEMORY_RECORD.seq: memory operations with equal times come back in allocator
// order, whatever order they were written in; a schema 3 trace reads them in written order, with
// seq = that order (adapt_older_schema).
TEST_F(TraceReaderTest, MemoryRowsWithEqualTimesComeBackInSeqOrder) {
  {
    auto writer = TraceWriter::create(path());
    std::vector<MemoryRow> rows(4);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      rows[i].ts_ns = 100;
      rows[i].address = static_cast<std::int64_t>(i);
      rows[i].seq = static_cast<std::int64_t>(10 - i);  // written in the reverse of allocator order
    }
    writer->add(rows);
    writer->finalize();
  }
  const auto read = [&] {
    std::vector<std::pair<std::int64_t, std::int64_t>> out;
    for (const MemoryRow& m : TraceReader::open(path())->rows<MemoryRow>()) out.emplace_back(m.address, m.seq);
    return out;
  };
  EXPECT_EQ(read(), (std::vector<std::pair<std::int64_t, std::int64_t>>{{3, 7}, {2, 8}, {1, 9}, {0, 10}}));
  downgrade_to_schema_4(path());
  EXPECT_EQ(read(), (std::vector<std::pair<std::int64_t, std::int64_t>>{{3, 7}, {2, 8}, {1, 9}, {0, 10}}));
  sql_exec(path(),
           "DROP INDEX MEMORY_RECORD_v4; ALTER TABLE MEMORY_RECORD DROP COLUMN seq; "
           "UPDATE META SET value = '3' WHERE key = 'schema_version'");
  EXPECT_EQ(TraceReader::open(path())->schema_version(), 3);
  EXPECT_EQ(read(), (std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 1}, {1, 2}, {2, 3}, {3, 4}}));
}

// Note [Reading schema 1] in trace_reader.cpp: every function of the reader reads a schema 1 trace
// (TASK a table, no TASK_EXEC or KERNEL) as it reads the same trace in schema 2.
TEST_F(TraceReaderTest, EveryReadOfASchema1TraceMatchesSchema2) {
  Sample sample;
  {
    auto writer = TraceWriter::create(path());
    sample = write_all(*writer, 300);
    writer->set_stat("dropped_records", 7);
    writer->finalize();
  }
  const std::string v1_path = path("v1.db");
  std::filesystem::copy_file(path(), v1_path);
  downgrade_to_schema_4(v1_path);
  sql_exec(v1_path,
           "CREATE TABLE TASK_V1 AS SELECT * FROM TASK; DROP VIEW TASK; ALTER TABLE TASK_V1 RENAME TO TASK; "
           "CREATE INDEX TASK_start ON TASK (start_ns); "
           "DROP INDEX MEMORY_RECORD_v4; ALTER TABLE MEMORY_RECORD DROP COLUMN seq; "
           "CREATE INDEX MEMORY_RECORD_ts_ns ON MEMORY_RECORD (ts_ns); "
           "DROP TABLE TASK_EXEC; DROP TABLE KERNEL; UPDATE META SET value = '1' WHERE key = 'schema_version'");
  const auto v2 = TraceReader::open(path());
  for (bool verify : {true, false}) {
    const auto v1 = TraceReader::open(v1_path, {.verify = verify});
    ASSERT_EQ(v1->schema_version(), 1);
    expect_sample_read_back(sample, *v1);
    expect_rows_eq(v2->rows<TaskRow>(), v1->rows<TaskRow>());
    EXPECT_EQ(v1->path(), v1_path);
    EXPECT_TRUE(v1->complete());
    EXPECT_EQ(v1->meta("config"), v2->meta("config"));
    EXPECT_EQ(v1->string(sample.tasks[0].name_id), v2->string(sample.tasks[0].name_id));
    ASSERT_EQ(v1->stats().size(), v2->stats().size());
    for (std::size_t i = 0; i < v1->stats().size(); ++i) EXPECT_EQ(v1->stats()[i].value, v2->stats()[i].value);
    for (const char* table : {"META", "STRING_IDS", "DEVICE_INFO", "API", "TASK", "TASK_EXEC", "KERNEL", "TENSOR",
                              "MEMORY_RECORD", "MEMCPY", "MARKER"}) {
      EXPECT_EQ(v1->count(table), v2->count(table)) << table;
    }
    EXPECT_EQ(v1->count("TASK"), 300);
    const TaskSummary a = v1->task_summary(), b = v2->task_summary();
    EXPECT_EQ(std::tie(a.tasks, a.overflows, a.first_start_ns, a.last_end_ns),
              std::tie(b.tasks, b.overflows, b.first_start_ns, b.last_end_ns));
    EXPECT_EQ(v1->task_start_range(), v2->task_start_range());
    const auto [first, last] = v2->task_start_range();
    std::vector<TaskRow> window1, window2;
    v1->for_each([&](const TaskRow& t) { window1.push_back(t); }, {.starting = {{first + 10, last - 10}}});
    v2->for_each([&](const TaskRow& t) { window2.push_back(t); }, {.starting = {{first + 10, last - 10}}});
    EXPECT_FALSE(window1.empty());
    expect_rows_eq(window2, window1);
    std::vector<TensorRow> of1, of2;
    v1->for_each([&](TensorRow& t) { of1.push_back(std::move(t)); }, {.task_id = 3, .with_data = true});
    v2->for_each([&](TensorRow& t) { of2.push_back(std::move(t)); }, {.task_id = 3, .with_data = true});
    ASSERT_EQ(of1.size(), 2u);
    expect_rows_eq(of2, of1);
    std::size_t compared = 0;
    v1->for_each([&](const CompareResultRow&) { ++compared; });
    EXPECT_EQ(compared, 0u);
  }
  // Kernel columns cost nothing to keep; TASK's own columns are left out as in schema 2.
  const auto skipping = TraceReader::open(v1_path, {.skip_columns = {"TASK.queued_ns", "TASK.flops"}});
  const std::vector<TaskRow> all = v2->rows<TaskRow>(), some = skipping->rows<TaskRow>();
  ASSERT_EQ(some.size(), all.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(some[i].queued_ns, 0);
    EXPECT_EQ(some[i].flops, all[i].flops);
    EXPECT_EQ(some[i].start_ns, all[i].start_ns);
  }
}

// The header's thread-safety sentence: threads share one reader, and a callback may read again,
// from its own thread or from another one it waits for (a recursive lock would deadlock there).
TEST_F(TraceReaderTest, ThreadsShareOneReaderAndCallbacksMayReadAgain) {
  Sample sample;
  {
    auto writer = TraceWriter::create(path());
    sample = write_all(*writer, 5'000);
    writer->finalize();
  }
  const auto reader = TraceReader::open(path());
  const std::vector<TaskRow> expected = reader->rows<TaskRow>();
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 5; ++round) {
        std::size_t i = 0;
        bool same = true;
        reader->for_each([&](const TaskRow& row) {
          same = same && i < expected.size() && row.task_id == expected[i].task_id && row.flops == expected[i].flops &&
                 row.name_id == expected[i].name_id;
          ++i;
          if (t % 2 && i % 1'000 == 0) same = same && reader->count("TASK") == 5'000;  // again, from the callback
        });
        if (!same || i != expected.size() ||
            reader->rows<TensorRow>({.with_data = true}).size() != sample.tensors.size())
          ++mismatches;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);

  std::int64_t seen_from_other_thread = -1;
  bool first = true;
  reader->for_each([&](const TaskRow&) {
    if (!std::exchange(first, false)) return;
    std::thread other([&] { seen_from_other_thread = static_cast<std::int64_t>(reader->rows<TaskRow>().size()); });
    other.join();
  });
  EXPECT_EQ(seen_from_other_thread, 5'000);
}

TEST_F(TraceReaderTest, StartRangeOfNoTasks) {
  write_trace(path(), 0);
  EXPECT_EQ(TraceReader::open(path())->task_start_range(), (std::pair<std::int64_t, std::int64_t>{0, -1}));
}

TEST_F(TraceReaderTest, CountKnowsOnlyTraceTables) {
  write_trace(path(), 4);
  const auto reader = TraceReader::open(path());
  EXPECT_EQ(reader->count("TASK"), 4);
  EXPECT_EQ(reader->count("META") >= 4, true);
  expect_trace_error([&] { reader->count("sqlite_master"); }, "no table 'sqlite_master'");
  expect_trace_error([&] { reader->count("TASK; DROP TABLE TASK"); }, "tables: META, STRING_IDS");
}

TEST_F(TraceReaderTest, TaskSummaryMatchesTheRows) {
  write_trace(path(), 40);
  for (bool verify : {true, false}) {
    const auto reader = TraceReader::open(path(), {.verify = verify});
    TaskSummary want;
    want.first_start_ns = INT64_MAX;
    reader->for_each([&](const TaskRow& t) {
      ++want.tasks;
      want.overflows += t.overflow;
      want.first_start_ns = std::min(want.first_start_ns, t.start_ns);
      want.last_end_ns = std::max(want.last_end_ns, t.end_ns);
    });
    const TaskSummary got = reader->task_summary();
    EXPECT_EQ(got.tasks, 40);
    EXPECT_EQ(got.overflows, want.overflows);
    EXPECT_GT(got.overflows, 0);
    EXPECT_EQ(got.first_start_ns, want.first_start_ns);
    EXPECT_EQ(got.last_end_ns, want.last_end_ns);
  }
}

TEST_F(TraceReaderTest, StreamsComeInStartOrderWithTiesInWriteOrder) {
  auto writer = TraceWriter::create(path());
  std::vector<TaskRow> rows;
  for (std::int64_t start : {30, 10, 20, 10, 40}) {
    TaskRow t;
    t.task_id = static_cast<std::int64_t>(rows.size());
    t.start_ns = start;
    rows.push_back(t);
  }
  writer->add(rows);
  const std::vector<MemoryRow> memory = {{.ts_ns = 9}, {.ts_ns = 3}, {.ts_ns = 5}};
  writer->add(memory);
  writer->add(TensorRow{.task_id = 2, .role = 1, .idx = 0, .numel = 1});
  writer->add(TensorRow{.task_id = 2, .role = 0, .idx = 1, .numel = 1});
  writer->add(TensorRow{.task_id = 1, .role = 1, .idx = 0, .numel = 1});
  writer->add(TensorRow{.task_id = 2, .role = 0, .idx = 0, .numel = 1});
  writer->finalize();

  const auto reader = TraceReader::open(path());
  std::vector<std::int64_t> ids;
  reader->for_each([&](const TaskRow& t) { ids.push_back(t.task_id); });
  EXPECT_EQ(ids, (std::vector<std::int64_t>{1, 3, 2, 0, 4}));
  std::vector<std::int64_t> ts;
  for (const MemoryRow& m : reader->rows<MemoryRow>()) ts.push_back(m.ts_ns);
  EXPECT_EQ(ts, (std::vector<std::int64_t>{3, 5, 9}));
  std::vector<std::tuple<std::int64_t, int, int>> keys;
  for (const TensorRow& t : reader->rows<TensorRow>()) keys.emplace_back(t.task_id, t.role, t.idx);
  EXPECT_EQ(keys, (std::vector<std::tuple<std::int64_t, int, int>>{{1, 1, 0}, {2, 0, 0}, {2, 0, 1}, {2, 1, 0}}));
}

TEST_F(TraceReaderTest, TensorDataThatDoesNotDecompressIsReported) {
  auto writer = TraceWriter::create(path());
  std::vector<std::uint8_t> raw(1000);
  for (std::size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<std::uint8_t>(i * 7919 % 251);
  std::vector<std::uint8_t> cut = zstd_compress(raw);
  cut.resize(cut.size() - 8);  // the frame's end is missing
  constexpr int kU8 = 4;
  writer->add(TensorRow{.task_id = 7,
                        .role = 1,
                        .idx = 2,
                        .dtype = kU8,
                        .shape = "1000",
                        .numel = 1000,
                        .data = cut,
                        .data_bytes = 1000});
  writer->finalize();
  const auto reader = TraceReader::open(path());
  EXPECT_EQ(reader->rows<TensorRow>().at(0).data_bytes, 1000);  // statistics still readable
  expect_trace_error([&] { reader->rows<TensorRow>({.with_data = true}); },
                     "bad TENSOR row (task 7, output 2): data is corrupt");
}

// Note [Checked tensor rows]: a TENSOR row whose columns do not add up is a TraceError naming the
// trace, the table, the row (task, op, role, index) and the problem, however it is read, before any
// tool sizes a buffer or a loop by it. Each damage below was found by editing traces with SQL: they
// crashed `compare` or took `export --npy` to gigabytes before the check.
TEST_F(TraceReaderTest, EveryTensorRowIsCheckedBeforeUse) {
  {
    auto writer = TraceWriter::create(path("good.db"));
    const TaskRow task = make_task(6, writer->intern("layer0/mm"), writer->intern("MatMul"));  // task 7
    writer->add(std::span(&task, 1));
    std::vector<std::uint8_t> raw(1000);
    for (std::size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<std::uint8_t>(i % 13);
    constexpr int kF32 = 0;
    writer->add(TensorRow{.task_id = 7,
                          .role = 1,
                          .idx = 0,
                          .dtype = kF32,
                          .shape = "10,25",
                          .numel = 250,
                          .data = zstd_compress(raw),
                          .data_bytes = 1000});
    writer->add(TensorRow{.task_id = 7, .role = 0, .idx = 0, .dtype = kF32, .shape = "", .numel = 1});  // stats only
    // A rank-9 tensor: the hook records its first 8 dims (hooks::kMaxDims), numel is whole.
    writer->add(TensorRow{.task_id = 7, .role = 0, .idx = 1, .dtype = kF32, .shape = "1,1,1,1,1,1,2,3", .numel = 24});
    writer->finalize();
  }
  ASSERT_EQ(TraceReader::open(path("good.db"))->rows<TensorRow>({.with_data = true}).at(2).data.size(), 1000u);

  const std::string row = "bad TENSOR row (task 7, op 'layer0/mm', output 0): ";
  const std::string out0 = " WHERE role = 1";
  for (const auto& [damage, problem] : std::vector<std::pair<std::string, std::string>>{
           {"UPDATE TENSOR SET numel = numel * 100000" + out0,
            "numel 25000000 does not match shape '10,25' (250 elements)"},
           {"UPDATE TENSOR SET dtype = 8" + out0, "data_bytes 1000 is not numel 250 x 8 bytes of f64"},
           {"UPDATE TENSOR SET dtype = 6" + out0, "data_bytes 1000 is not numel 250 x 8 bytes of i64"},
           {"UPDATE TENSOR SET data_bytes = 5000000000" + out0, "data_bytes 5000000000 is not numel 250 x 4 bytes"},
           {"UPDATE TENSOR SET data_bytes = 1099511627776" + out0, "data_bytes 1099511627776 is not numel 250"},
           {"UPDATE TENSOR SET data_bytes = -4" + out0, "data_bytes -4 is negative"},
           {"UPDATE TENSOR SET numel = -1, shape = '0'" + out0, "numel -1 is negative"},
           {"UPDATE TENSOR SET shape = 'abc'" + out0, "shape 'abc' is not comma-separated dims"},
           {"UPDATE TENSOR SET shape = '-10,-25'" + out0, "shape '-10,-25' is not comma-separated dims"},
           {"UPDATE TENSOR SET shape = '4294967296,4294967296,2'" + out0,
            "shape '4294967296,4294967296,2' is not comma-separated dims (\"2,3,4\") with a product that fits int64"},
           {"UPDATE TENSOR SET shape = '10,,25'" + out0, "shape '10,,25' is not"},
           {"UPDATE TENSOR SET shape = '1,1,1,1,1,1,1,3,5'" + out0, "numel 250 does not match shape"},
       }) {
    std::filesystem::copy_file(path("good.db"), path("bad.db"), std::filesystem::copy_options::overwrite_existing);
    sql_exec(path("bad.db"), damage);
    const auto reader = TraceReader::open(path("bad.db"));
    expect_trace_error([&] { reader->rows<TensorRow>(); }, row + problem);
    expect_trace_error([&] { reader->rows<TensorRow>({.with_data = true}); }, row + problem);
    expect_trace_error([&] { reader->for_each([](TensorRow&) {}, {.task_id = 7, .with_data = true}); }, problem);
  }
  // The role and index name the row by what they hold.
  const std::string path_bad = path("bad.db");
  for (const auto& [damage, problem] : std::vector<std::pair<std::string, std::string>>{
           {"UPDATE TENSOR SET role = 7" + out0,
            "(task 7, op 'layer0/mm', role 7 0): role 7 is neither input (0) nor output (1)"},
           {"UPDATE TENSOR SET idx = -3" + out0, "(task 7, op 'layer0/mm', output -3): idx -3 is outside 0..65535"},
           {"UPDATE TENSOR SET idx = 65536" + out0, "(task 7, op 'layer0/mm', output 65536): idx 65536 is outside"},
       }) {
    std::filesystem::copy_file(path("good.db"), path_bad, std::filesystem::copy_options::overwrite_existing);
    sql_exec(path_bad, damage);
    expect_trace_error([&] { TraceReader::open(path_bad)->rows<TensorRow>(); },
                       path_bad + ": bad TENSOR row " + problem);
  }
  // Consistent columns, but the data says otherwise: found when the data is read.
  for (const auto& [damage, problem] : std::vector<std::pair<std::string, std::string>>{
           {"UPDATE TENSOR SET shape = '500', numel = 500, data_bytes = 2000" + out0,
            "data is corrupt: its zstd frame holds 1000 bytes, data_bytes says 2000"},
           {"UPDATE TENSOR SET data = x''" + out0, "data_bytes is 1000 but the row holds no data"},
           {"UPDATE TENSOR SET data = x'00112233445566778899'" + out0, "data is corrupt (not a zstd frame)"},
       }) {
    std::filesystem::copy_file(path("good.db"), path_bad, std::filesystem::copy_options::overwrite_existing);
    sql_exec(path_bad, damage);
    const auto reader = TraceReader::open(path_bad);
    EXPECT_EQ(reader->rows<TensorRow>().size(), 3u);
    expect_trace_error([&] { reader->rows<TensorRow>({.with_data = true}); }, row + problem);
  }
}

// Leaving a TENSOR column out leaves its checks out (it reads as 0).
TEST_F(TraceReaderTest, SkippedTensorColumnsAreNotChecked) {
  {
    auto writer = TraceWriter::create(path());
    writer->add(TensorRow{.task_id = 7, .role = 1, .idx = 0, .shape = "2,3", .numel = 6});
    writer->finalize();
  }
  EXPECT_EQ(TraceReader::open(path(), {.skip_columns = {"TENSOR.numel"}})->rows<TensorRow>().at(0).shape, "2,3");
  EXPECT_EQ(TraceReader::open(path(), {.skip_columns = {"TENSOR.shape"}})->rows<TensorRow>().at(0).numel, 6);
}

TEST_F(TraceReaderTest, ReadsAnIncompleteTraceWhileItIsWritten) {
  auto writer = TraceWriter::create(path());
  const TaskRow row = make_task(0, writer->intern("op"), 0);
  writer->add(std::span(&row, 1));
  writer->commit();
  const auto reader = TraceReader::open(path());
  EXPECT_FALSE(reader->complete());
  ASSERT_EQ(reader->rows<TaskRow>().size(), 1u);
  EXPECT_EQ(reader->string(reader->rows<TaskRow>()[0].name_id), "op");
  writer->finalize();  // a reader holding the file open does not stop finalize
  EXPECT_TRUE(TraceReader::open(path())->complete());
}

}  // namespace

// Schema 9 added the custom kernels' detail. The rows come back as written (blocks and findings by
// task and block, one task's instructions by block, pipe and start); a schema 8 trace has none and
// reads as empty.
TEST_F(TraceReaderTest, KernelDetailRoundTripsAndSchema8TracesHaveNone) {
  {
    auto writer = TraceWriter::create(path());
    const StringId add = writer->intern("Add"), file = writer->intern("k.cpp"), msg = writer->intern("bad");
    KernelBlockRow b1{.task_id = 7, .block = 1, .core = 1, .start_ns = 100, .end_ns = 200, .cycles = 180};
    b1.busy(npuscope::Pipe::kMte2) = 40;
    b1.busy(npuscope::Pipe::kFix) = 3;
    KernelBlockRow b0 = b1;
    b0.block = 0;
    b0.core = 0;
    writer->add(std::vector{b1, b0});
    writer->add(std::vector<PipeInstructionRow>{
        {.task_id = 7, .block = 0, .pipe = 1, .start_cycle = 9, .end_cycle = 12, .name_id = add, .line = 4},
        {.task_id = 8, .block = 0, .pipe = 4, .start_cycle = 0, .end_cycle = 5, .name_id = add},
        {.task_id = 7, .block = 0, .pipe = 1, .start_cycle = 2, .end_cycle = 6, .name_id = add, .file_id = file}});
    writer->add(std::vector<KernelFindingRow>{
        {.task_id = 7, .check_kind = 6, .block = -1, .kernel_id = add, .file_id = file, .line = 9, .message_id = msg}});
    writer->finalize();
  }
  {
    const auto reader = TraceReader::open(path());
    const std::vector<KernelBlockRow> blocks = reader->rows<KernelBlockRow>();
    ASSERT_EQ(blocks.size(), 2u);
    EXPECT_EQ(blocks[0].block, 0);
    EXPECT_EQ(blocks[1].busy(npuscope::Pipe::kMte2), 40);
    EXPECT_EQ(blocks[1].fixp_cycles, 3);
    const std::vector<PipeInstructionRow> ins = reader->rows<PipeInstructionRow>({.task_id = 7});
    ASSERT_EQ(ins.size(), 2u);
    EXPECT_EQ(ins[0].start_cycle, 2);
    EXPECT_EQ(reader->string(ins[0].file_id), "k.cpp");
    EXPECT_EQ(ins[1].line, 4);
    const std::vector<KernelFindingRow> findings = reader->rows<KernelFindingRow>();
    ASSERT_EQ(findings.size(), 1u);
    EXPECT_EQ(findings[0].block, -1);
    EXPECT_EQ(reader->string(findings[0].message_id), "bad");
  }
  sql_exec(path(),
           "DROP TABLE KERNEL_BLOCK; DROP TABLE PIPE_INSTRUCTION; DROP TABLE KERNEL_FINDING; "
           "UPDATE META SET value = '8' WHERE key = 'schema_version'");
  const auto old = TraceReader::open(path());
  EXPECT_EQ(old->schema_version(), 8);
  EXPECT_TRUE(old->rows<KernelBlockRow>().empty());
  EXPECT_TRUE(old->rows<KernelFindingRow>().empty());
  EXPECT_TRUE(old->rows<PipeInstructionRow>({.task_id = 7}).empty());
  EXPECT_EQ(old->count("PIPE_INSTRUCTION"), 0);
}

TEST_F(TraceReaderTest, CommunicationRoundTripsAndSchema9TracesHaveNone) {
  {
    auto writer = TraceWriter::create(path());
    writer->set_meta(kMetaRank, "3");
    writer->add(std::vector<CommunicatorRow>{{.communicator_id = 1,
                                              .name_id = writer->intern("hccl_world_group"),
                                              .rank = 3,
                                              .size = 4,
                                              .members_id = writer->intern("0,1,2,3"),
                                              .nodes_id = writer->intern("0,0,1,1")}});
    writer->add(std::vector<CommunicationRow>{{.task_id = 9,
                                               .communicator_id = 1,
                                               .sequence = 1,
                                               .kind = 0,
                                               .bytes = 4096,
                                               .last_rank = 0,
                                               .arrival_ns = 500,
                                               .start_ns = 900,
                                               .end_ns = 1500},
                                              {.task_id = 5,
                                               .communicator_id = 1,
                                               .sequence = 0,
                                               .kind = 3,
                                               .bytes = 64,
                                               .root_or_peer = 0,
                                               .arrival_ns = 100,
                                               .start_ns = 100,
                                               .end_ns = 300}});
    writer->add(std::vector<CommunicationLinkRow>{
        {.task_id = 9, .peer_rank = 0, .transport = 3, .bytes = 2048, .time_ns = 600},
        {.task_id = 9, .peer_rank = 2, .transport = 1, .bytes = 1024, .time_ns = 300}});
    writer->finalize();
  }
  {
    const auto reader = TraceReader::open(path());
    EXPECT_EQ(reader->meta(std::string(kMetaRank)), "3");
    const auto comms = reader->rows<CommunicatorRow>();
    ASSERT_EQ(comms.size(), 1u);
    EXPECT_EQ(reader->string(comms[0].members_id), "0,1,2,3");
    EXPECT_EQ(reader->string(comms[0].nodes_id), "0,0,1,1");
    const auto calls = reader->rows<CommunicationRow>();
    ASSERT_EQ(calls.size(), 2u);
    EXPECT_EQ(calls[0].task_id, 5);  // by start
    EXPECT_EQ(calls[0].root_or_peer, 0);
    EXPECT_EQ(calls[1].start_ns - calls[1].arrival_ns, 400);
    const auto links = reader->rows<CommunicationLinkRow>();
    ASSERT_EQ(links.size(), 2u);
    EXPECT_EQ(links[0].peer_rank, 0);
    EXPECT_EQ(links[1].bytes, 1024);
  }
  sql_exec(path(),
           "DROP TABLE COMMUNICATOR; DROP TABLE COMMUNICATION; DROP TABLE COMMUNICATION_LINK; "
           "UPDATE META SET value = '9' WHERE key = 'schema_version'");
  const auto old = TraceReader::open(path());
  EXPECT_EQ(old->schema_version(), 9);
  EXPECT_TRUE(old->rows<CommunicatorRow>().empty());
  EXPECT_TRUE(old->rows<CommunicationRow>().empty());
  EXPECT_EQ(old->count("COMMUNICATION_LINK"), 0);
}

// Schema 11 added TASK.underflow and TASK.subnormal (Note [Underflow counts]): they round trip
// through TASK_EXEC and the TASK view; a schema 10 trace (and a schema 5 one, whose TASK_EXEC the
// reader shadows already) reads them as 0, "not counted", and the rest of the row as written.
TEST_F(TraceReaderTest, UnderflowCountsRoundTripAndSchema10TracesReadThemAsZero) {
  std::vector<TaskRow> rows;
  {
    auto writer = TraceWriter::create(path());
    const StringId op = writer->intern("op");
    for (std::int64_t i = 0; i < 20; ++i) {
      TaskRow t = make_task(i, op, op);
      t.underflow = i % 3 == 0 ? 1000 * i : 0;
      t.subnormal = i % 5 == 0 ? i + 1 : 0;
      rows.push_back(t);
    }
    writer->add(rows);
    writer->finalize();
  }
  expect_rows_eq(rows, TraceReader::open(path())->rows<TaskRow>());
  EXPECT_EQ(sql_text(path(), "SELECT underflow FROM TASK WHERE task_id = 4"), "3000");
  EXPECT_EQ(sql_text(path(), "SELECT sum(subnormal) FROM TASK"), "34");  // i = 0, 5, 10, 15: i + 1
  for (TaskRow& t : rows) t.underflow = t.subnormal = 0;
  sql_exec(path(),
           "DROP VIEW TASK; ALTER TABLE TASK_EXEC DROP COLUMN underflow; ALTER TABLE TASK_EXEC DROP COLUMN "
           "subnormal; UPDATE META SET value = '10' WHERE key = 'schema_version'");
  const auto old = TraceReader::open(path());
  EXPECT_EQ(old->schema_version(), 10);
  expect_rows_eq(rows, old->rows<TaskRow>());
  sql_exec(path(),
           "ALTER TABLE TASK_EXEC DROP COLUMN pytorch_api_id; UPDATE META SET value = '5' WHERE key = "
           "'schema_version'");
  expect_rows_eq(rows, TraceReader::open(path())->rows<TaskRow>());
}

// A window of task ids (RowQuery::task_ids): the rows of every task in [from, to), in table order;
// a table without task ids refuses it.
TEST_F(TraceReaderTest, RowsOfAWindowOfTaskIds) {
  {
    auto writer = TraceWriter::create(path());
    const StringId m = writer->intern("aic_mac_ratio");
    std::vector<TaskPmuRow> pmu;
    for (const std::int64_t id : {7, 3, 5, 9, 5, 4}) pmu.push_back({.task_id = id, .name_id = m, .value = double(id)});
    writer->add(pmu);
    writer->finalize();
  }
  const auto reader = TraceReader::open(path());
  std::vector<std::int64_t> ids;
  reader->for_each([&](const TaskPmuRow& r) { ids.push_back(r.task_id); }, {.task_ids = std::pair{4, 9}});
  EXPECT_EQ(ids, (std::vector<std::int64_t>{4, 5, 5, 7}));
  EXPECT_TRUE(reader->rows<TaskPmuRow>({.task_ids = std::pair{10, 20}}).empty());
  EXPECT_THROW(reader->rows<CounterRow>({.task_ids = std::pair{0, 1}}), TraceError);
}

// TraceWriter: every table round-trips through the reader; durability (commit interval, a writer
// killed with SIGKILL), the complete/incomplete status, overwriting, and misuse.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "trace_test_util.h"

using namespace npuscope::collector;
using namespace npuscope::collector::testing;
using namespace std::chrono_literals;

namespace {

class TraceWriterTest : public TraceTest {};

TEST_F(TraceWriterTest, EveryTableRoundTrips) {
  auto writer = TraceWriter::create(path());
  const Sample s = write_all(*writer, 3000);
  writer->set_stat("dropped_records", 7);
  writer->set_stat("dropped_records", 9);  // later values replace
  writer->set_meta("command", "python train.py");
  EXPECT_EQ(writer->rows_written(), 2 + 3000 + 2 + 3 + 2 + 2 + 3);
  writer->finalize();

  const auto reader = TraceReader::open(path());
  EXPECT_TRUE(reader->complete());
  EXPECT_EQ(reader->schema_version(), kSchemaVersion);
  EXPECT_EQ(reader->meta("command"), "python train.py");
  EXPECT_TRUE(reader->meta("created_at").has_value());
  EXPECT_TRUE(reader->meta("finalized_at").has_value());
  ASSERT_EQ(reader->stats().size(), 1u);
  EXPECT_EQ(reader->stats()[0].name, "dropped_records");
  EXPECT_EQ(reader->stats()[0].value, 9);

  expect_sample_read_back(s, *reader);

  EXPECT_EQ(reader->string(reader->rows<TaskRow>()[0].name_id), "layer0/Add");
  EXPECT_EQ(reader->string(reader->rows<ApiRow>()[0].name_id), "aclnnAdd");
  EXPECT_EQ(reader->string(0), "");
  EXPECT_EQ(reader->string(12345), "");
  EXPECT_EQ(reader->count("TASK"), 3000);
  EXPECT_EQ(reader->count("STRING_IDS"), 7);
}

TEST_F(TraceWriterTest, InternDeduplicatesByContent) {
  auto writer = TraceWriter::create(path());
  const std::string a = "MatMul";
  EXPECT_EQ(writer->intern(a), 1);
  EXPECT_EQ(writer->intern("Add"), 2);
  EXPECT_EQ(writer->intern(std::string("Mat") + "Mul"), 1);  // same content, other storage
  EXPECT_EQ(writer->intern(""), 0);
  writer->finalize();
  const auto reader = TraceReader::open(path());
  EXPECT_EQ(reader->count("STRING_IDS"), 2);
  EXPECT_EQ(reader->string(1), "MatMul");
  EXPECT_EQ(reader->string(2), "Add");
}

// The writers' clock in these tests (WriterOptions::clock): it moves only when a test moves it.
std::chrono::steady_clock::time_point g_now{};
std::chrono::steady_clock::time_point test_clock() { return g_now; }

TEST_F(TraceWriterTest, RowsBecomeVisibleAfterTheCommitInterval) {
  auto writer = TraceWriter::create(path(), {.commit_interval = 300ms, .clock = test_clock});
  const StringId name = writer->intern("op");
  std::vector<TaskRow> rows;
  for (int i = 0; i < 100; ++i) rows.push_back(make_task(i, name, name));
  writer->add(rows);
  g_now += 299ms;
  writer->add(std::span(rows).first(1));
  EXPECT_EQ(TraceReader::open(path())->count("TASK"), 0);  // not committed yet: the interval has not passed
  g_now += 1ms;
  writer->add(std::span(rows).first(1));  // the interval is checked on each add
  const auto reader = TraceReader::open(path());
  EXPECT_EQ(reader->count("TASK"), 102);
  EXPECT_EQ(reader->string(name), "op");  // strings are committed with the rows naming them
  EXPECT_FALSE(reader->complete());
  EXPECT_EQ(reader->meta("status"), "incomplete");
}

TEST_F(TraceWriterTest, CommitMakesRowsVisibleNow) {
  auto writer = TraceWriter::create(path(), {.commit_interval = std::chrono::hours(1)});
  const TaskRow row = make_task(0, writer->intern("op"), 0);
  writer->add(std::span(&row, 1));
  EXPECT_EQ(TraceReader::open(path())->count("TASK"), 0);
  writer->commit();
  EXPECT_EQ(TraceReader::open(path())->count("TASK"), 1);
}

TEST_F(TraceWriterTest, IncompleteUntilFinalizedThenIndexedAndOneFile) {
  const std::string has_index = "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'MEMCPY_start_ns'";
  auto writer = TraceWriter::create(path());
  EXPECT_FALSE(TraceReader::open(path())->complete());
  EXPECT_EQ(sql_text(path(), has_index), "0");
  writer->finalize();
  writer->finalize();  // a second finalize does nothing
  EXPECT_TRUE(TraceReader::open(path())->complete());
  EXPECT_EQ(sql_text(path(), has_index), "1");
  EXPECT_EQ(sql_text(path(), "PRAGMA journal_mode"), "delete");
  EXPECT_FALSE(std::filesystem::exists(path() + "-wal"));
  // Streaming tasks, API calls and memory operations in their order reads the clustered table in key
  // order (Note [Clustered tables]), not a sort; other tables use their index.
  const auto plan = [&](const schema::TableInfo& table) {
    return sql_text(path(), "EXPLAIN QUERY PLAN " + schema::select_sql(table, false), 3);
  };
  for (const schema::TableInfo* table : {&schema::table_for<schema::TaskExecRow>().info,
                                         &schema::table_for<ApiRow>().info, &schema::table_for<MemoryRow>().info}) {
    EXPECT_EQ(plan(*table), "SCAN " + std::string(table->name)) << table->name;
  }
  EXPECT_NE(plan(schema::table_for<MemcpyRow>().info).find("MEMCPY_start_ns"), std::string::npos);
}

TEST_F(TraceWriterTest, DestroyedWithoutFinalizeKeepsRowsAndStaysIncomplete) {
  {
    auto writer = TraceWriter::create(path(), {.commit_interval = std::chrono::hours(1)});
    write_all(*writer, 10);
  }
  const auto reader = TraceReader::open(path());
  EXPECT_FALSE(reader->complete());
  EXPECT_EQ(reader->count("TASK"), 10);
  EXPECT_EQ(reader->count("TENSOR"), 3);
}

TEST_F(TraceWriterTest, OverwriteIsRefusedUnlessAsked) {
  TraceWriter::create(path())->finalize();
  expect_trace_error([&] { TraceWriter::create(path()); }, "already exists");
  {
    auto writer = TraceWriter::create(path(), {.overwrite = true});
    write_all(*writer, 5);
    writer->finalize();
  }
  auto writer = TraceWriter::create(path(), {.overwrite = true});
  writer->finalize();
  EXPECT_EQ(TraceReader::open(path())->count("TASK"), 0);  // the old rows are gone
}

TEST_F(TraceWriterTest, CreateFailsWithTheFileName) {
  const std::string missing = path("no/such/dir/trace.db");
  expect_trace_error([&] { TraceWriter::create(missing); }, "does not exist");
  expect_trace_error([&] { TraceWriter::create(dir_.string(), {.overwrite = true}); }, "is a directory");
}

TEST_F(TraceWriterTest, NothingCanBeAddedAfterFinalize) {
  auto writer = TraceWriter::create(path());
  writer->finalize();
  const TaskRow row{};
  expect_trace_error([&] { writer->add(std::span(&row, 1)); }, "finalized");
  expect_trace_error([&] { writer->set_stat("x", 1); }, "finalized");
  expect_trace_error([&] { writer->intern("new string"); }, "finalized");
}

// The child commits five batches of tasks (its clock moves one commit interval before each), then
// writes more that it never commits, tells the parent through `ready` and writes on until it is
// killed; what it leaves must be a valid, incomplete trace of exactly the committed batches.
[[noreturn]] void write_until_killed(const std::string& path, int ready) {
  try {
    auto writer = TraceWriter::create(path, {.commit_interval = 100ms, .clock = test_clock});
    const StringId op = writer->intern("op");
    std::vector<TaskRow> batch(100);
    for (std::int64_t i = 0;; i += 100) {
      if (i < 500) g_now += 100ms;
      for (std::int64_t j = 0; j < 100; ++j) batch[static_cast<std::size_t>(j)] = make_task(i + j, op, op);
      writer->add(batch);
      if (i == 600 && write(ready, "k", 1) != 1) _exit(4);
      if (i >= 600) pause();  // killed here, its last two batches not committed
    }
  } catch (...) {
    _exit(3);
  }
}

TEST_F(TraceWriterTest, KilledWriterLeavesAValidIncompleteTrace) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) write_until_killed(path(), ready[1]);
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1) << "the writer ended before it wrote its batches";
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the writer exited by itself, status " << WEXITSTATUS(status);
  close(ready[0]);
  close(ready[1]);

  ASSERT_TRUE(std::filesystem::exists(path() + "-wal"));  // killed mid-transaction, in WAL mode
  const auto reader = TraceReader::open(path());
  EXPECT_FALSE(reader->complete());
  EXPECT_EQ(reader->meta("status"), "incomplete");
  EXPECT_EQ(sql_text(path(), "PRAGMA integrity_check"), "ok");
  const std::int64_t count = reader->count("TASK");
  EXPECT_EQ(count, 500) << "the five committed batches, none of the two added after";
  std::int64_t seen = 0;
  reader->for_each([&](const TaskRow& t) {
    EXPECT_EQ(reader->string(t.name_id), "op");
    ++seen;
  });
  EXPECT_EQ(seen, count);
}

}  // namespace

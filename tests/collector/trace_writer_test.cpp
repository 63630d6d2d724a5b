// TraceWriter: every table round-trips through the reader; durability (commit interval, a writer
// killed with SIGKILL), the complete/incomplete status, overwriting, and misuse.
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "trace_test_util.h"

using namespace npuscope::collector;
using namespace npuscope::collector::testing;
using namespace std::chrono_literals;

namespace {

// Rows of every table, written by write_all() and expected back from the reader.
struct Sample {
  std::vector<DeviceInfoRow> devices;
  std::vector<ApiRow> apis;
  std::vector<TaskRow> tasks;
  std::vector<MemoryRow> memory;
  std::vector<MemcpyRow> memcpys;
  std::vector<MarkerRow> markers;
  std::vector<TensorRow> tensors;  // as written (data compressed)
  std::vector<std::uint8_t> raw;   // the uncompressed data of tensors[1]
};

Sample write_all(TraceWriter& w, std::int64_t task_count) {
  Sample s;
  const StringId matmul = w.intern("layer0/MatMul"), add = w.intern("layer0/Add");
  const StringId matmul_type = w.intern("MatMul"), add_type = w.intern("Add");
  s.devices.push_back({0, "ascend910b", 24, 48, 1.8e9, 3.54e14, 1.77e14, 1.6e12, 64ll << 30, "allow_mix_precision",
                       "inf_nan"});
  s.devices.push_back({1, "tiny", 2, 4, 1e9, 1e12, 5e11, 1e11, 1ll << 20, "must_keep_origin_dtype", "saturation"});
  for (std::int64_t i = 0; i < task_count; ++i) {
    s.tasks.push_back(make_task(i, i % 2 ? matmul : add, i % 2 ? matmul_type : add_type));
  }
  std::reverse(s.tasks.begin(), s.tasks.end());  // written out of start order: the reader sorts
  s.apis = {{500, 900, w.intern("aclnnMatMul"), 100, 0}, {100, 400, w.intern("aclnnAdd"), 101, 1}};
  s.memory = {{10, 0, 2, 1 << 20, 2 << 20, 0, 2 << 20, 0}, {20, 0, 0, 1 << 20, 4096, 4096, 2 << 20, 0},
              {30, 0, 1, 1 << 20, 4096, 0, 2 << 20, 1}};
  s.memcpys = {{7, 300, 800, 250, 0, 1, 1 << 16, 1, 102}, {8, 900, 950, 880, 0, 1, 64, 2, 103}};
  s.markers = {{50, 5000, w.intern("forward"), 0, 0, -1}, {40, 6000, 0, 0, 1, 3}};
  for (int i = 0; i < 4096; ++i) s.raw.push_back(static_cast<std::uint8_t>(i * 7));
  TensorRow stats_only{5, 1, 0, 1, "2,3", 6, -1.5, 2.5, 0.25, 3.0, 0, 1, {}, 0};
  TensorRow dumped{3, 0, 1, 0, "1024", 1024, -1, 1, 0, 10, 2, 0, zstd_compress(s.raw), 4096};
  TensorRow first{3, 0, 0, 5, "", 1, 4, 4, 4, 4, 0, 0, {}, 0};
  s.tensors = {first, dumped, stats_only};

  w.add_device(s.devices[0]);
  w.add_device(s.devices[1]);
  // Small spans are batched, big ones go straight in: exercise both.
  const std::span<const TaskRow> tasks(s.tasks);
  const std::size_t head = std::min<std::size_t>(tasks.size(), 10);
  for (std::size_t i = 0; i < head; ++i) w.add_tasks(tasks.subspan(i, 1));
  w.add_tasks(tasks.subspan(head));
  w.add_apis(s.apis);
  w.add_memory(s.memory);
  w.add_memcpys(s.memcpys);
  w.add_markers(s.markers);
  w.add_tensor(stats_only);
  w.add_tensor(dumped);
  w.add_tensor(first);
  return s;
}

template <class Row, class Key>
std::vector<Row> sorted(std::vector<Row> rows, Key key) {
  std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) { return key(a) < key(b); });
  return rows;
}

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

  expect_rows_eq(s.devices, reader->devices());
  expect_rows_eq(sorted(s.tasks, [](const TaskRow& t) { return t.start_ns; }), reader->tasks());
  expect_rows_eq(sorted(s.apis, [](const ApiRow& r) { return r.start_ns; }), reader->apis());
  expect_rows_eq(s.memory, reader->memory());
  expect_rows_eq(s.memcpys, reader->memcpys());
  expect_rows_eq(sorted(s.markers, [](const MarkerRow& r) { return r.start_ns; }), reader->markers());
  // Without data: the blob is left out, data_bytes still says what was dumped.
  std::vector<TensorRow> expected = s.tensors;  // already in (task, role, idx) order
  expected[1].data.clear();
  expect_rows_eq(expected, reader->tensors(false));
  expected[1].data = s.raw;  // with data: decompressed
  expect_rows_eq(expected, reader->tensors(true));

  EXPECT_EQ(reader->string(reader->tasks()[0].name_id), "layer0/Add");
  EXPECT_EQ(reader->string(reader->apis()[0].name_id), "aclnnAdd");
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

TEST_F(TraceWriterTest, RowsBecomeVisibleAfterTheCommitInterval) {
  auto writer = TraceWriter::create(path(), {.commit_interval = 300ms});
  const StringId name = writer->intern("op");
  std::vector<TaskRow> rows;
  for (int i = 0; i < 100; ++i) rows.push_back(make_task(i, name, name));
  writer->add_tasks(rows);
  EXPECT_EQ(TraceReader::open(path())->count("TASK"), 0);  // not committed yet
  std::this_thread::sleep_for(400ms);
  writer->add_tasks(std::span(rows).first(1));  // the interval is checked on each add
  const auto reader = TraceReader::open(path());
  EXPECT_EQ(reader->count("TASK"), 101);
  EXPECT_EQ(reader->string(name), "op");  // strings are committed with the rows naming them
  EXPECT_FALSE(reader->complete());
  EXPECT_EQ(reader->meta("status"), "incomplete");
}

TEST_F(TraceWriterTest, CommitMakesRowsVisibleNow) {
  auto writer = TraceWriter::create(path(), {.commit_interval = std::chrono::hours(1)});
  const TaskRow row = make_task(0, writer->intern("op"), 0);
  writer->add_tasks(std::span(&row, 1));
  EXPECT_EQ(TraceReader::open(path())->count("TASK"), 0);
  writer->commit();
  EXPECT_EQ(TraceReader::open(path())->count("TASK"), 1);
}

TEST_F(TraceWriterTest, IncompleteUntilFinalizedThenIndexedAndOneFile) {
  const std::string has_index = "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'TASK_start_ns'";
  auto writer = TraceWriter::create(path());
  EXPECT_FALSE(TraceReader::open(path())->complete());
  EXPECT_EQ(sql_text(path(), has_index), "0");
  writer->finalize();
  writer->finalize();  // a second finalize does nothing
  EXPECT_TRUE(TraceReader::open(path())->complete());
  EXPECT_EQ(sql_text(path(), has_index), "1");
  EXPECT_EQ(sql_text(path(), "PRAGMA journal_mode"), "delete");
  EXPECT_FALSE(std::filesystem::exists(path() + "-wal"));
  // Streaming tasks in start order uses the index, not a sort.
  EXPECT_NE(sql_text(path(), "EXPLAIN QUERY PLAN " + schema::select_sql(schema::table_for<TaskRow>().info, false), 3)
                .find("TASK_start_ns"),
            std::string::npos);
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
  expect_trace_error([&] { writer->add_tasks(std::span(&row, 1)); }, "finalized");
  expect_trace_error([&] { writer->set_stat("x", 1); }, "finalized");
  expect_trace_error([&] { writer->intern("new string"); }, "finalized");
}

// The child writes tasks until it is killed; what it leaves must be a valid, incomplete trace.
[[noreturn]] void write_until_killed(const std::string& path) {
  try {
    auto writer = TraceWriter::create(path, {.commit_interval = 100ms});
    const StringId op = writer->intern("op");
    std::vector<TaskRow> batch(100);
    for (std::int64_t i = 0;; i += 100) {
      for (std::int64_t j = 0; j < 100; ++j) batch[static_cast<std::size_t>(j)] = make_task(i + j, op, op);
      writer->add_tasks(batch);
      std::this_thread::sleep_for(1ms);  // a workload's pace, and a trace small enough to check quickly
    }
  } catch (...) {
    _exit(3);
  }
}

TEST_F(TraceWriterTest, KilledWriterLeavesAValidIncompleteTrace) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) write_until_killed(path());
  std::this_thread::sleep_for(500ms);
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the writer exited by itself, status " << WEXITSTATUS(status);

  ASSERT_TRUE(std::filesystem::exists(path() + "-wal"));  // killed mid-transaction, in WAL mode
  const auto reader = TraceReader::open(path());
  EXPECT_FALSE(reader->complete());
  EXPECT_EQ(reader->meta("status"), "incomplete");
  EXPECT_EQ(sql_text(path(), "PRAGMA integrity_check"), "ok");
  const std::int64_t count = reader->count("TASK");
  EXPECT_GT(count, 0);
  EXPECT_EQ(count % 100, 0) << "commits happen between adds, never inside one";
  std::int64_t seen = 0;
  reader->for_each_task([&](const TaskRow& t) {
    EXPECT_EQ(reader->string(t.name_id), "op");
    ++seen;
  });
  EXPECT_EQ(seen, count);
}

}  // namespace

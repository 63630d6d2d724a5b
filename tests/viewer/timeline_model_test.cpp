// The timeline model of a small trace written here: which lanes, which rows, in what order, with
// what flags; and its size per task.
#include <gtest/gtest.h>

#include "../collector/trace_test_util.h"
#include "npuscope/collector/compare_results.h"
#include "npuscope/viewer/timeline_model.h"

using namespace npuscope::collector;
using namespace npuscope::collector::testing;
using namespace npuscope::viewer;

namespace {

class TimelineModelTest : public TraceTest {
 protected:
  void write() {
    auto w = TraceWriter::create(path());
    const StringId matmul = w->intern("MatMul"), add = w->intern("Add"), launch = w->intern("aclnnMatMul"),
                   sync = w->intern("aclrtSynchronizeStream"), step = w->intern("step");
    std::vector<TaskRow> tasks;
    for (int i = 0; i < 6; ++i) {  // alternating streams 0 and 1 of npu:0; task 4 overflows
      TaskRow t;
      t.task_id = i + 1;
      t.start_ns = 1000 + i * 500;
      t.end_ns = t.start_ns + 800;  // overlaps the other stream's task, never its own stream's
      t.stream_id = i % 2;
      t.name_id = w->intern("op" + std::to_string(i));
      t.op_type_id = i % 2 ? add : matmul;
      t.connection_id = 100 + i;
      t.overflow = i == 3;
      tasks.push_back(t);
    }
    TaskRow cpu = tasks[0];  // the cpu backend, thread 2
    cpu.task_id = 7;
    cpu.device_id = -1;
    cpu.task_type = static_cast<std::int32_t>(TaskType::kHostCpu);
    cpu.thread_id = 2;
    cpu.start_ns = 9000;
    cpu.end_ns = 9500;
    tasks.push_back(cpu);
    w->add(tasks);
    // Thread 0: a synchronize around nothing, and two launches nested in an outer call.
    const std::vector<ApiRow> apis = {{900, 4000, sync, 0, 0},
                                      {950, 990, launch, 100, 0},
                                      {1200, 1300, launch, 102, 0},
                                      {5000, 5100, launch, 104, 0}};
    w->add(apis);
    const std::vector<MemcpyRow> copies = {{20, 500, 900, 400, 0, 0, 64, 1, 0}, {21, 600, 700, 450, 0, 1, 64, 1, 0}};
    w->add(copies);
    const std::vector<MemoryRow> memory = {{100, 0, 0, 0x1000, 512, 512, 4096, 0},
                                           {8000, 0, 1, 0x1000, 512, 0, 4096, 0}};
    w->add(memory);
    const std::vector<MarkerRow> markers = {{800, 9000, step, 0, 1, 0}, {1000, 2000, step, 0, 0, -1}};
    w->add(markers);
    w->finalize();
    // A comparison: task 1 passed, task 3 failed and introduced the error.
    const auto results = CompareResultWriter::open(path(), false);
    std::vector<CompareResultRow> rows(2);
    rows[0].task_id = 1;
    rows[0].role = 1;
    rows[1].task_id = 3;
    rows[1].role = 1;
    rows[1].verdict = 1;
    rows[1].origin = 1;
    results->add(rows);
    results->commit();
  }
  const Lane& lane(const TimelineModel& m, const std::string& title) {
    for (const Lane& l : m.lanes()) {
      if (l.title == title) return l;
    }
    ADD_FAILURE() << "no lane " << title;
    return m.lanes().front();
  }
};

TEST_F(TimelineModelTest, LanesRowsAndFlags) {
  write();
  const auto trace = TraceReader::open(path());
  const TimelineModel m(*trace);
  std::vector<std::string> titles;
  for (const Lane& l : m.lanes()) titles.push_back(l.title);
  EXPECT_EQ(titles, (std::vector<std::string>{"npu:0 stream 0", "npu:0 stream 1", "cpu thread 2", "npu:0 copies",
                                              "npu:0 memory", "thread 0", "thread 0 markers"}));
  EXPECT_EQ(m.tasks(), 7);
  const Lane& s0 = lane(m, "npu:0 stream 0");
  ASSERT_EQ(s0.rows.size(), 1u);
  ASSERT_EQ(s0.rows[0].size(), 3u);
  EXPECT_EQ(s0.rows[0][1].id, 3u);
  EXPECT_EQ(s0.rows[0][1].end_ns(), 2800);
  EXPECT_EQ(m.str(s0.rows[0][1].label_id), "op2");
  EXPECT_EQ(m.str(m.colour_key(s0, s0.rows[0][1])), "MatMul");
  EXPECT_EQ(m.colour_key(lane(m, "npu:0 copies"), lane(m, "npu:0 copies").rows[0][0]), 1) << "HtoD";
  EXPECT_TRUE(m.has_compare_results());
  EXPECT_EQ(s0.rows[0][0].flags, kVerdictPass);
  EXPECT_EQ(s0.rows[0][1].flags, kVerdictFail | kIntroduced);
  EXPECT_EQ(lane(m, "npu:0 stream 1").rows[0][1].flags, kOverflow) << "task 4";
  // The API calls nest: the synchronize on row 0, the launches inside it on row 1, the last on row 0.
  const Lane& host = lane(m, "thread 0");
  ASSERT_EQ(host.rows.size(), 2u);
  EXPECT_EQ(host.rows[0].size(), 2u);
  EXPECT_EQ(host.rows[1].size(), 2u);
  EXPECT_EQ(host.rows[1][1].id, 102u);
  // Overlapping copies on two streams take two rows; the memory lane has its samples.
  EXPECT_EQ(lane(m, "npu:0 copies").rows.size(), 2u);
  EXPECT_EQ(lane(m, "npu:0 memory").samples.size(), 2u);
  EXPECT_EQ(lane(m, "npu:0 memory").peak_reserved, 4096);
  const Lane& marks = lane(m, "thread 0 markers");
  ASSERT_EQ(marks.rows.size(), 2u);
  EXPECT_EQ(marks.rows[0][0].flags, kStep);
  EXPECT_EQ(m.first_ns(), 100);
  EXPECT_EQ(m.last_ns(), 9500);

  TimelineModel::Location where;
  ASSERT_TRUE(m.find_task(4, where));
  EXPECT_EQ(m.lanes()[where.lane].title, "npu:0 stream 1");
  EXPECT_EQ(where.index, 1u);
  ASSERT_TRUE(m.find_launch(102, where));
  EXPECT_EQ(m.lanes()[where.lane].title, "thread 0");
  EXPECT_EQ(where.row, 1u);
  EXPECT_FALSE(m.find_task(99, where));
  EXPECT_FALSE(m.find_launch(0, where));
}

TEST(TimelineItem, LongItemsCountMicroseconds) {
  const auto one_hour = TimelineItem::make(5, 5 + 3'600'000'000'000, 1, 7, kStep);
  EXPECT_EQ(one_hour.end_ns(), 5 + 3'600'000'000'000);
  EXPECT_TRUE(one_hour.flags & kStep);
  const auto odd = TimelineItem::make(0, 1'000'000'000'123, 1, 7, 0);  // rounded up to the microsecond
  EXPECT_EQ(odd.end_ns(), 1'000'000'001'000);
  EXPECT_EQ(TimelineItem::make(0, 10'000'000'000'000'000, 1, 7, 0).end_ns(), 4'294'967'295'000) << "cut at 71 minutes";
  EXPECT_EQ(TimelineItem::make(10, 5, 1, 7, 0).end_ns(), 10) << "an end before the start";
  EXPECT_TRUE(TimelineItem::make(0, 1, 1, (std::int64_t{1} << 32) + 9, 0).has_id((std::int64_t{1} << 32) + 9));
}

TEST_F(TimelineModelTest, AnEmptyTraceHasNoLanes) {
  TraceWriter::create(path())->finalize();
  const auto trace = TraceReader::open(path());
  const TimelineModel m(*trace);
  EXPECT_TRUE(m.lanes().empty());
  EXPECT_EQ(m.first_ns(), 0);
  EXPECT_EQ(m.last_ns(), 0);
  EXPECT_FALSE(m.has_compare_results());
}

TEST_F(TimelineModelTest, ATaskCostsAtMost48Bytes) {
  {
    auto w = TraceWriter::create(path());
    const StringId op = w->intern("op");
    std::vector<TaskRow> tasks;
    for (std::int64_t i = 0; i < 100'000; ++i) tasks.push_back(make_task(i, op, op));
    w->add(tasks);
    w->finalize();
  }
  const auto trace = TraceReader::open(path());
  const TimelineModel m(*trace);
  EXPECT_LE(static_cast<double>(m.memory_bytes()) / static_cast<double>(m.tasks()), 48.0);
}

// Note [Lanes sized up front]: every lane's first row is reserved for its whole table; a lane that
// got a few rows of it must give the reserve back, or a trace of many small streams would cost a big
// stream's memory for each.
TEST_F(TimelineModelTest, ASmallStreamBesideABigOneKeepsOnlyItsOwnRows) {
  {
    auto w = TraceWriter::create(path());
    const StringId op = w->intern("op");
    std::vector<TaskRow> tasks;
    for (std::int64_t i = 0; i < 200'000; ++i) {
      TaskRow t = make_task(i, op, op);
      t.device_id = 0;
      t.stream_id = i % 50'000 == 0 ? 1 : 0;  // stream 1: 4 tasks
      tasks.push_back(t);
    }
    w->add(tasks);
    w->finalize();
  }
  const auto trace = TraceReader::open(path());
  const TimelineModel m(*trace);
  ASSERT_EQ(m.lanes().size(), 2u);
  EXPECT_EQ(m.lanes()[0].rows[0].size(), 199'996u);
  EXPECT_EQ(m.lanes()[1].title, "npu:0 stream 1");
  ASSERT_EQ(m.lanes()[1].rows[0].size(), 4u);
  EXPECT_LT(m.lanes()[1].rows[0].capacity(), 64u) << "the small stream kept the whole table's reserve";
  EXPECT_LE(static_cast<double>(m.memory_bytes()) / static_cast<double>(m.tasks()), 48.0);
}

}  // namespace

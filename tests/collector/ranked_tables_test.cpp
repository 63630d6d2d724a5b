// Ranked tables (Note [Ranked tables] in collector/src/schema.h): a ranked writer stores TASK_EXEC,
// API_CALL and MEMORY_OP as rowid tables in time order, and everything the reader gives back (rows,
// their order, start-time ranges, the task summary) is what a clustered trace of the same rows gives.
#include <algorithm>
#include <random>

#include "trace_test_util.h"

using namespace npuscope::collector;
using namespace npuscope::collector::testing;

namespace {

class RankedTablesTest : public TraceTest {};

constexpr WriterOptions kRanked{.durable = false, .ranked = true};

// Random rows: start times drawn from a small range so that ties are common, written shuffled.
struct Shuffled {
  std::vector<TaskRow> tasks;
  std::vector<ApiRow> apis;
  std::vector<MemoryRow> memory;
};
Shuffled shuffled_rows(unsigned seed, int count) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::int64_t> time(0, count / 3 + 1);
  Shuffled s;
  for (int i = 0; i < count; ++i) {
    TaskRow t = make_task(i, 1, 2);
    t.start_ns = time(rng);
    t.end_ns = t.start_ns + 5;
    s.tasks.push_back(t);
    s.apis.push_back({time(rng), 0, 1, i, i % 3, 0, 0});
    s.memory.push_back({time(rng), 0, 0, i, 64, 0, 0, 0, time(rng) % 4});
  }
  std::shuffle(s.tasks.begin(), s.tasks.end(), rng);
  std::shuffle(s.apis.begin(), s.apis.end(), rng);
  return s;
}

// Rows as a drain brings them: in time order but for a few, some late by many rows.
Shuffled nearly_sorted_rows(unsigned seed, int count) {
  Shuffled s = shuffled_rows(seed, count);
  const auto by_start = [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; };
  std::stable_sort(s.tasks.begin(), s.tasks.end(), by_start);
  std::stable_sort(s.apis.begin(), s.apis.end(), by_start);
  std::stable_sort(s.memory.begin(), s.memory.end(), [](const MemoryRow& a, const MemoryRow& b) {
    return std::tie(a.ts_ns, a.seq) < std::tie(b.ts_ns, b.seq);
  });
  std::mt19937 rng(seed);
  for (int i = 0; i < 5; ++i) {
    const auto a = static_cast<std::size_t>(rng() % static_cast<unsigned>(count));
    const auto b = static_cast<std::size_t>(rng() % static_cast<unsigned>(count));
    std::swap(s.tasks[a], s.tasks[b]);
    std::swap(s.apis[b], s.apis[a / 2]);
    std::swap(s.memory[a], s.memory[(a + 1) % s.memory.size()]);
  }
  return s;
}

void write(const std::string& path, const WriterOptions& options, const Shuffled& s) {
  auto writer = TraceWriter::create(path, options);
  writer->intern("op");
  writer->intern("Op");
  // In pieces of varying size, as a spool's frames come.
  for (std::size_t at = 0, piece = 1; at < s.tasks.size(); at += piece, piece = piece * 3 % 2000 + 1) {
    const std::size_t n = std::min(piece, s.tasks.size() - at);
    writer->add(std::span(s.tasks).subspan(at, n));
    writer->add(std::span(s.apis).subspan(at, n));
    writer->add(std::span(s.memory).subspan(at, n));
  }
  writer->finalize();
}

template <class Row>
void expect_same_rows(const TraceReader& a, const TraceReader& b, const RowQuery& query = {}) {
  expect_rows_eq(a.rows<Row>(query), b.rows<Row>(query));
}

TEST_F(RankedTablesTest, EveryTableRoundTripsAndIsStoredInRankOrder) {
  Sample sample;
  {
    auto writer = TraceWriter::create(path(), kRanked);
    sample = write_all(*writer, 3000);  // tasks written in reverse start order
    writer->finalize();
  }
  const auto reader = TraceReader::open(path());
  EXPECT_TRUE(reader->complete());
  expect_sample_read_back(sample, *reader);
  EXPECT_EQ(reader->meta("ranked_tables"), "API_CALL,TASK_EXEC,MEMORY_OP");
  for (const char* table : {"TASK_EXEC", "API_CALL", "MEMORY_OP"}) {
    EXPECT_EQ(sql_text(path(), "SELECT count(*) FROM sqlite_master WHERE name = '" + std::string(table) +
                                   "' AND sql LIKE '%WITHOUT ROWID%'"),
              "0")
        << table;
  }
  // The rowid is the rank: 1..n in start order, so that ORDER BY rowid needs no sort.
  EXPECT_EQ(sql_text(path(), "SELECT min(rowid) || ' ' || max(rowid) || ' ' || count(*) FROM TASK_EXEC"),
            "1 3000 3000");
  EXPECT_EQ(sql_text(path(),
                     "SELECT count(*) FROM TASK_EXEC a JOIN TASK_EXEC b ON b.rowid = a.rowid + 1 "
                     "WHERE b.start_ns < a.start_ns"),
            "0");
  EXPECT_EQ(sql_text(path(), "SELECT task_id FROM TASK_EXEC WHERE rowid = 1"), "1");
  const auto plan = [&](const schema::TableInfo& table) {
    return sql_text(path(), "EXPLAIN QUERY PLAN " + schema::select_sql(table, false, {}, {}, true), 3);
  };
  for (const schema::TableInfo* table : {&schema::table_for<schema::TaskExecRow>().info,
                                         &schema::table_for<ApiRow>().info, &schema::table_for<MemoryRow>().info}) {
    EXPECT_EQ(plan(*table), "SCAN " + std::string(table->name)) << table->name;
  }
  // What users query reads the same: the views, and `rowid` a column of TASK_EXEC.
  EXPECT_EQ(sql_text(path(), "SELECT count(*) FROM TASK JOIN API USING (connection_id)"), "2");
  EXPECT_EQ(sql_text(path(), "SELECT count(*) FROM MEMORY_RECORD"), "3");
  EXPECT_EQ(sql_text(path(), "SELECT rowid FROM TASK_EXEC ORDER BY start_ns DESC LIMIT 1"), "3000");
}

TEST_F(RankedTablesTest, ReadsAsTheClusteredTraceOfTheSameRows) {
  for (const unsigned seed : {1u, 2u, 3u, 4u, 5u}) {
    // Shuffled (many late rows: through an array of row pointers) or nearly in order (a few late
    // rows merged back: Note [Holding rows cheaply]).
    const Shuffled s = seed <= 3 ? shuffled_rows(seed, 5000) : nearly_sorted_rows(seed, 5000);
    const std::string clustered = path("clustered.db"), ranked = path("ranked.db");
    std::filesystem::remove(clustered);
    std::filesystem::remove(ranked);
    write(clustered, {}, s);
    write(ranked, kRanked, s);
    const auto a = TraceReader::open(clustered);
    const auto b = TraceReader::open(ranked);
    ASSERT_FALSE(a->meta("ranked_tables").has_value());
    ASSERT_EQ(b->meta("ranked_tables"), "API_CALL,TASK_EXEC,MEMORY_OP");
    expect_same_rows<TaskRow>(*a, *b);  // ties in insertion order in both
    expect_same_rows<ApiRow>(*a, *b);
    expect_same_rows<MemoryRow>(*a, *b);
    EXPECT_EQ(a->task_start_range(), b->task_start_range());
    const TaskSummary sa = a->task_summary(), sb = b->task_summary();
    EXPECT_EQ(std::tie(sa.tasks, sa.overflows, sa.first_start_ns, sa.last_end_ns),
              std::tie(sb.tasks, sb.overflows, sb.first_start_ns, sb.last_end_ns));
    const auto [first, last] = a->task_start_range();
    // Ranges inside, on the edges, empty, before and past the ends: found by bisecting the ranks.
    for (const auto& range : std::vector<std::pair<std::int64_t, std::int64_t>>{{first, last + 1},
                                                                                {first + 1, last},
                                                                                {first + 7, first + 8},
                                                                                {last / 2, last / 2},
                                                                                {last / 2, last / 2 + 1},
                                                                                {last, last + 1},
                                                                                {last + 1, last + 100},
                                                                                {-100, first},
                                                                                {-100, first + 1},
                                                                                {last / 3, 2 * last / 3}}) {
      SCOPED_TRACE(::testing::PrintToString(range) + " seed " + std::to_string(seed));
      const RowQuery query{.starting = range};
      EXPECT_EQ(a->rows<TaskRow>(query).size(), b->rows<TaskRow>(query).size());
      expect_same_rows<TaskRow>(*a, *b, query);
      expect_same_rows<ApiRow>(*a, *b, query);
    }
  }
}

TEST_F(RankedTablesTest, AnEmptyTraceIsRankedAndReads) {
  TraceWriter::create(path(), kRanked)->finalize();
  const auto reader = TraceReader::open(path());
  EXPECT_EQ(reader->meta("ranked_tables"), "API_CALL,TASK_EXEC,MEMORY_OP");
  EXPECT_TRUE(reader->rows<TaskRow>().empty());
  EXPECT_TRUE(reader->rows<TaskRow>({.starting = {{0, 100}}}).empty());
  EXPECT_EQ(reader->task_start_range(), (std::pair<std::int64_t, std::int64_t>{0, -1}));
}

TEST_F(RankedTablesTest, ATableWithTooManyRowsToHoldIsStoredClustered) {
  const Shuffled s = shuffled_rows(7, 3000);
  WriterOptions options = kRanked;
  // API_CALL's and MEMORY_OP's 3000 rows fit, TASK_EXEC's (wider rows) do not.
  static_assert(sizeof(schema::TaskExecRow) > std::max(sizeof(ApiRow), sizeof(MemoryRow)));
  options.ranked_bytes = 3000 * std::max(sizeof(ApiRow), sizeof(MemoryRow));
  write(path("small.db"), options, s);
  write(path("clustered.db"), {}, s);
  const auto small = TraceReader::open(path("small.db"));
  const auto clustered = TraceReader::open(path("clustered.db"));
  EXPECT_EQ(small->meta("ranked_tables"), "API_CALL,MEMORY_OP");  // their rows fit
  const std::string ddl = "SELECT sql FROM sqlite_master WHERE name = 'TASK_EXEC'";
  EXPECT_EQ(sql_text(path("small.db"), ddl), sql_text(path("clustered.db"), ddl));
  EXPECT_EQ(sql_text(path("small.db"), "SELECT group_concat(rowid) FROM (SELECT rowid FROM TASK_EXEC LIMIT 3)"),
            sql_text(path("clustered.db"), "SELECT group_concat(rowid) FROM (SELECT rowid FROM TASK_EXEC LIMIT 3)"));
  expect_same_rows<TaskRow>(*clustered, *small);
  expect_same_rows<TaskRow>(*clustered, *small, {.starting = {{100, 400}}});
  expect_same_rows<ApiRow>(*clustered, *small, {.starting = {{100, 400}}});
  EXPECT_EQ(clustered->task_start_range(), small->task_start_range());
}

TEST_F(RankedTablesTest, DestroyedWithoutFinalizeKeepsTheHeldRows) {
  const Shuffled s = shuffled_rows(11, 500);
  {
    auto writer = TraceWriter::create(path(), kRanked);
    writer->add(s.tasks);
    writer->add(s.apis);
  }
  const auto reader = TraceReader::open(path());
  EXPECT_FALSE(reader->complete());
  EXPECT_EQ(reader->count("TASK"), 500);
  EXPECT_EQ(reader->count("API"), 500);
  const std::vector<TaskRow> tasks = reader->rows<TaskRow>();
  EXPECT_TRUE(std::is_sorted(tasks.begin(), tasks.end(),
                             [](const TaskRow& a, const TaskRow& b) { return a.start_ns < b.start_ns; }));
}

}  // namespace

namespace {

// A damaged or hand-edited META must not crash the reader nor lose rows: a clustered trace that
// claims to be ranked (and names tables that do not exist) reads every row, in rowid order.
TEST_F(RankedTablesTest, AMetaThatClaimsRankingWronglyStillReadsEveryRow) {
  const Shuffled s = shuffled_rows(5, 400);
  write(path(), {}, s);
  sql_exec(path(), "INSERT INTO META (key, value) VALUES ('ranked_tables', 'TASK_EXEC,NOPE,,API_CALL; DROP TABLE X')");
  const auto reader = TraceReader::open(path());
  EXPECT_EQ(reader->rows<TaskRow>().size(), 400u);
  EXPECT_EQ(reader->rows<ApiRow>().size(), 400u);
  EXPECT_LE(reader->rows<TaskRow>({.starting = {{10, 50}}}).size(), 400u);
  const auto [first, last] = reader->task_start_range();
  EXPECT_LE(first, last);
}

}  // namespace

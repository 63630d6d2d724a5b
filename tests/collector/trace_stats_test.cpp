// The counters a trace keeps about its recording (Note [Trace stats]): declared once, read back with
// their severity, and every non-zero data-loss counter reported by `npuscope analyze`.
#include <gtest/gtest.h>

#include "cli_test_util.h"
#include "npuscope/collector/trace_reader.h"
#include "npuscope/collector/trace_stats.h"
#include "trace_test_util.h"

using namespace npuscope::collector;
using namespace npuscope::collector::testing;

namespace {

class TraceStatsTest : public TraceTest {
 protected:
  // A finalized trace with a few tasks and these counters.
  void write(const std::vector<std::pair<std::string, std::int64_t>>& stats) {
    auto writer = TraceWriter::create(path());
    const StringId op = writer->intern("op");
    std::vector<TaskRow> rows;
    for (std::int64_t i = 0; i < 4; ++i) rows.push_back(make_task(i, op, op));
    writer->add_tasks(rows);
    for (const auto& [name, value] : stats) writer->set_stat(name, value);
    writer->finalize();
  }
};

TEST(TraceStats, EachCounterIsDeclaredOnceWithADoc) {
  for (std::size_t i = 0; i < std::size(kStats); ++i) {
    EXPECT_EQ(static_cast<std::size_t>(kStats[i].id), i) << kStats[i].name;
    EXPECT_EQ(find_stat(kStats[i].name), &kStats[i]);
    EXPECT_NE(kStats[i].severity, StatSeverity::kUnknown) << kStats[i].name;
    for (std::size_t j = 0; j < i; ++j) EXPECT_NE(kStats[i].name, kStats[j].name);
  }
  EXPECT_EQ(find_stat("no_such_counter"), nullptr);
  EXPECT_EQ(stat_info(StatId::kDroppedApi).severity, StatSeverity::kDataLoss);
  EXPECT_EQ(stat_info(StatId::kRecords).severity, StatSeverity::kInfo);
}

TEST_F(TraceStatsTest, ReadBackWithSeverityAndDataLossPicked) {
  write({{"records", 100},
         {"dropped_records.api", 3},
         {"dropped_records", 5},
         {"dropped_records.task", 2},
         {"dropped_records.memory", 0},
         {"unpaired_markers", 4},
         {"a_newer_counter", 7}});
  const auto stats = TraceReader::open(path())->stats();
  ASSERT_EQ(stats.size(), 7u);
  for (const StatValue& s : stats) {
    if (s.name == "a_newer_counter") {
      EXPECT_EQ(s.severity, StatSeverity::kUnknown);
      EXPECT_TRUE(s.doc.empty());
    } else {
      EXPECT_EQ(s.severity, find_stat(s.name)->severity) << s.name;
    }
  }
  // Non-zero data loss (and unknown counters, which may be), in declaration order, the total first.
  const auto lost = data_loss(stats);
  std::vector<std::string> names;
  for (const StatValue& s : lost) names.push_back(s.name);
  EXPECT_EQ(names, (std::vector<std::string>{"dropped_records", "dropped_records.api", "dropped_records.task",
                                             "a_newer_counter"}));
  EXPECT_EQ(describe(lost[1]), "dropped_records.api = 3 (Host API calls lost (API rows missing))");
  EXPECT_EQ(describe(lost[3]), "a_newer_counter = 7 (a counter this build does not know)");
}

TEST_F(TraceStatsTest, AnalyzeReportsEveryDataLossCounter) {
  write({{"dropped_records", 9}, {"dropped_records.tensor", 9}, {"spool_torn_bytes", 12}, {"records", 50}});
  const auto r = npuscope::testing::run_command(npuscope::testing::npuscope_cmd("analyze " + path()));
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* line : {"dropped_records = 9", "dropped_records.tensor = 9", "spool_torn_bytes = 12"}) {
    EXPECT_NE(r.output.find(line), std::string::npos) << line << "\n" << r.output;
  }
  EXPECT_EQ(r.output.find("records = 50"), std::string::npos) << "info counters are not data loss";
  const auto json = npuscope::testing::run_command(npuscope::testing::npuscope_cmd("analyze --format json " + path()));
  EXPECT_NE(json.output.find("spool_torn_bytes = 12"), std::string::npos) << json.output;
}

}  // namespace

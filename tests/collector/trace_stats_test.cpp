// The counters a trace keeps about its recording (Note [Trace stats]): declared once, read back with
// their severity, and every non-zero data-loss counter reported by `npuscope analyze`.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

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
    writer->add(rows);
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
  const std::vector<std::pair<std::string, std::int64_t>> lost = {
      {"dropped_records", 9}, {"dropped_records.tensor", 9}, {"spool_torn_bytes", 12}};
  // The text report: a line per counter in the data_loss table, with its value.
  const auto r = npuscope::testing::run_command(npuscope::testing::npuscope_cmd("analyze " + path()));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("data was lost while recording"), std::string::npos) << r.output;
  for (const auto& [name, value] : lost) {
    const auto at = r.output.find(" " + name + " ");
    ASSERT_NE(at, std::string::npos) << name << "\n" << r.output;
    const std::string line = r.output.substr(at, r.output.find('\n', at) - at);
    const std::string cell = std::to_string(value);
    EXPECT_NE(line.find(" " + cell + " "), std::string::npos) << line;
  }
  EXPECT_EQ(r.output.find(" records "), std::string::npos) << "info counters are not data loss\n" << r.output;
  // JSON: the data_loss table, exactly these rows in declaration order.
  const std::string json_path = path("a.json");
  const auto j = npuscope::testing::run_command(
      npuscope::testing::npuscope_cmd("analyze --format json -o " + json_path + " " + path()));
  ASSERT_EQ(j.status, 0) << j.output;
  const auto doc = nlohmann::json::parse(npuscope::testing::read_file(json_path));
  ASSERT_EQ(doc.at("data_loss").size(), lost.size()) << doc.at("data_loss");
  for (std::size_t i = 0; i < lost.size(); ++i) {
    EXPECT_EQ(doc["data_loss"][i].at("counter"), lost[i].first);
    EXPECT_EQ(doc["data_loss"][i].at("value"), lost[i].second);
    EXPECT_FALSE(doc["data_loss"][i].at("meaning").get<std::string>().empty());
  }
}

}  // namespace

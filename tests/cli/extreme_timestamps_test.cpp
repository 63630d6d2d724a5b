// Issue 15: timestamps near INT64_MAX/MIN overflowed `end - start` in analyze and the exports
// (signed overflow, found by UBSan). Note [Timestamp range] in npuscope/collector/time_math.h: the
// analyzer refuses rows outside [0, 2^62] with an error naming the trace, table, row and range;
// within it every figure is sane; the exports print any row with saturated durations.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "../collector/export_test_util.h"
#include "cli_test_util.h"
#include "npuscope/collector/time_math.h"

using namespace npuscope::collector;
using namespace npuscope::collector::testing;
using npuscope::testing::npuscope_cmd;
using npuscope::testing::run_command;

namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();

class ExtremeTimestamps : public ExportTest {
 protected:
  // Two kernels on npu:0 stream 0 and one API call with the given times.
  void write(const std::string& path, std::int64_t a_start, std::int64_t a_end, std::int64_t b_start,
             std::int64_t b_end) {
    auto w = TraceWriter::create(path, {.overwrite = true});
    DeviceInfoRow device;
    device.device_id = 0;
    device.name = "ascend910b";
    device.cube_cores = 24;
    device.vector_cores = 48;
    w->add(device);
    const StringId name = w->intern("layer0/MatMul"), type = w->intern("MatMul");
    TaskRow a = sample_task(1, 0, 0, a_start, a_start, a_end, 1);
    TaskRow b = sample_task(2, 0, 0, b_start, b_start, b_end, 2);
    for (TaskRow* t : {&a, &b}) {
      t->name_id = name;
      t->op_type_id = type;
      t->task_type = 0;
      t->block_dim = 4;
    }
    const TaskRow tasks[] = {a, b};
    w->add(tasks);
    const ApiRow apis[] = {{a_start, b_end, w->intern("aclrtSynchronizeDevice"), 1, 0}};
    w->add(apis);
    w->finalize();
  }

  // Every "dur" of the Chrome export is >= 0.
  void expect_sane_exports(const std::string& db) {
    auto r = run_command(npuscope_cmd("export " + db + " --chrome " + path("t.json") + " --csv " + path("csv")));
    ASSERT_EQ(r.status, 0) << r.output;
    const auto doc = nlohmann::json::parse(read_text(path("t.json")));
    int with_dur = 0;
    for (const auto& e : doc["traceEvents"]) {
      if (!e.contains("dur")) continue;
      ++with_dur;
      EXPECT_GE(e["dur"].get<double>(), 0) << e.dump();
    }
    EXPECT_GE(with_dur, 3);
    const std::string csv = read_text(path("csv/op_summary.csv"));
    std::istringstream lines(csv);
    std::string line;
    std::getline(lines, line);  // header
    int rows = 0;
    while (std::getline(lines, line)) {
      ++rows;
      // Task Duration(us) is the 9th column: no minus sign anywhere in the durations.
      std::istringstream fields(line);
      std::string f;
      for (int i = 0; i < 9; ++i) std::getline(fields, f, ',');
      EXPECT_NE(f.substr(0, 1), "-") << line;
    }
    EXPECT_EQ(rows, 2) << csv;
  }
};

}  // namespace

TEST_F(ExtremeTimestamps, TheDocumentedRangesEdgesAnalyzeDiffAndExportSanely) {
  const std::string db = path("edge.db");
  write(db, 0, 1000, kMaxTimestampNs - 1000, kMaxTimestampNs);
  const auto r = run_command(npuscope_cmd("analyze " + db + " --format json"));
  ASSERT_EQ(r.status, 0) << r.output;
  const auto doc = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  const std::string text = doc.dump();
  EXPECT_EQ(text.find("-46116"), std::string::npos) << "a wrapped duration: " << text;
  EXPECT_EQ(text.find("-92233"), std::string::npos) << "a wrapped duration: " << text;
  // The diff of the trace with itself: E2E spans the whole range, nothing wraps.
  const auto d = run_command(npuscope_cmd("diff " + db + " " + db + " --format json"));
  ASSERT_EQ(d.status, 0) << d.output;
  const auto diff = nlohmann::json::parse(d.output.substr(d.output.find('{')));
  EXPECT_EQ(diff["diff_overall"].back()["metric"], "E2E Time");
  EXPECT_EQ(diff["diff_overall"].back()["base_ns"], kMaxTimestampNs);
  EXPECT_EQ(diff["diff_overall"].back()["diff_ns"], 0);
  expect_sane_exports(db);
}

TEST_F(ExtremeTimestamps, TimesNearInt64LimitsAreRefusedByAnalyzeAndDiffAndPrintedByTheExports) {
  for (const auto& [a_start, a_end, b_start, b_end] :
       {std::tuple{kMin, kMax, std::int64_t{0}, std::int64_t{10}}, std::tuple{kMax - 10, kMax, kMax - 5, kMax},
        std::tuple{std::int64_t{0}, kMax, std::int64_t{5}, std::int64_t{6}},
        std::tuple{kMin, kMin + 10, kMin + 20, kMax}}) {
    SCOPED_TRACE(std::to_string(a_start) + " " + std::to_string(a_end) + " " + std::to_string(b_start) + " " +
                 std::to_string(b_end));
    const std::string db = path("extreme.db");
    write(db, a_start, a_end, b_start, b_end);
    for (const std::string& command : {"analyze " + db, "diff " + db + " " + db}) {  // diff: both sides
      const auto r = run_command(npuscope_cmd(command));
      EXPECT_EQ(r.status, 1) << command << "\n" << r.output;
      EXPECT_NE(r.output.find("npuscope: error: " + db + ": "), std::string::npos) << r.output;
      EXPECT_NE(r.output.find("is outside [0, 4611686018427387904] ns"), std::string::npos) << r.output;
    }
    expect_sane_exports(db);
  }
}

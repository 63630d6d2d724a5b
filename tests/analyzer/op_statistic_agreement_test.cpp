// msprof's op_statistic is counted once (npuscope/collector/op_statistic.h) and shown three ways:
// `npuscope export --csv` (op_statistic.csv), `npuscope analyze --format json` (op_statistics) and
// the viewer's op statistics panel (from its timeline model). On one trace the three agree, row by
// row: device, op type, core type, count, total, min and max.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "cli_test_util.h"
#include "collector/export_test_util.h"
#include "npuscope/collector/trace_reader.h"
#include "npuscope/viewer/op_stats.h"
#include "npuscope/viewer/timeline_model.h"

using namespace npuscope::testing;
using nlohmann::json;

namespace {

using Key = std::tuple<std::int64_t, std::string, std::string>;  // device, op type, core type
struct Figures {
  std::int64_t count = 0, total_ns = 0, min_ns = 0, max_ns = 0;
  bool operator==(const Figures&) const = default;
};
using Rows = std::vector<std::pair<Key, Figures>>;  // in the order shown

std::ostream& operator<<(std::ostream& o, const Rows& rows) {
  for (const auto& [k, f] : rows) {
    o << "\n  " << std::get<0>(k) << " " << std::get<1>(k) << " " << std::get<2>(k) << ": " << f.count << " "
      << f.total_ns << " " << f.min_ns << " " << f.max_ns;
  }
  return o;
}

std::int64_t us_to_ns(const std::string& us) { return std::llround(std::stod(us) * 1000); }

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  for (std::string cell; std::getline(in, cell, ',');) out.push_back(cell);
  return out;
}

// op_statistic.csv: Device_id,Model Name,OP Type,Core Type,Count,Total,Avg,Min,Max(us),Ratio (no
// quoting needed for these traces' names).
Rows from_export(const std::string& db, const std::filesystem::path& dir) {
  const auto r = run_command(npuscope_cmd("export " + db + " --csv " + dir.string()));
  EXPECT_EQ(r.status, 0) << r.output;
  std::stringstream in(read_file(dir / "op_statistic.csv"));
  std::string line;
  std::getline(in, line);  // header
  Rows rows;
  while (std::getline(in, line)) {
    const auto c = split(line);
    EXPECT_EQ(c.size(), 10u) << line;
    if (c.size() != 10) continue;
    rows.push_back(
        {{std::stoll(c[0]), c[2], c[3]}, {std::stoll(c[4]), us_to_ns(c[5]), us_to_ns(c[7]), us_to_ns(c[8])}});
  }
  return rows;
}

Rows from_analyze(const std::string& db, const std::filesystem::path& dir) {
  const std::string out = (dir / "analysis.json").string();
  const auto r = run_command(npuscope_cmd("analyze " + db + " --rules op_statistics --format json -o " + out));
  EXPECT_EQ(r.status, 0) << r.output;
  const json j = json::parse(read_file(out));
  Rows rows;
  for (const json& s : j["op_statistics"]) {
    rows.push_back(
        {{s["device_id"].get<std::int64_t>(), s["op_type"].get<std::string>(), s["core_type"].get<std::string>()},
         {s["count"].get<std::int64_t>(), s["total_ns"].get<std::int64_t>(), s["min_ns"].get<std::int64_t>(),
          s["max_ns"].get<std::int64_t>()}});
  }
  return rows;
}

Rows from_viewer(const std::string& db) {
  const auto reader = npuscope::collector::TraceReader::open(db);
  const npuscope::viewer::TimelineModel model(*reader);
  Rows rows;
  for (const auto& s : npuscope::viewer::op_type_stats(model)) {
    rows.push_back({{s.device_id, s.op_type, npuscope::collector::task_type_name(s.task_type)},
                    {s.count, s.total_ns, s.min_ns, s.max_ns}});
  }
  return rows;
}

void expect_agreement(const std::string& db, const std::filesystem::path& dir) {
  const Rows exported = from_export(db, dir / "csv"), analyzed = from_analyze(db, dir), viewed = from_viewer(db);
  ASSERT_FALSE(exported.empty());
  EXPECT_EQ(analyzed, exported) << "analyze:" << analyzed << "\nexport:" << exported;
  EXPECT_EQ(viewed, exported) << "viewer:" << viewed << "\nexport:" << exported;
}

class OpStatisticAgreement : public npuscope::collector::testing::ExportTest {};

// A real profile: several op types on several streams.
TEST_F(OpStatisticAgreement, ExportAnalyzeAndViewerShowTheSameRows) {
  const std::string db = path("t.db");
  const auto run = run_command(npuscope_cmd("run --force -o " + db + " -- " + std::string(NPUSCOPE_SAMPLES_DIR) +
                                            "/multi_stream --threads 2 --streams 2 --ops 300"));
  ASSERT_EQ(run.status, 0) << run.output;
  expect_agreement(db, dir_);
  const Rows rows = from_analyze(db, dir_);
  std::int64_t tasks = 0;
  for (const auto& [key, f] : rows) tasks += f.count;
  EXPECT_GE(tasks, 600) << rows;  // 2 threads x 300 ops
}

// The sample trace has what the rule leaves out: a copy and the cpu golden backend's MatMul (which
// the viewer and the export used to count, each its own way).
TEST_F(OpStatisticAgreement, TheCpuBackendAndCopiesAreNotOps) {
  npuscope::collector::testing::write_sample_trace(path("s.db"));
  expect_agreement(path("s.db"), dir_);
  const Rows rows = from_viewer(path("s.db"));
  ASSERT_EQ(rows.size(), 2u) << rows;
  EXPECT_EQ(rows[0].first, Key(0, "MatMul", "AI_CORE"));
  EXPECT_EQ(rows[0].second, (Figures{2, 2499 + 1001, 1001, 2499}));
  EXPECT_EQ(rows[1].first, Key(0, "Add", "AI_VECTOR_CORE"));
}

}  // namespace

// The viewer's headless helpers: time formatting and ruler steps, op statistics and their sorting,
// search by op name, the command line, the frame statistics' JSON. No display needed.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "collector/export_test_util.h"
#include "npuscope/viewer/frame_stats.h"
#include "npuscope/viewer/op_search.h"
#include "npuscope/viewer/op_stats.h"
#include "npuscope/viewer/time_format.h"
#include "npuscope/viewer/view_options.h"

using namespace npuscope::viewer;
using npuscope::collector::TraceReader;
using npuscope::collector::testing::ExportTest;
using npuscope::collector::testing::write_sample_trace;

TEST(TimeFormat, DurationsPickTheirUnit) {
  EXPECT_EQ(format_duration(0), "0 ns");
  EXPECT_EQ(format_duration(999), "999 ns");
  EXPECT_EQ(format_duration(1500), "1.50 us");
  EXPECT_EQ(format_duration(12'340'000), "12.3 ms");
  EXPECT_EQ(format_duration(250'000'000), "250 ms");
  EXPECT_EQ(format_duration(2'000'000'000), "2.00 s");
}

TEST(TimeFormat, RulerStepsAreOneTwoFiveAndAdaptToTheZoom) {
  EXPECT_EQ(ruler_step(1, 90), 100);  // 1 ns per pixel: a tick every 100 ns
  EXPECT_EQ(ruler_step(2, 90), 200);  // 180 ns wanted
  EXPECT_EQ(ruler_step(4, 90), 500);  // 360 ns wanted
  EXPECT_EQ(ruler_step(1e6, 90), 100'000'000);
  EXPECT_EQ(ruler_step(0.001, 90), 1);  // never below 1 ns
  EXPECT_EQ(format_tick(1'500'000, 500'000), "1.5 ms");
  EXPECT_EQ(format_tick(1500, 100), "1.5 us");
  EXPECT_EQ(format_tick(40, 20), "40 ns");
  EXPECT_EQ(format_tick(4'000'000'000, 2'000'000'000), "4 s");
  EXPECT_EQ(format_tick(250'000, 50'000), "250 us");  // ms only from 100 us steps
}

TEST(ViewOptions, ParsesEveryFlag) {
  const char* argv[] = {
      "view",     "t.db",       "--screenshot", "a.png",   "--size",        "640x480", "--view=100:2000",
      "--select", "layer0/add", "--panel",      "compare", "--frame-stats", "s.json"};
  const ViewerOptions o = parse_view_args(static_cast<int>(std::size(argv)), const_cast<char**>(argv));
  EXPECT_EQ(o.trace, "t.db");
  EXPECT_EQ(o.screenshot, "a.png");
  EXPECT_EQ(o.width, 640);
  EXPECT_EQ(o.height, 480);
  ASSERT_TRUE(o.view);
  EXPECT_EQ(o.view->first, 100);
  EXPECT_EQ(o.view->second, 2000);
  EXPECT_EQ(o.select, "layer0/add");
  EXPECT_EQ(o.panel, "compare");
  EXPECT_EQ(o.frame_stats, "s.json");
}

TEST(ViewOptions, RefusesBadValuesNamingTheFlag) {
  const auto parse = [](std::vector<const char*> args) {
    args.insert(args.begin(), "view");
    return parse_view_args(static_cast<int>(args.size()), const_cast<char**>(args.data()));
  };
  const auto message = [&](std::vector<const char*> args) {
    try {
      parse(args);
    } catch (const ViewUsageError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(message({}), "no trace given (or --compare NPU_DUMP BENCH_DUMP)");
  EXPECT_NE(message({"t.db", "--size", "12"}).find("--size"), std::string::npos);
  EXPECT_NE(message({"t.db", "--view", "5:1"}).find("END_NS must be after START_NS"), std::string::npos);
  EXPECT_NE(message({"t.db", "--view", "a:b"}).find("not an integer"), std::string::npos);
  // Issue 15: a span of 2^63 ns drew nothing; offsets past +-2^62 are refused, naming the range.
  EXPECT_NE(message({"t.db", "--view", "0:9223372036854775807"}).find("within +-4611686018427387904 (2^62)"),
            std::string::npos);
  EXPECT_NE(message({"t.db", "--view", "-9223372036854775807:0"}).find("out of range"), std::string::npos);
  EXPECT_NE(message({"t.db", "--view", "0:99999999999999999999"}).find("not an integer within int64"),
            std::string::npos);
  EXPECT_EQ(parse({"t.db", "--view", "-4611686018427387904:4611686018427387904"}).view->second, kMaxViewOffsetNs);
  EXPECT_NE(message({"t.db", "--panel", "x"}).find("--panel must be"), std::string::npos);
  EXPECT_NE(message({"t.db", "--bogus"}).find("unknown option '--bogus'"), std::string::npos);
  EXPECT_NE(message({"t.db", "--screenshot"}).find("--screenshot needs a value"), std::string::npos);
  EXPECT_TRUE(parse({"--help"}).help);
  // --block: a custom kernel's block, with the --select that names the kernel.
  EXPECT_EQ(parse({"t.db", "--select", "GeluCustom", "--block", "3"}).block, 3);
  EXPECT_FALSE(parse({"t.db", "--select", "GeluCustom"}).block);
  EXPECT_NE(message({"t.db", "--block", "1"}).find("--block needs --select"), std::string::npos);
  EXPECT_NE(message({"t.db", "--select", "k", "--block", "-1"}).find("--block: N must be 0 or more"),
            std::string::npos);
  EXPECT_NE(message({"t.db", "--select", "k", "--block", "x"}).find("not an integer"), std::string::npos);
  // A directory of rank traces: --rank says where --select looks; the Collective panel.
  EXPECT_EQ(parse({"traces/", "--select", "hcom_allReduce_x", "--rank", "2"}).rank, 2);
  EXPECT_EQ(parse({"traces/", "--panel", "collective"}).panel, "collective");
  EXPECT_NE(message({"traces/", "--rank", "1"}).find("--rank needs --select"), std::string::npos);
  EXPECT_NE(message({"traces/", "--select", "k", "--rank", "-1"}).find("--rank: R must be 0 or more"),
            std::string::npos);
}

// --diff BASE.db: one BASE trace against one viewed trace; the Diff panel only with it.
TEST(ViewOptions, DiffTakesOneBaseTraceAndEnablesItsPanel) {
  const auto args = [](std::vector<const char*> a) {
    a.insert(a.begin(), "view");
    return a;
  };
  const auto message = [&](std::vector<const char*> a) {
    a = args(a);
    try {
      parse_view_args(static_cast<int>(a.size()), const_cast<char**>(a.data()));
    } catch (const ViewUsageError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  auto a = args({"new.db", "--diff", "base.db", "--panel", "diff", "--select", "layer0/attn/qk"});
  const ViewerOptions o = parse_view_args(static_cast<int>(a.size()), const_cast<char**>(a.data()));
  EXPECT_EQ(o.trace, "new.db");
  EXPECT_EQ(o.diff, "base.db");
  EXPECT_EQ(o.panel, "diff");
  a = args({"new.db", "--diff=base.db"});
  EXPECT_EQ(parse_view_args(static_cast<int>(a.size()), const_cast<char**>(a.data())).diff, "base.db");
  EXPECT_EQ(message({"new.db", "--panel", "diff"}), "--panel diff needs --diff BASE.db (the trace to diff against)");
  EXPECT_EQ(message({"new.db", "--diff"}), "--diff needs a value");
  EXPECT_NE(message({"new.db", "--diff="}).find("--diff needs a BASE trace"), std::string::npos);
  // A directory of rank traces on either side: a usage error naming the flag and the directory.
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "viewdiff_ranks";
  std::filesystem::create_directories(dir);
  const std::string d = dir.string();
  const std::string base_dir = message({"new.db", "--diff", d.c_str()});
  EXPECT_EQ(base_dir.rfind("--diff: " + d + " is a directory", 0), 0u) << base_dir;
  const std::string new_dir = message({d.c_str(), "--diff", "base.db"});
  EXPECT_EQ(new_dir.rfind("--diff: " + d + " is a directory of rank traces", 0), 0u) << new_dir;
  std::filesystem::remove_all(dir);
  const std::string usage = kViewUsage, help = kViewHelp;
  EXPECT_NE(usage.find("[--diff BASE.db]"), std::string::npos);
  EXPECT_NE(usage.find("|diff|"), std::string::npos);
  EXPECT_NE(help.find("--diff BASE.db"), std::string::npos);
}

class ViewerModelTest : public ExportTest {};

TEST_F(ViewerModelTest, OpStatisticsPerOpTypeSortable) {
  write_sample_trace(path("t.db"));
  const auto reader = TraceReader::open(path("t.db"));
  const TimelineModel model(*reader);
  auto rows = op_type_stats(model);
  // MatMul (tasks 2 and 5) and Add (task 3) on npu:0; the copy is not a kernel, and task 4 (the cpu
  // golden backend's MatMul) not an op of the device (Note [What op_statistic counts]).
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].device_id, 0);
  EXPECT_EQ(rows[0].op_type, "MatMul");
  EXPECT_EQ(rows[0].task_type, npuscope::collector::TaskType::kAiCore);
  EXPECT_EQ(rows[0].count, 2);
  EXPECT_EQ(rows[0].total_ns, 2499 + 1001);
  EXPECT_EQ(rows[0].min_ns, 1001);
  EXPECT_EQ(rows[0].max_ns, 2499);
  EXPECT_EQ(rows[1].op_type, "Add");
  EXPECT_EQ(rows[1].task_type, npuscope::collector::TaskType::kAiVectorCore);
  EXPECT_EQ(rows[1].total_ns, 800);
  EXPECT_NEAR(rows[0].ratio_pct + rows[1].ratio_pct, 100, 1e-9);
  sort_op_stats(rows, OpStatsColumn::kCount, true);
  EXPECT_EQ(rows[0].op_type, "Add");
  sort_op_stats(rows, OpStatsColumn::kOpType, true);
  EXPECT_EQ(rows[0].op_type, "Add");
  sort_op_stats(rows, OpStatsColumn::kMax, false);
  EXPECT_EQ(rows[0].op_type, "MatMul");
}

TEST_F(ViewerModelTest, SearchFindsOpsInStartOrder) {
  write_sample_trace(path("t.db"));
  const auto reader = TraceReader::open(path("t.db"));
  const TimelineModel model(*reader);
  const auto start = [&](const TimelineModel::Location& at) {
    return model.lanes()[at.lane].rows[0][at.index].start_ns;
  };
  const auto matmuls = search_ops(model, "attn/MatMul");
  ASSERT_EQ(matmuls.size(), 3u);
  EXPECT_EQ(start(matmuls[0]), 1200);  // task 4 on the cpu backend
  EXPECT_EQ(start(matmuls[1]), 7001);
  EXPECT_EQ(start(matmuls[2]), 9600);
  EXPECT_EQ(search_ops(model, "layer0").size(), 4u);
  EXPECT_TRUE(search_ops(model, "Conv").empty());
  EXPECT_EQ(search_ops(model, "layer0", 2).size(), 2u);
  TimelineModel::Location at;
  ASSERT_TRUE(find_op(model, "layer0/add,\"x\"", at));
  EXPECT_EQ(model.lanes()[at.lane].rows[0][at.index].id, 3u);
  EXPECT_FALSE(find_op(model, "layer0", at));  // exact names only

  // Next / previous (N / P): the first step goes to an end, then each wraps around.
  SearchCursor cursor;
  EXPECT_EQ(cursor.step(1), nullptr) << "nothing searched yet";
  cursor.search(model, "attn/MatMul");
  ASSERT_EQ(cursor.matches().size(), 3u);
  EXPECT_EQ(cursor.current(), -1);
  EXPECT_EQ(start(*cursor.step(-1)), 9600);  // previous first: the last match
  EXPECT_EQ(start(*cursor.step(1)), 1200);   // and forward wraps to the first
  EXPECT_EQ(start(*cursor.step(1)), 7001);
  EXPECT_EQ(cursor.current(), 1);
  EXPECT_EQ(start(*cursor.step(-1)), 1200);
  EXPECT_EQ(start(*cursor.step(-1)), 9600);
  cursor.search(model, "Conv");
  EXPECT_EQ(cursor.step(1), nullptr);
  EXPECT_EQ(cursor.current(), -1);
  cursor.search(model, "");
  EXPECT_TRUE(cursor.matches().empty()) << "an empty text searches nothing";
}

TEST(FrameStatsJson, CountsFoldedRunsAndTheirItems) {
  std::vector<TimelineItem> row(5);
  std::vector<DrawItem> drawn = {{0, 10, &row[0], 1}, {10, 20, &row[1], 3}, {30, 40, &row[4], 1}};
  FrameStats stats;
  auto& lane = stats.lanes.emplace_back();
  lane.title = "npu:0 stream 0";
  FrameStats::add_row(lane, drawn);
  EXPECT_EQ(stats.drawn(), 3u);
  EXPECT_EQ(stats.folded(), 1u);
  EXPECT_EQ(stats.items(), 5u);
  const auto doc = nlohmann::json::parse(stats.to_json());
  EXPECT_EQ(doc["lanes_drawn"], 1);
  EXPECT_EQ(doc["items_drawn"], 3);
  EXPECT_EQ(doc["folded_items"], 1);
  EXPECT_EQ(doc["items_in_folds"], 3);
  EXPECT_EQ(doc["items_in_view"], 5);
  EXPECT_EQ(doc["lanes"][0]["kind"], "stream");
  EXPECT_EQ(doc["pipe_block"], -1) << "no pipe lanes drawn";
  EXPECT_STREQ(lane_kind_name(LaneKind::kPipe), "pipe");
  EXPECT_FALSE(doc.contains("diff")) << "no --diff: no diff object";
  stats.diff.op_rows = 25;
  stats.diff.base_task = 17;
  stats.diff.base_ns = 1285;
  stats.diff.details = "base duration: 1.29 us (diff +172 ns, ratio 1.13x)";
  const auto with_diff = nlohmann::json::parse(stats.to_json());
  EXPECT_EQ(with_diff["diff"]["op_rows"], 25);
  EXPECT_EQ(with_diff["diff"]["base_task"], 17);
  EXPECT_EQ(with_diff["diff"]["base_ns"], 1285);
  EXPECT_EQ(with_diff["diff"]["details"], stats.diff.details);
}

TEST(LodAtMidZoom, AFoldedRunStopsAtTheViewsEnd) {
  // 1M back-to-back 100 ns items; the view holds the 1000 from 500'000: a folded run must not follow
  // the row past the view (it did, to the row's end: 88 ms a frame on 10M tasks).
  std::vector<TimelineItem> row;
  for (std::int64_t i = 0; i < 1'000'000; ++i) row.push_back(TimelineItem::make(i * 100, i * 100 + 100, 0, i, 0));
  const ViewRange view{50'000'000, 50'100'000, 10};  // 10 px: every item narrower than 3 px
  std::vector<DrawItem> out;
  visible_items(row, view, out);
  std::size_t items = 0;
  for (const DrawItem& d : out) {
    items += d.count;
    EXPECT_LT(d.item->start_ns, view.end_ns);
  }
  EXPECT_EQ(items, 1000u);  // exactly the items that overlap the view
}

// The multi-rank viewer end to end, under Xvfb: `npuscope view DIR` on the traces of a real 4-rank
// run (analyzer/emulated_rank_traces.h) draws one lane group per rank in rank order on the shared
// axis, a collective selected on one rank is outlined on every rank, a file that is not a trace is
// skipped and reported, and a single trace still opens as before. Needs xvfb-run, as viewer_xvfb_test.
#include <gtest/gtest.h>
#include <stb/stb_image.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "analyzer/emulated_rank_traces.h"
#include "cli_test_util.h"
#include "npuscope/viewer/cluster_model.h"
#include "npuscope/viewer/op_search.h"

using namespace npuscope;
using namespace npuscope::viewer;
using npuscope::testing::npuscope_cmd;
using npuscope::testing::read_file;
using npuscope::testing::run_command;
using npuscope::testing::xvfb_run_prefix;
namespace fs = std::filesystem;

namespace {

class ClusterViewerXvfbTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir() = fs::temp_directory_path() / ("npuscope_cluster_viewer_" + std::to_string(getpid()));
    npuscope::testing::copy_emulated_job(dir() / "job");
    std::ofstream(dir() / "job" / "notes.db") << "not a trace\n";
  }
  static void TearDownTestSuite() { fs::remove_all(dir()); }
  static fs::path& dir() {
    static fs::path d;
    return d;
  }

  void SetUp() override {
    ASSERT_EQ(run_command("command -v xvfb-run").status, 0)
        << "xvfb-run is missing: the viewer tests need it (scripts/bootstrap.sh installs xvfb, xauth and "
           "libgl1-mesa-dri)";
  }

  static std::string job() { return (dir() / "job").string(); }
  static std::string out(const std::string& name) { return (dir() / name).string(); }

  // As viewer_xvfb_test: side-by-side test processes look for free displays from different numbers.
  static npuscope::testing::CommandResult view(const std::string& args) {
    return run_command(xvfb_run_prefix(4100, dir()) + npuscope_cmd("view " + args));
  }

  static nlohmann::json stats(const std::string& file) { return nlohmann::json::parse(read_file(file)); }

  // The first collective task of rank 0 (its op name is the same on every rank).
  static std::string first_collective_name(const ClusterModel& set) {
    const TimelineModel& m = *set.ranks()[0].model;
    for (const Lane& lane : m.lanes()) {
      if (lane.kind != LaneKind::kStream) continue;
      for (const TimelineItem& item : lane.rows[0]) {
        if (is(item.task_type(), TaskType::kCommunication)) return m.str(item.label_id);
      }
    }
    return "";
  }
};

}  // namespace

TEST_F(ClusterViewerXvfbTest, ADirectoryOpensAsOneGroupPerRankOnOneAxis) {
  const ClusterModel set(job());
  const auto r = view(job() + " --size 1280x900 --screenshot " + out("fit.png") + " --frame-stats " + out("fit.json"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("notes.db: skipped: "), std::string::npos) << r.output;  // and the rest is shown
  const nlohmann::json s = stats(out("fit.json"));
  EXPECT_EQ(s["groups"], (nlohmann::json{"rank 0 (node 0)", "rank 1 (node 0)", "rank 2 (node 1)", "rank 3 (node 1)"}));
  // Every rank's lanes, in rank order, under its group.
  std::vector<std::string> groups;
  for (const auto& lane : s["lanes"]) {
    if (groups.empty() || groups.back() != lane["group"]) groups.push_back(lane["group"]);
  }
  EXPECT_EQ(groups, s["groups"].get<std::vector<std::string>>());
  std::size_t lanes = 0;
  for (const RankTrace& rank : set.ranks()) lanes += rank.model->lanes().size();
  EXPECT_EQ(s["lanes"].size(), lanes);
  // One axis: fit-all shows every rank, from the earliest first event to the latest last one.
  EXPECT_LE(s["view"]["start_ns"].get<std::int64_t>(), set.first_ns());
  EXPECT_GE(s["view"]["end_ns"].get<std::int64_t>(), set.last_ns());
  EXPECT_EQ(s["collective_highlights"], 0);
  EXPECT_EQ(s["selected_task"], 0);
  EXPECT_FALSE(read_file(out("fit.png")).empty());
}

TEST_F(ClusterViewerXvfbTest, ACollectiveSelectedOnOneRankIsOutlinedOnEveryRank) {
  const ClusterModel set(job());
  const std::string name = first_collective_name(set);
  ASSERT_FALSE(name.empty());
  for (const int rank : {0, 2}) {
    const std::string base = "select" + std::to_string(rank);
    const auto r =
        view(job() + " --size 1280x900 --select " + name + " --rank " + std::to_string(rank) +
             " --panel collective --screenshot " + out(base + ".png") + " --frame-stats " + out(base + ".json"));
    ASSERT_EQ(r.status, 0) << r.output;
    const nlohmann::json s = stats(out(base + ".json"));
    // The selection is the rank's task; its collective is outlined in one lane of every rank.
    TimelineModel::Location at;
    ASSERT_TRUE(find_op(*set.ranks()[static_cast<std::size_t>(rank)].model, name, at));
    const std::uint32_t low_id =
        set.ranks()[static_cast<std::size_t>(rank)].model->lanes()[at.lane].rows[0][at.index].id;
    EXPECT_EQ(static_cast<std::uint32_t>(s["selected_task"].get<std::int64_t>()), low_id);
    EXPECT_EQ(s["collective_highlights"], 4) << "rank " << rank;
    std::set<std::string> outlined;
    for (const auto& lane : s["lanes"]) {
      if (lane["collective_highlights"] == 1) outlined.insert(lane["group"]);
    }
    EXPECT_EQ(outlined.size(), 4u);
    // The picture shows it: a PNG of the size asked for, not blank.
    const std::string png = read_file(out(base + ".png"));
    int w = 0, h = 0, n = 0;
    unsigned char* px = stbi_load_from_memory(reinterpret_cast<const unsigned char*>(png.data()),
                                              static_cast<int>(png.size()), &w, &h, &n, 3);
    ASSERT_NE(px, nullptr);
    EXPECT_EQ(w, 1280);
    EXPECT_EQ(h, 900);
    stbi_image_free(px);
  }
}

TEST_F(ClusterViewerXvfbTest, ASingleTraceOpensAsBefore) {
  const auto r = view(job() + "/rank_1.db --screenshot " + out("one.png") + " --frame-stats " + out("one.json"));
  ASSERT_EQ(r.status, 0) << r.output;
  const nlohmann::json s = stats(out("one.json"));
  EXPECT_FALSE(s.contains("groups"));
  const auto reader = collector::TraceReader::open(job() + "/rank_1.db");
  const TimelineModel model(*reader);
  EXPECT_EQ(s["lanes"].size(), model.lanes().size());
  for (const auto& lane : s["lanes"]) EXPECT_FALSE(lane.contains("group"));
  // The multi-rank flags need a directory.
  const auto bad = view(job() + "/rank_1.db --panel collective --screenshot " + out("bad.png"));
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.output.find("needs a directory of rank traces"), std::string::npos) << bad.output;
}

TEST_F(ClusterViewerXvfbTest, ADirectoryWithoutRankTracesIsAClearError) {
  fs::create_directories(dir() / "empty");
  std::ofstream(dir() / "empty" / "x.db") << "junk\n";
  const auto r = view((dir() / "empty").string() + " --screenshot " + out("none.png"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("npuscope: error: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("no rank traces"), std::string::npos) << r.output;
}

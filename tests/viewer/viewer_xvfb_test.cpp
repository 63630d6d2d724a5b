// The viewer end to end, under Xvfb (Mesa llvmpipe): `npuscope view --screenshot` on a known trace
// and on a profiled sample writes a PNG that is not blank, and its --frame-stats match the trace's
// timeline model; --diff's panel and details line against two profiled runs; a file that is not a
// trace, and a missing display, give a clear error and a non-zero exit. xvfb-run missing is a failure
// (scripts/bootstrap.sh installs it), not a skip.
#include <gtest/gtest.h>
#include <stb/stb_image.h>

#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cli_test_util.h"
#include "collector/export_test_util.h"
#include "npuscope/viewer/pipe_lanes.h"
#include "npuscope/viewer/time_format.h"
#include "npuscope/viewer/timeline_model.h"

using namespace npuscope::testing;
using namespace npuscope::viewer;
using npuscope::collector::TraceReader;
using npuscope::collector::testing::ExportTest;
using npuscope::collector::testing::write_sample_trace;

namespace {

class ViewerXvfbTest : public ExportTest {
 protected:
  void SetUp() override {
    ExportTest::SetUp();
    ASSERT_EQ(run_command("command -v xvfb-run").status, 0)
        << "xvfb-run is missing: the viewer tests need it (scripts/bootstrap.sh installs xvfb, xauth and "
           "libgl1-mesa-dri)";
  }

  std::string xvfb_run() { return xvfb_run_prefix(100, dir_); }

  CommandResult view(const std::string& args) { return run_command(xvfb_run() + npuscope_cmd("view " + args)); }

  // Decodes the PNG; fails unless it has the size asked for and is not blank (many distinct colours).
  static void expect_picture(const std::string& png, int width, int height) {
    const std::string bytes = read_file(png);
    ASSERT_FALSE(bytes.empty()) << png << " was not written";
    int w = 0, h = 0, n = 0;
    unsigned char* pixels = stbi_load_from_memory(reinterpret_cast<const unsigned char*>(bytes.data()),
                                                  static_cast<int>(bytes.size()), &w, &h, &n, 4);
    ASSERT_NE(pixels, nullptr) << png << " is not a PNG";
    EXPECT_EQ(w, width);
    EXPECT_EQ(h, height);
    std::set<std::uint32_t> colours;
    for (int i = 0; i < w * h; i += 7) {
      colours.insert(pixels[4 * i] | pixels[4 * i + 1] << 8 | pixels[4 * i + 2] << 16);
    }
    stbi_image_free(pixels);
    EXPECT_GT(colours.size(), 20u) << png << " looks blank";
  }

  // The frame statistics against the model: every lane on screen, and per lane exactly the items
  // that overlap the view (drawn one by one or inside folded runs).
  static nlohmann::json expect_stats_match(const std::string& trace, const std::string& json_path) {
    const auto doc = nlohmann::json::parse(read_file(json_path));
    const auto reader = TraceReader::open(trace);
    const TimelineModel model(*reader);
    const std::int64_t a = doc["view"]["start_ns"], b = doc["view"]["end_ns"];
    EXPECT_EQ(doc["lanes_drawn"].get<std::size_t>(), model.lanes().size());
    std::size_t items = 0, drawn = 0, folded = 0;
    for (std::size_t l = 0; l < model.lanes().size() && l < doc["lanes"].size(); ++l) {
      const Lane& lane = model.lanes()[l];
      const auto& got = doc["lanes"][l];
      EXPECT_EQ(got["title"], lane.title);
      std::size_t expected = 0;
      for (const auto& row : lane.rows) {
        for (const TimelineItem& it : row) expected += it.end_ns() > a && it.start_ns < b;
      }
      EXPECT_EQ(got["items"].get<std::size_t>(), expected) << lane.title;
      EXPECT_EQ(got["drawn"].get<std::size_t>() - got["folded_items"].get<std::size_t>() +
                    got["items_in_folds"].get<std::size_t>(),
                expected)
          << lane.title;
      items += expected;
      drawn += got["drawn"].get<std::size_t>();
      folded += got["folded_items"].get<std::size_t>();
    }
    EXPECT_EQ(doc["items_in_view"].get<std::size_t>(), items);
    EXPECT_EQ(doc["items_drawn"].get<std::size_t>(), drawn);
    EXPECT_EQ(doc["folded_items"].get<std::size_t>(), folded);
    return doc;
  }
};

}  // namespace

TEST_F(ViewerXvfbTest, ScreenshotOfAKnownTraceMatchesItsModel) {
  write_sample_trace(path("t.db"));
  const CommandResult r = view(path("t.db") + " --screenshot " + path("t.png") + " --frame-stats " + path("t.json"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("wrote " + path("t.png") + " (1280x800)"), std::string::npos) << r.output;
  expect_picture(path("t.png"), 1280, 800);
  const auto doc = expect_stats_match(path("t.db"), path("t.json"));
  EXPECT_EQ(doc["items_in_view"], 4 + 1 + 6 + 3 + 0);  // tasks, copy, API calls, markers; memory has samples
  EXPECT_EQ(doc["selected_task"], 0);
}

TEST_F(ViewerXvfbTest, SelectShowsTheTaskAndTheFlowLineFromItsCall) {
  write_sample_trace(path("t.db"));
  // Task 4, the first "layer0/attn/MatMul", was launched by aclnnMatMul on thread 1 (connection 5).
  const CommandResult r =
      view(path("t.db") + " --select layer0/attn/MatMul --view 0:3000 --size 1000x700 --screenshot " + path("s.png") +
           " --frame-stats " + path("s.json"));
  ASSERT_EQ(r.status, 0) << r.output;
  expect_picture(path("s.png"), 1000, 700);
  const auto doc = expect_stats_match(path("t.db"), path("s.json"));
  EXPECT_EQ(doc["selected_task"], 4);
  EXPECT_EQ(doc["flow_line"], true);
  EXPECT_EQ(doc["view"]["end_ns"].get<std::int64_t>() - doc["view"]["start_ns"].get<std::int64_t>(), 3000);

  const CommandResult missing = view(path("t.db") + " --select NoSuchOp --screenshot " + path("x.png"));
  EXPECT_EQ(missing.status, 1) << missing.output;
  EXPECT_NE(missing.output.find("--select: no task named 'NoSuchOp'"), std::string::npos) << missing.output;
}

// Issue 15: `--view 0:2^62` (and, before the range check, 2^63) drew nothing: a view wider than
// zooming out goes is cut to 4x the trace's span from START, and every item in it is drawn.
TEST_F(ViewerXvfbTest, AHugeViewIsCutToWhatZoomingOutReaches) {
  write_sample_trace(path("t.db"));
  const CommandResult r = view(path("t.db") + " --view 0:4611686018427387904 --screenshot " + path("h.png") +
                               " --frame-stats " + path("h.json"));
  ASSERT_EQ(r.status, 0) << r.output;
  const auto doc = expect_stats_match(path("t.db"), path("h.json"));
  const auto reader = TraceReader::open(path("t.db"));
  const TimelineModel model(*reader);
  EXPECT_EQ(doc["view"]["start_ns"].get<std::int64_t>(), model.first_ns());
  EXPECT_EQ(doc["view"]["end_ns"].get<std::int64_t>() - doc["view"]["start_ns"].get<std::int64_t>(),
            4 * std::max<std::int64_t>(model.last_ns() - model.first_ns(), 1000));
  EXPECT_EQ(doc["items_in_view"], 4 + 1 + 6 + 3 + 0);  // everything, as with the default view
  const CommandResult refused = view(path("t.db") + " --view 0:9223372036854775807 --screenshot " + path("x.png"));
  EXPECT_EQ(refused.status, 2) << refused.output;
  EXPECT_NE(refused.output.find("(2^62)"), std::string::npos) << refused.output;
}

TEST_F(ViewerXvfbTest, EveryPanelRendersAndTheViewerProgramToo) {
  write_sample_trace(path("t.db"));
  for (const char* panel : {"details", "ops", "findings", "compare", "search", "diff"}) {
    const std::string png = path(std::string(panel) + ".png");
    // The Diff panel needs a BASE: the trace against itself.
    const std::string diff = std::string(panel) == "diff" ? " --diff " + path("t.db") : "";
    const CommandResult r =
        view(path("t.db") + diff + " --select layer0/attn/MatMul --panel " + panel + " --screenshot " + png);
    ASSERT_EQ(r.status, 0) << panel << ": " << r.output;
    expect_picture(png, 1280, 800);
  }
  const CommandResult r = run_command(xvfb_run() + std::string(NPUSCOPE_VIEWER) + " " + path("t.db") +
                                      " --screenshot " + path("v.png") + " --size 800x600");
  ASSERT_EQ(r.status, 0) << r.output;
  expect_picture(path("v.png"), 800, 600);
}

TEST_F(ViewerXvfbTest, OpensAProfiledSample) {
  const CommandResult run =
      run_command(npuscope_cmd("run --force -o " + path("p.db") + " -- " + std::string(NPUSCOPE_SAMPLES_DIR) +
                               "/multi_stream --threads 2 --streams 2 --ops 300"));
  ASSERT_EQ(run.status, 0) << run.output;
  const CommandResult r =
      view(path("p.db") + " --size 1280x1200 --screenshot " + path("p.png") + " --frame-stats " + path("p.json"));
  ASSERT_EQ(r.status, 0) << r.output;
  expect_picture(path("p.png"), 1280, 1200);
  const auto doc = expect_stats_match(path("p.db"), path("p.json"));
  EXPECT_GE(doc["items_in_view"].get<int>(), 600);  // 2 threads x 300 ops, at least
  EXPECT_GT(doc["lanes_drawn"].get<int>(), 2);
}

// Issue 19: a profiled custom kernel (the GELU sample) selected with --block shows that block's pipe
// lanes under its stream, in the op simulator's order, only the pipes it used, and (zoomed to the
// block) every instruction of the block drawn or folded.
TEST_F(ViewerXvfbTest, PipeLanesOfAProfiledCustomKernel) {
  const CommandResult run =
      run_command(npuscope_cmd("run --force -o " + path("k.db") + " -- " + std::string(NPUSCOPE_SAMPLES_DIR) +
                               "/opkit/opkit_samples --kernel gelu --n 100000"));
  ASSERT_EQ(run.status, 0) << run.output;
  const auto reader = TraceReader::open(path("k.db"));
  const TimelineModel model(*reader);
  std::int64_t task = 0;
  std::string name;
  for (const Lane& lane : model.lanes()) {
    if (lane.kind != LaneKind::kStream) continue;
    for (const TimelineItem& item : lane.rows[0]) {
      if (!(item.flags & kKernel)) continue;
      task = item.id;
      name = model.str(item.label_id);
    }
  }
  ASSERT_NE(task, 0) << "the trace has no KERNEL_BLOCK rows";
  const auto blocks = model.kernels().blocks_of(task);
  ASSERT_GT(blocks.size(), 1u);

  const CommandResult r = view(path("k.db") + " --select '" + name + "' --block 1 --screenshot " + path("k.png") +
                               " --frame-stats " + path("k.json"));
  ASSERT_EQ(r.status, 0) << r.output;
  expect_picture(path("k.png"), 1280, 800);
  const auto doc = nlohmann::json::parse(read_file(path("k.json")));
  EXPECT_EQ(doc["selected_task"], task);
  EXPECT_EQ(doc["pipe_block"], 1);
  const TaskPipes pipes = load_task_pipes(*reader, task, blocks, model.kernels().clock_hz(0));
  ASSERT_NE(pipes.block(1), nullptr);
  const BlockPipes& block = *pipes.block(1);
  std::vector<std::string> expected, drawn;
  for (const Lane& lane : block.lanes) expected.push_back(lane.title);
  std::size_t lane = 0;
  for (const auto& l : doc["lanes"]) {
    if (l["kind"] != "pipe") continue;
    drawn.push_back(l["title"]);
    if (lane < block.lanes.size()) {
      std::size_t items = 0;
      for (const auto& row : block.lanes[lane].rows) items += row.size();
      EXPECT_EQ(l["items"].get<std::size_t>(), items) << l["title"] << ": the whole block is in view";
    }
    ++lane;
  }
  EXPECT_EQ(drawn, expected);
  ASSERT_FALSE(drawn.empty());
  EXPECT_EQ(drawn.front(), "MTE2");  // GELU copies in on MTE2, computes on VECTOR, copies out on MTE3
  EXPECT_NE(std::find(drawn.begin(), drawn.end(), "VECTOR"), drawn.end());
  EXPECT_EQ(std::find(drawn.begin(), drawn.end(), "CUBE"), drawn.end()) << "only the pipes the block used";

  const CommandResult no_block = view(path("k.db") + " --select '" + name + "' --block " +
                                      std::to_string(blocks.back().block + 1) + " --screenshot " + path("x.png"));
  EXPECT_EQ(no_block.status, 1) << no_block.output;
  EXPECT_NE(no_block.output.find("--block: '" + name + "' has blocks 0 to"), std::string::npos) << no_block.output;
}

// Issue 22: `npuscope view NEW.db --diff BASE.db`. BASE is one LLaMA layer, NEW two layers at a
// longer sequence: layer0's ops pair by name (slower in NEW), layer1's are added. The Diff panel
// draws a row per op of either run; a selected layer0 op's details show its BASE call and
// duration, a layer1 op's that it is not in BASE.
TEST_F(ViewerXvfbTest, DiffPanelAndTheSelectedOpsBaseDuration) {
  const std::string llama =
      std::string(NPUSCOPE_SAMPLES_DIR) + "/llama_block --device npu --hidden 64 --heads 2 --ffn 96 --seq ";
  for (const auto& [trace, args] : {std::pair{"base.db", "16"}, std::pair{"new.db", "64 --layers 2"}}) {
    const CommandResult run = run_command(npuscope_cmd("run --force -o " + path(trace) + " -- " + llama + args));
    ASSERT_EQ(run.status, 0) << run.output;
  }
  // Each op runs once per pass here: its name is its key.
  const auto ops = [&](const std::string& trace) {
    std::map<std::string, npuscope::collector::TaskRow> out;
    const auto reader = TraceReader::open(trace);
    reader->for_each([&](const npuscope::collector::TaskRow& t) {
      if (npuscope::is_kernel_op(t.task_type)) out.emplace(reader->string(t.name_id), t);
    });
    return out;
  };
  const auto base = ops(path("base.db")), next = ops(path("new.db"));
  std::set<std::string> names;
  for (const auto* side : {&base, &next}) {
    for (const auto& [name, task] : *side) names.insert(name);
  }
  const std::string paired = "layer0/attn/qk", added = "layer1/attn/qk";
  ASSERT_TRUE(base.count(paired) && next.count(paired) && next.count(added) && !base.count(added));

  const std::string diff = path("new.db") + " --diff " + path("base.db") + " --size 1280x1000 --select ";
  const CommandResult shown =
      view(diff + paired + " --panel diff --screenshot " + path("d.png") + " --frame-stats " + path("d.json"));
  ASSERT_EQ(shown.status, 0) << shown.output;
  expect_picture(path("d.png"), 1280, 1000);
  const auto panel = nlohmann::json::parse(read_file(path("d.json")));
  EXPECT_EQ(panel["selected_task"], next.at(paired).task_id);
  ASSERT_TRUE(panel.contains("diff")) << "the Diff panel drew nothing";
  EXPECT_EQ(panel["diff"]["op_rows"].get<std::size_t>(), names.size()) << "a row per op of either run";

  const CommandResult details =
      view(diff + paired + " --panel details --screenshot " + path("p.png") + " --frame-stats " + path("p.json"));
  ASSERT_EQ(details.status, 0) << details.output;
  const auto pair = nlohmann::json::parse(read_file(path("p.json")));
  ASSERT_TRUE(pair.contains("diff")) << "the details panel showed no BASE line";
  const auto& b = base.at(paired);
  const auto& n = next.at(paired);
  const std::int64_t base_ns = b.end_ns - b.start_ns, new_ns = n.end_ns - n.start_ns;
  EXPECT_EQ(pair["diff"]["base_task"], b.task_id);
  EXPECT_EQ(pair["diff"]["base_ns"], base_ns);
  const std::string line = pair["diff"]["details"];
  const std::string expected = "base duration: " + format_duration(base_ns) + " (diff " +
                               (new_ns < base_ns ? "-" : "+") + format_duration(std::llabs(new_ns - base_ns)) +
                               ", ratio ";
  EXPECT_EQ(line.rfind(expected, 0), 0u) << line;

  const CommandResult add = view(diff + added + " --screenshot " + path("a.png") + " --frame-stats " + path("a.json"));
  ASSERT_EQ(add.status, 0) << add.output;
  const auto none = nlohmann::json::parse(read_file(path("a.json")));
  EXPECT_EQ(none["selected_task"], next.at(added).task_id);
  EXPECT_EQ(none["diff"]["details"], "added: not in BASE");
  EXPECT_EQ(none["diff"]["base_task"], 0);
}

TEST_F(ViewerXvfbTest, DiffUsageErrorsNameTheFlagOrTheFile) {
  write_sample_trace(path("t.db"));
  const CommandResult missing = view(path("t.db") + " --diff " + path("missing.db") + " --screenshot " + path("x.png"));
  EXPECT_EQ(missing.status, 1) << missing.output;
  EXPECT_NE(missing.output.find("--diff: "), std::string::npos) << missing.output;
  EXPECT_NE(missing.output.find(path("missing.db")), std::string::npos) << missing.output;
  EXPECT_FALSE(std::filesystem::exists(path("x.png"))) << "refused before any frame";
  const CommandResult no_diff = view(path("t.db") + " --panel diff --screenshot " + path("x.png"));
  EXPECT_EQ(no_diff.status, 2) << no_diff.output;
  EXPECT_NE(no_diff.output.find("--panel diff needs --diff"), std::string::npos) << no_diff.output;
  std::filesystem::create_directories(path("ranks"));
  const CommandResult dir = view(path("t.db") + " --diff " + path("ranks") + " --screenshot " + path("x.png"));
  EXPECT_EQ(dir.status, 2) << dir.output;
  EXPECT_NE(dir.output.find("--diff: " + path("ranks") + " is a directory"), std::string::npos) << dir.output;
}

TEST_F(ViewerXvfbTest, AFileThatIsNotATraceIsAClearError) {
  { std::ofstream(path("junk.db")) << "not a database at all, just text\n"; }
  const CommandResult r = view(path("junk.db") + " --screenshot " + path("x.png"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("npuscope: error: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("not an npuscope trace"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(path("x.png")));
  const CommandResult missing = view(path("missing.db") + " --screenshot " + path("x.png"));
  EXPECT_NE(missing.status, 0) << missing.output;
  EXPECT_NE(missing.output.find(path("missing.db")), std::string::npos) << missing.output;
  const CommandResult usage = view(path("junk.db") + " --size 5");
  EXPECT_EQ(usage.status, 2) << usage.output;
}

TEST_F(ViewerXvfbTest, NoDisplayIsAClearErrorNotACrash) {
  write_sample_trace(path("t.db"));
  const CommandResult r = run_command("env -u DISPLAY -u WAYLAND_DISPLAY " + npuscope_cmd("view " + path("t.db")));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("DISPLAY"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("xvfb-run"), std::string::npos) << r.output;
}

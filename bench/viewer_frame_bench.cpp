// How long does the viewer take to draw a frame of a big trace? (issue 7: <= 16 ms median at
// 1280x800, fully zoomed out and at mid zoom, 10M tasks, under Xvfb with Mesa's llvmpipe.)
//   ViewerFrame/N/ZOOM  one whole frame (ImGui layout, every lane through visible_items, panels,
//                       OpenGL draw into the offscreen target, glFinish) on the synthetic trace of N
//                       tasks (bench/synthetic_trace.h, an API call per task); ZOOM 0 = fit all,
//                       1 = mid zoom (1/1000 of the trace, ~10k tasks across the screen).
// Counters: items_drawn, folded_items (drawn items that are folded runs), items_in_view.
//   DumpCompareFrame/N  one whole frame of `npuscope view --compare D D` (no trace: the Compare panel
//                       alone, its entries table through a clipper) on a statistics dump of N entries
//                       compared with itself: N = 760 the real ResNet-50 dump of shared/realdata
//                       (skipped when absent), else the synthetic dump of bench/synthetic_dump.h.
//                       Counters: entries, rows_drawn (entry rows drawn: the clipper's, not N).
//
// It needs a display: bench/run_bench.sh runs it under `xvfb-run -a` (as `make bench` does). With no
// display it reports the reason through SkipWithError instead of a time.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <memory>
#include <string>

#include "npuscope/viewer/viewer_app.h"
#include "synthetic_dump.h"
#include "synthetic_trace.h"

using namespace npuscope;

namespace {

struct Session {
  std::unique_ptr<viewer::ViewerSession> viewer;
  std::string error;
};

// One window at a time (Dear ImGui's context is the process's): the session of `key`, opened with
// `options` unless it is the one open, for all repetitions (writing and loading 10M tasks takes
// seconds).
Session& session(const std::string& key, const viewer::ViewerOptions& options) {
  static std::string open_key;
  static Session s;
  if (key == open_key) return s;
  s.viewer.reset();  // closes the other window first
  s.error.clear();
  open_key = key;
  try {
    s.viewer = std::make_unique<viewer::ViewerSession>(options, true);
  } catch (const std::exception& e) {
    s.error = e.what();
  }
  return s;
}

Session& session(std::int64_t tasks) {
  viewer::ViewerOptions options;
  options.trace = bench::cached_synthetic_trace(tasks, true);
  return session("trace " + std::to_string(tasks), options);
}

void ViewerFrame(benchmark::State& state) {
  Session& s = session(state.range(0));
  if (!s.viewer) {
    state.SkipWithError(("no display, no frame times: " + s.error).c_str());
    return;
  }
  const viewer::TimelineModel& model = s.viewer->model();
  const std::int64_t span = model.last_ns() - model.first_ns();
  if (state.range(1) == 0) {
    s.viewer->set_view(model.first_ns(), model.last_ns());
  } else {
    const std::int64_t mid = model.first_ns() + span / 2;
    s.viewer->set_view(mid - span / 2000, mid + span / 2000);
  }
  viewer::FrameStats stats;
  for (int i = 0; i < 3; ++i) stats = s.viewer->render_offscreen();  // layout settles
  for (auto _ : state) stats = s.viewer->render_offscreen();
  state.counters["items_drawn"] = static_cast<double>(stats.drawn());
  state.counters["folded_items"] = static_cast<double>(stats.folded());
  state.counters["items_in_view"] = static_cast<double>(stats.items());
}

constexpr std::int64_t kRealDumpEntries = 760;

// The dump compared with itself (the first offscreen frame waits for the comparison).
Session& dump_session(std::int64_t entries, std::string& skip) {
  std::string dump;
  if (entries == kRealDumpEntries) {
    dump = std::string(NPUSCOPE_REALDATA_DIR) + "/msprobe/resnet50_gpu/step0/proc2016";
    if (!std::filesystem::exists(dump)) skip = "shared/realdata is absent (" + dump + ")";
  } else {
    dump = bench::synthetic_dump_dir(static_cast<std::size_t>(entries));
  }
  viewer::ViewerOptions options;
  options.compare_npu = options.compare_bench = dump;
  static Session none;
  return skip.empty() ? session("dump " + dump, options) : none;
}

void DumpCompareFrame(benchmark::State& state) {
  std::string skip;
  Session& s = dump_session(state.range(0), skip);
  if (!skip.empty() || !s.viewer) {
    state.SkipWithError((skip.empty() ? "no display, no frame times: " + s.error : skip).c_str());
    return;
  }
  viewer::FrameStats stats;
  for (int i = 0; i < 3; ++i) stats = s.viewer->render_offscreen();  // the comparison ends, layout settles
  for (auto _ : state) stats = s.viewer->render_offscreen();
  state.counters["entries"] = static_cast<double>(stats.dumps.entries);
  state.counters["rows_drawn"] = static_cast<double>(stats.dumps.rows_drawn);
}

}  // namespace

BENCHMARK(DumpCompareFrame)->Arg(kRealDumpEntries)->Arg(100'000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(ViewerFrame)->Args({10'000'000, 0})->Args({10'000'000, 1})->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();

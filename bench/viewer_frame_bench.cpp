// How long does the viewer take to draw a frame of a big trace? (issue 7: <= 16 ms median at
// 1280x800, fully zoomed out and at mid zoom, 10M tasks, under Xvfb with Mesa's llvmpipe.)
//   ViewerFrame/N/ZOOM  one whole frame (ImGui layout, every lane through visible_items, panels,
//                       OpenGL draw into the offscreen target, glFinish) on the synthetic trace of N
//                       tasks (bench/synthetic_trace.h, an API call per task); ZOOM 0 = fit all,
//                       1 = mid zoom (1/1000 of the trace, ~10k tasks across the screen).
// Counters: items_drawn, folded_items (drawn items that are folded runs), items_in_view.
//
// It needs a display: bench/run_bench.sh runs it under `xvfb-run -a` (as `make bench` does). With no
// display it reports the reason through SkipWithError instead of a time.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "npuscope/viewer/viewer_app.h"
#include "synthetic_trace.h"

using namespace npuscope;

namespace {

struct Session {
  std::unique_ptr<viewer::ViewerSession> viewer;
  std::string error;
};

// One trace and one window for all repetitions: writing and loading 10M tasks takes seconds.
Session& session(std::int64_t tasks) {
  static Session s;
  if (s.viewer || !s.error.empty()) return s;
  viewer::ViewerOptions options;
  options.trace = bench::cached_synthetic_trace(tasks, true);
  try {
    s.viewer = std::make_unique<viewer::ViewerSession>(options, true);
  } catch (const std::exception& e) {
    s.error = e.what();
  }
  return s;
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

}  // namespace

BENCHMARK(ViewerFrame)->Args({10'000'000, 0})->Args({10'000'000, 1})->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();

// The thin application shell: the GLFW window and OpenGL context, Dear ImGui's setup, the frame
// (toolbar, timeline, panel tabs; or, for --compare without a trace, the Compare panel alone), and
// the two ways to run it: interactive, or one offscreen frame written as PNG (--screenshot).
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <limits>
#include <optional>
#include <thread>

#include "cluster_view.h"
#include "diff_job.h"
#include "dump_job.h"
#include "npuscope/comparator/compare.h"
#include "npuscope/comparator/dump_mapping.h"
#include "npuscope/viewer/op_search.h"
#include "npuscope/viewer/time_format.h"
#include "npuscope/viewer/viewer_app.h"
#include "offscreen.h"
#include "panel.h"
#include "timeline.h"

namespace npuscope::viewer {
namespace {

std::string g_glfw_error;  // the last GLFW error, for the message when a window cannot be opened

void on_glfw_error(int code, const char* text) { g_glfw_error = std::to_string(code) + ": " + (text ? text : "?"); }

[[noreturn]] void no_display(const std::string& what) {
  throw ViewerError(what + " (GLFW " + g_glfw_error +
                    "). The viewer needs a display: set DISPLAY to an X server, or run it headless under Xvfb, "
                    "e.g. `xvfb-run -a npuscope view T.db --screenshot out.png` (scripts/bootstrap.sh installs "
                    "xvfb, xauth and libgl1-mesa-dri)");
}

// Tries OpenGL 3.3 core first (what Mesa and the drivers give), then whatever the system offers.
GLFWwindow* open_window(int width, int height, bool visible, const char** glsl) {
  glfwWindowHint(GLFW_VISIBLE, visible ? GLFW_TRUE : GLFW_FALSE);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  *glsl = "#version 330 core";
  if (GLFWwindow* w = glfwCreateWindow(width, height, "npuscope", nullptr, nullptr)) return w;
  glfwDefaultWindowHints();
  glfwWindowHint(GLFW_VISIBLE, visible ? GLFW_TRUE : GLFW_FALSE);
  *glsl = "#version 130";
  return glfwCreateWindow(width, height, "npuscope", nullptr, nullptr);
}

}  // namespace

struct ViewerSession::Impl {
  ViewerOptions options;
  bool offscreen = false;
  // One trace ...
  std::unique_ptr<collector::TraceReader> reader;
  std::optional<TimelineModel> model;
  std::optional<ViewerState> state;
  std::optional<Timeline> timeline;
  std::unique_ptr<DiffJob> diff;  // --diff BASE.db
  std::vector<std::unique_ptr<Panel>> panels;
  // --compare NPU BENCH (dump_comparison.h): a panel among the trace's, or, without a trace, the
  // window's only one (dump_panel).
  std::unique_ptr<DumpCompareJob> dumps;
  FrameContext dump_frame;
  std::unique_ptr<Panel> dump_panel;
  // ... or a directory of rank traces (Note [Cluster model]).
  std::optional<ClusterModel> ranks;
  std::optional<ClusterView> cluster;
  GLFWwindow* window = nullptr;
  bool imgui_ready = false;
  std::optional<OffscreenTarget> target;

  ~Impl() {
    target.reset();
    if (imgui_ready) {
      ImGui_ImplOpenGL3_Shutdown();
      ImGui_ImplGlfw_Shutdown();
      ImGui::DestroyContext();
    }
    if (window) glfwDestroyWindow(window);
    glfwTerminate();
  }

  // The state selections and --view go through: the single trace's, or the rank holding the selection.
  ViewerState& current() { return cluster ? cluster->active() : *state; }
  bool has_timeline() const { return cluster || state; }
  std::int64_t axis_first_ns() { return current().axis_first_ns(); }

  void open_trace() {
    if (options.compares_dumps()) open_dumps();
    if (options.trace.empty()) {
      dump_panel = make_dump_compare_panel(*dumps, nullptr, dump_frame, options.select);
      return;
    }
    if (ClusterModel::is_directory(options.trace)) return open_ranks();
    if (options.panel == "collective" || options.rank) {
      throw ViewerError(std::string(options.rank ? "--rank" : "--panel collective") +
                        " needs a directory of rank "
                        "traces, and " +
                        options.trace + " is a single trace");
    }
    reader = collector::TraceReader::open(options.trace, {.verify = false});
    model.emplace(*reader);
    state.emplace(*model, *reader);
    state->single_frame = offscreen;
    timeline.emplace(*state);
    panels.push_back(make_details_panel(*state));
    panels.push_back(make_op_stats_panel(*state));
    panels.push_back(make_findings_panel(*state));
    if (!options.diff.empty()) open_diff();
    if (dumps)
      panels.push_back(make_dump_compare_panel(*dumps, &*state, dump_frame, ""));
    else
      panels.push_back(make_compare_panel(*state));
    panels.push_back(make_search_panel(*state));
  }

  // --compare NPU BENCH: the name map is read here, so that a bad one is refused before the window
  // opens; the dumps are read and compared in the background, and what goes wrong there is the
  // panel's to say.
  void open_dumps() {
    DumpCompareRequest request{options.compare_npu, options.compare_bench, {}};
    request.options.fuzzy_match = options.fuzzy_match;
    try {
      if (!options.mapping.empty()) request.options.mapping = comparator::load_dump_mapping(options.mapping);
    } catch (const analyzer::NameMapError& e) {
      throw ViewerError("--mapping: " + std::string(e.what()));
    }
    dump_frame.single_frame = offscreen;
    dumps = std::make_unique<DumpCompareJob>(std::move(request));
  }

  // --diff BASE.db: BASE is opened here, so that a bad one is refused before the window opens; the
  // diff itself runs in the background (diff_job.h).
  void open_diff() {
    std::unique_ptr<collector::TraceReader> base;
    try {
      base = collector::TraceReader::open(options.diff, {.verify = false});
    } catch (const collector::TraceError& e) {
      throw ViewerError("--diff: " + std::string(e.what()));
    }
    diff = std::make_unique<DiffJob>(std::move(base), options.trace);
    state->diff = diff.get();
    panels.push_back(make_diff_panel(*state));
  }

  void open_ranks() {
    ranks.emplace(options.trace, std::clamp(std::thread::hardware_concurrency(), 1u, 4u));
    for (const std::string& p : ranks->problems()) std::fprintf(stderr, "%s: %s\n", options.trace.c_str(), p.c_str());
    cluster.emplace(*ranks, offscreen);
  }

  void open_window_and_ui() {
    glfwSetErrorCallback(on_glfw_error);
    if (!glfwInit()) no_display("cannot open a window: no display");
    const char* glsl = nullptr;
    window = open_window(options.width, options.height, !offscreen, &glsl);
    if (!window) no_display("cannot create an OpenGL 3 window");
    glfwMakeContextCurrent(window);
    glfwSwapInterval(offscreen ? 0 : 1);
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGui::GetIO().IniFilename = nullptr;  // no imgui.ini left in the working directory
    ImGui::StyleColorsDark();
    ImGui_ImplGlfw_InitForOpenGL(window, true);
    ImGui_ImplOpenGL3_Init(glsl);
    imgui_ready = true;
    if (offscreen) target.emplace(options.width, options.height);
  }

  void draw_ui(FrameStats& stats) {
    const ImGuiIO& io = ImGui::GetIO();
    ImGui::SetNextWindowPos(ImVec2(0, 0));
    ImGui::SetNextWindowSize(io.DisplaySize);
    constexpr ImGuiWindowFlags kFlags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                        ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoBringToFrontOnFocus;
    ImGui::Begin("npuscope", nullptr, kFlags);
    dump_frame.stats = &stats;
    if (dump_panel) {
      dump_panel->draw();
      dump_frame.stats = nullptr;
      ImGui::End();
      return;
    }
    draw_toolbar();
    const float avail = ImGui::GetContentRegionAvail().y;
    const float panels_h = std::max(160.0f, avail * 0.36f);
    if (cluster) {
      cluster->draw_timeline(avail - panels_h, stats);
      cluster->draw_panels();
    } else {
      state->frame_stats = &stats;
      timeline->draw(avail - panels_h, stats);
      draw_panels();
      state->frame_stats = nullptr;
    }
    dump_frame.stats = nullptr;
    ImGui::End();
  }

  void draw_toolbar() {
    if (cluster) return draw_cluster_toolbar();
    ImGui::Text("%s   %lld tasks, %zu lanes%s", options.trace.c_str(), static_cast<long long>(model->tasks()),
                model->lanes().size(), model->has_compare_results() ? ", coloured by compare verdict" : "");
    ImGui::SameLine();
    if (ImGui::SmallButton("fit all (F)")) state->fit_all();
    ImGui::SameLine();
    if (ImGui::SmallButton("zoom to selection (Z)")) state->zoom_to_selection();
  }

  void draw_cluster_toolbar() {
    std::size_t lanes = 0;
    for (const RankTrace& r : ranks->ranks()) lanes += r.model->lanes().size();
    ImGui::Text("%s   %zu ranks, %lld tasks, %zu lanes", options.trace.c_str(), ranks->ranks().size(),
                static_cast<long long>(ranks->tasks()), lanes);
    ImGui::SameLine();
    if (ImGui::SmallButton("fit all (F)")) cluster->active().fit_all();
    ImGui::SameLine();
    if (ImGui::SmallButton("zoom to selection (Z)")) cluster->active().zoom_to_selection();
    // What was skipped: a few lines, the rest on stderr.
    const auto& problems = ranks->problems();
    for (std::size_t i = 0; i < problems.size() && i < 3; ++i)
      ImGui::TextColored(ImVec4(1, 0.75f, 0.3f, 1), "%s", problems[i].c_str());
    if (problems.size() > 3)
      ImGui::TextColored(ImVec4(1, 0.75f, 0.3f, 1), "... %zu more (stderr)", problems.size() - 3);
  }

  void draw_panels() {
    if (!ImGui::BeginTabBar("panels")) return;
    for (const auto& p : panels) {
      const bool focus = state->focus_panel == p->id();
      if (ImGui::BeginTabItem(p->title(), nullptr, focus ? ImGuiTabItemFlags_SetSelected : 0)) {
        if (focus) state->focus_panel.clear();
        p->draw();
        ImGui::EndTabItem();
      }
    }
    ImGui::EndTabBar();
  }

  FrameStats frame(bool to_target) {
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    FrameStats stats;
    draw_ui(stats);
    ImGui::Render();
    int w = 0, h = 0;
    glfwGetFramebufferSize(window, &w, &h);
    if (to_target)
      target->bind();
    else
      glViewport(0, 0, w, h);
    glClearColor(0.08f, 0.08f, 0.10f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    if (to_target) target->unbind();
    return stats;
  }
};

ViewerSession::ViewerSession(const ViewerOptions& options, bool offscreen) : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
  impl_->offscreen = offscreen;
  impl_->open_trace();  // first: a file that is not a trace is refused before any window opens
  impl_->open_window_and_ui();
  if (!impl_->has_timeline()) return;  // --compare alone: --select is the panel's (an entry)
  impl_->current().focus_panel = options.panel.empty() ? "details" : options.panel;
  if (!options.select.empty() && impl_->cluster) {
    if (!impl_->cluster->select_op(options.select, options.rank)) {
      throw ViewerError("--select: no task named '" + options.select + "'" +
                        (options.rank ? " on rank " + std::to_string(*options.rank) : " on any rank"));
    }
  } else if (!options.select.empty()) {
    TimelineModel::Location at;
    if (!find_op(*impl_->model, options.select, at))
      throw ViewerError("--select: no task named '" + options.select + "'");
    impl_->state->select(at, true);
  }
  if (options.block) select_block(*options.block);
  if (options.view) {
    // Offsets within +-2^62 (kMaxViewOffsetNs) from a trace timestamp: saturate rather than wrap.
    const auto at = [&](std::int64_t offset) {
      std::int64_t ns = 0;
      if (!__builtin_add_overflow(impl_->axis_first_ns(), offset, &ns)) return ns;
      return offset > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
    };
    set_view(at(options.view->first), at(options.view->second));
  }
}

// --block: the selected custom kernel's block whose pipe lanes show, zoomed to (--view, applied
// after, still sets the range).
void ViewerSession::select_block(std::int32_t block) {
  ViewerState& s = impl_->current();
  const auto blocks = s.selected_blocks();
  if (blocks.empty()) {
    throw ViewerError("--block: '" + impl_->options.select +
                      "' is not a custom (opkit) kernel: the trace has no KERNEL_BLOCK rows for it");
  }
  if (!s.select_block(block, false)) {
    throw ViewerError("--block: '" + impl_->options.select + "' has blocks " + std::to_string(blocks.front().block) +
                      " to " + std::to_string(blocks.back().block) + ", not " + std::to_string(block));
  }
  s.zoom_to_block();
}

ViewerSession::~ViewerSession() = default;

const TimelineModel& ViewerSession::model() const {
  if (!impl_->has_timeline()) throw ViewerError("no trace: --compare without TRACE has no timeline model");
  return impl_->cluster ? *impl_->ranks->ranks()[impl_->cluster->active_rank()].model : *impl_->model;
}

void ViewerSession::set_view(std::int64_t start_ns, std::int64_t end_ns) {
  if (!impl_->has_timeline()) return;
  if (impl_->cluster) return impl_->cluster->set_view(start_ns, end_ns);
  impl_->state->zoom_to(start_ns, end_ns);
}

FrameStats ViewerSession::render_offscreen() {
  glfwPollEvents();
  FrameStats stats = impl_->frame(true);
  glFinish();
  return stats;
}

void ViewerSession::write_png(const std::string& path) const { impl_->target->write_png(path); }

FrameStats ViewerSession::run_interactive() {
  FrameStats stats;
  while (!glfwWindowShouldClose(impl_->window)) {
    glfwPollEvents();
    stats = impl_->frame(false);
    glfwSwapBuffers(impl_->window);
  }
  return stats;
}

int run_viewer(const ViewerOptions& options) {
  const bool offscreen = !options.screenshot.empty();
  ViewerSession session(options, offscreen);
  FrameStats stats;
  if (offscreen) {
    // A few frames: tables and tab bars settle their layout over the first two.
    for (int i = 0; i < 3; ++i) stats = session.render_offscreen();
    session.write_png(options.screenshot);
    std::printf("wrote %s (%dx%d): %zu lanes, %zu items drawn, %zu folded runs holding %zu items\n",
                options.screenshot.c_str(), options.width, options.height, stats.lanes.size(), stats.drawn(),
                stats.folded(), [&] {
                  std::size_t n = 0;
                  for (const auto& l : stats.lanes) n += l.folded_items;
                  return n;
                }());
  } else {
    stats = session.run_interactive();
  }
  if (!options.frame_stats.empty()) {
    std::ofstream out(options.frame_stats);
    out << stats.to_json();
    if (!out) throw ViewerError("cannot write the frame statistics " + options.frame_stats);
  }
  return 0;
}

}  // namespace npuscope::viewer

// The desktop application (Dear ImGui + GLFW + OpenGL 3): library npuscope::viewer_app, linked by
// the npuscope-viewer program (which `npuscope view` runs) and the frame bench; not installed with
// the SDK. Everything under it (lanes, panels) is private to viewer/src/app.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "npuscope/viewer/frame_stats.h"
#include "npuscope/viewer/view_options.h"

namespace npuscope::viewer {

// No display, no OpenGL 3 context, an unwritable screenshot: the message says what to do.
class ViewerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A window (hidden for screenshots), the trace's model and the UI on top of it.
class ViewerSession {
 public:
  // Opens the trace (collector::TraceError if it is not one), or every rank trace of a directory
  // (Note [Cluster model] in cluster_model.h), and the window (ViewerError); with `offscreen` the
  // window stays hidden and frames go to an offscreen target of the options' size.
  ViewerSession(const ViewerOptions& options, bool offscreen);
  ~ViewerSession();
  ViewerSession(const ViewerSession&) = delete;
  ViewerSession& operator=(const ViewerSession&) = delete;

  // The trace's model; of a directory, the model of the rank holding the selection (else the first).
  const TimelineModel& model() const;
  // The range shown, absolute ns on the trace's clock (a directory: on every rank).
  void set_view(std::int64_t start_ns, std::int64_t end_ns);
  // Shows the pipe lanes of this block of the selected custom kernel and zooms to it (ViewerError if
  // the selection is not a custom kernel or has no such block).
  void select_block(std::int32_t block);
  // Renders one frame into the offscreen target and waits for the GPU (glFinish); returns what the
  // timeline drew.
  FrameStats render_offscreen();
  // Writes the offscreen target's pixels as PNG (ViewerError if it cannot).
  void write_png(const std::string& path) const;
  // Interactive: runs until the window is closed; returns the last frame's stats.
  FrameStats run_interactive();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// What both front-ends run: the interactive viewer, or one screenshot. Returns the exit status.
int run_viewer(const ViewerOptions& options);

}  // namespace npuscope::viewer

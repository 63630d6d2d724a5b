// npuscope view: the timeline viewer (viewer/), interactive or one --screenshot.
//
//   npuscope view TRACE.db [--screenshot FILE.png] [--size WxH] [--view START_NS:END_NS] [--select OP]
//                          [--panel NAME] [--frame-stats FILE.json]
//
// The flags are the viewer's own (npuscope::viewer::parse_view_args), shared with npuscope-viewer.
// Not a trace: "npuscope: error: ..." (collector::TraceError), exit 1; no display: the same, naming
// DISPLAY and xvfb-run.
#include <cstdio>

#include "command.h"
#include "npuscope/viewer/viewer_app.h"

namespace npuscope::cli {

int view_command(int argc, char** argv) {
  viewer::ViewerOptions options;
  try {
    options = viewer::parse_view_args(argc, argv);
  } catch (const viewer::ViewUsageError& e) {
    throw UsageError(std::string(e.what()) + "\nusage: " + viewer::kViewUsage);
  }
  if (options.help) {
    std::printf("usage: %s\n%s\n", viewer::kViewUsage, viewer::kViewHelp);
    return 0;
  }
  return viewer::run_viewer(options);
}

}  // namespace npuscope::cli

// npuscope view: the timeline viewer, which is the npuscope-viewer program (viewer/src/app).
//
//   npuscope view TRACE.db|DIR [--screenshot FILE.png] [--size WxH] [--view START_NS:END_NS] [--select OP]
//                              [--rank R] [--block N] [--diff BASE.db] [--panel NAME] [--frame-stats FILE.json]
//                              [--compare NPU BENCH [--fuzzy-match] [--mapping FILE]]
//   npuscope view --compare NPU BENCH [...]   (no trace: the Compare panel alone)
//
// DIR: the rank traces of a multi-rank job, on one time axis (Note [Cluster model] in
// viewer/cluster_model.h).
// --diff BASE.db: npuscope diff BASE.db TRACE.db in the viewer's Diff panel (viewer/src/app/diff_job.h).
// --compare NPU BENCH: npuscope compare NPU BENCH in the viewer's Compare panel
// (viewer/dump_comparison.h); an msprobe dump is passed on as given (it is read, not imported), a
// trace as the path to open (recover_trace_path: its spool recovered, a real profile imported).
//
// Note [Headless CLI]: the npuscope binary links no GUI library (ImGui, GLFW, OpenGL), so that it
// runs, and installs, on machines without a display stack (tests/cli/headless_cli_test.cpp checks
// its DT_NEEDED). The flags are checked here with the viewer's headless parser (a usage error or
// --help needs no viewer), then this process becomes npuscope-viewer by execv: its exit status and
// its stderr are the command's. Its argv[0] is "npuscope", which the viewer uses as the name in its
// messages ("npuscope: error: ..."). The program is $NPUSCOPE_VIEWER, else the installed one beside
// this binary (bin/npuscope-viewer), else this build's (build/viewer): shipped_files.h.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "command.h"
#include "npuscope/importer/import.h"
#include "npuscope/importer/msprobe_dump_reader.h"
#include "npuscope/viewer/view_options.h"
#include "open_trace.h"
#include "shipped_files.h"

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
  const std::string program = viewer_program();
  // A real profile given as the trace or the --diff base: the viewer opens its cached import. A
  // --compare side that is no msprobe dump is a trace, opened as npuscope compare opens it: a killed
  // run's spool recovered, a real profile imported (Note [Dump comparison sides]).
  const auto opened_here = [&](const std::string& arg) {
    if ((arg == options.trace || arg == options.diff) && importer::detect(arg)) return true;
    return (arg == options.compare_npu || arg == options.compare_bench) && !importer::is_msprobe_dump(arg);
  };
  std::deque<std::string> imported;  // their paths, which args points into (a deque keeps them in place)
  std::vector<char*> args{const_cast<char*>("npuscope")};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (opened_here(arg)) {
      args.push_back(imported.emplace_back(recover_trace_path(arg)).data());
    } else {
      args.push_back(argv[i]);
    }
  }
  args.push_back(nullptr);
  std::fflush(nullptr);
  execv(program.c_str(), args.data());
  throw std::runtime_error("cannot run the viewer " + program + ": " + std::strerror(errno));
}

}  // namespace npuscope::cli

// npuscope view: the timeline viewer, which is the npuscope-viewer program (viewer/src/app).
//
//   npuscope view TRACE.db|DIR [--screenshot FILE.png] [--size WxH] [--view START_NS:END_NS] [--select OP]
//                              [--rank R] [--block N] [--diff BASE.db] [--panel NAME] [--frame-stats FILE.json]
//
// DIR: the rank traces of a multi-rank job, on one time axis (Note [Cluster model] in
// viewer/cluster_model.h).
// --diff BASE.db: npuscope diff BASE.db TRACE.db in the viewer's Diff panel (viewer/src/app/diff_job.h).
//
// Note [Headless CLI]: the npuscope binary links no GUI library (ImGui, GLFW, OpenGL), so that it
// runs, and installs, on machines without a display stack (tests/cli/headless_cli_test.cpp checks
// its DT_NEEDED). The flags are checked here with the viewer's headless parser (a usage error or
// --help needs no viewer), then this process becomes npuscope-viewer by execv: its exit status and
// its stderr are the command's. Its argv[0] is "npuscope", which the viewer uses as the name in its
// messages ("npuscope: error: ..."). The program is looked for in this order:
//   1. $NPUSCOPE_VIEWER;
//   2. beside this binary (the installed layout: bin/npuscope-viewer next to bin/npuscope);
//   3. where this build put it (NPUSCOPE_VIEWER_BUILD_PATH: build/viewer, not build/cli).
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "command.h"
#include "npuscope/viewer/view_options.h"

namespace npuscope::cli {
namespace {

namespace fs = std::filesystem;

bool is_executable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0;
}

// See Note [Headless CLI] for the order. Throws when none is found, saying what to install.
std::string viewer_program() {
  if (const char* v = std::getenv("NPUSCOPE_VIEWER"); v != nullptr && *v != '\0') {
    if (!is_executable(v)) {
      throw std::runtime_error(std::string("NPUSCOPE_VIEWER is set to '") + v +
                               "', which is not an executable program");
    }
    return v;
  }
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  const fs::path beside = self.parent_path() / "npuscope-viewer";
  if (!ec && is_executable(beside)) return beside.string();
  const fs::path built = NPUSCOPE_VIEWER_BUILD_PATH;
  if (is_executable(built)) return built.string();
  throw std::runtime_error("npuscope view needs the npuscope-viewer program, which is not installed (looked at " +
                           beside.string() + " and " + built.string() +
                           "): install it beside npuscope (cmake --install, or the npuscope .deb), build it "
                           "(cmake --build BUILD --target npuscope-viewer), or set NPUSCOPE_VIEWER to its path");
}

}  // namespace

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
  std::vector<char*> args{const_cast<char*>("npuscope")};
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  std::fflush(nullptr);
  execv(program.c_str(), args.data());
  throw std::runtime_error("cannot run the viewer " + program + ": " + std::strerror(errno));
}

}  // namespace npuscope::cli

// npuscope-viewer: the same viewer as `npuscope view`, as a program of its own. `npuscope view` runs
// it with argv[0] "npuscope" (Note [Headless CLI] in cli/src/view_command.cpp), so messages name the
// program by argv[0]'s file name: "npuscope: error: ..." there, "npuscope-viewer: error: ..." here.
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>

#include "npuscope/collector/trace_recovery.h"
#include "npuscope/viewer/viewer_app.h"

int main(int argc, char** argv) {
  using namespace npuscope::viewer;
  const std::string name =
      argc > 0 && argv[0][0] != '\0' ? std::filesystem::path(argv[0]).filename().string() : "npuscope-viewer";
  try {
    ViewerOptions options = parse_view_args(argc, argv);
    if (options.help) {
      std::printf("usage: %s\n%s\n", kViewUsage, kViewHelp);
      return 0;
    }
    // A killed run's trace is made from its spool first (Note [Recovering a killed run]).
    if (!options.trace.empty()) {  // --compare alone has none
      const npuscope::collector::TraceRecovery recovery = npuscope::collector::recover_trace(options.trace);
      if (recovery.recovered) std::fprintf(stderr, "%s: %s\n", name.c_str(), describe(recovery).c_str());
      options.trace = recovery.trace;
    }
    if (!options.diff.empty()) {
      const npuscope::collector::TraceRecovery base = npuscope::collector::recover_trace(options.diff);
      if (base.recovered) std::fprintf(stderr, "%s: %s\n", name.c_str(), describe(base).c_str());
      options.diff = base.trace;
    }
    return run_viewer(options);
  } catch (const ViewUsageError& e) {
    std::fprintf(stderr, "%s: error: %s\nusage: %s\n", name.c_str(), e.what(), kViewUsage);
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", name.c_str(), e.what());
    return 1;
  }
}

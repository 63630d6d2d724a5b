// npuscope-viewer: the same viewer as `npuscope view`, as a program of its own.
#include <cstdio>
#include <exception>

#include "npuscope/viewer/viewer_app.h"

int main(int argc, char** argv) {
  using namespace npuscope::viewer;
  try {
    const ViewerOptions options = parse_view_args(argc, argv);
    if (options.help) {
      std::printf("usage: %s\n%s\n", kViewUsage, kViewHelp);
      return 0;
    }
    return run_viewer(options);
  } catch (const ViewUsageError& e) {
    std::fprintf(stderr, "npuscope-viewer: error: %s\nusage: %s\n", e.what(), kViewUsage);
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "npuscope-viewer: error: %s\n", e.what());
    return 1;
  }
}

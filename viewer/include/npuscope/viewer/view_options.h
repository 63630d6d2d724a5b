// The viewer's command line, shared by `npuscope view` and `npuscope-viewer` (headless: parsed and
// checked without a display).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace npuscope::viewer {

inline constexpr const char* kViewUsage =
    "npuscope view TRACE.db|DIR [--screenshot FILE.png] [--size WxH] [--view START_NS:END_NS] [--select OP]\n"
    "                       [--rank R] [--block N] [--diff BASE.db]\n"
    "                       [--compare NPU_DUMP BENCH_DUMP [--fuzzy-match] [--mapping FILE]]\n"
    "                       [--panel details|ops|findings|compare|search|diff|collective] [--frame-stats FILE.json]\n"
    "       npuscope view --compare NPU_DUMP BENCH_DUMP [--fuzzy-match] [--mapping FILE] [--select ENTRY]\n"
    "                       [--screenshot FILE.png] [--size WxH] [--frame-stats FILE.json]";

inline constexpr const char* kViewHelp =
    "  DIR                     a directory of rank traces (one *.db per rank, with META rank): every rank on\n"
    "                          one time axis, a lane group per rank; other files are skipped and reported\n"
    "  --screenshot FILE.png   render one frame offscreen, write it as PNG and exit (no window shown)\n"
    "  --size WxH              the window or screenshot size, W and H from 64 to 16384 (default 1280x800)\n"
    "  --view START_NS:END_NS  the time range shown, in ns from the trace's first event (the ruler's 0);\n"
    "                          integers within +-2^62, START < END; a range wider than 4x the trace's span\n"
    "                          is cut to 4x from START (as far as zooming out goes)\n"
    "  --select OP             select the first task whose op name is OP (details panel, flow line); in a\n"
    "                          directory, on the first rank that has one: a collective shows on every rank\n"
    "  --rank R                with --select in a directory: select on rank R\n"
    "  --block N               with --select of a custom (opkit) kernel: show the pipe lanes of its block N\n"
    "                          (default 0) and zoom to that block (--view still sets the range)\n"
    "  --diff BASE.db          also diff BASE.db against TRACE.db (npuscope diff BASE.db TRACE.db): the Diff\n"
    "                          panel shows its tables (click an op to select it on TRACE's timeline) and\n"
    "                          the details panel the selected op's BASE duration; one trace, not a directory\n"
    "  --compare NPU BENCH     npuscope compare NPU BENCH in the Compare panel, each side an msprobe dump (a\n"
    "                          dump.json, its folder, a step*/rank*/ tree, an export --msprobe folder) or an\n"
    "                          npuscope trace run with --dump (its PyTorch dump, under msprobe's names):\n"
    "                          entries by verdict, the first failing one, each entry's values, stack and\n"
    "                          modules; without TRACE the window is that panel alone (--select ENTRY then\n"
    "                          selects a dump entry)\n"
    "  --fuzzy-match, -fm      with --compare: pair entries whatever their call index (msprobe's -fm)\n"
    "  --mapping FILE          with --compare: NPU names -> bench names (as npuscope compare --mapping)\n"
    "  --panel NAME            the panel shown first: details, ops, findings, compare, search, diff (with\n"
    "                          --diff) or (a directory) collective\n"
    "  --frame-stats FILE.json write what the (last) frame drew: lanes, items, folded runs\n"
    "  -h, --help              show this help\n"
    "keys: wheel or W/S zoom around the cursor, drag or A/D pan, F fit all, Z zoom to the selection,\n"
    "      N/P next/previous search match; click a task for its details";

// The largest |START_NS| and |END_NS| of --view (2^62): their difference and their sum with any
// trace timestamp (Note [Timestamp range] in npuscope/collector/time_math.h) stay within int64.
inline constexpr std::int64_t kMaxViewOffsetNs = std::int64_t{1} << 62;

// A bad flag or value: the message names it.
class ViewUsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ViewerOptions {
  std::string trace;        // a trace, or a directory of rank traces (Note [Cluster model] in cluster_model.h)
  std::string screenshot;   // non-empty: render one frame to this PNG and exit
  std::string frame_stats;  // non-empty: write the last frame's FrameStats as JSON
  int width = 1280, height = 800;
  std::optional<std::pair<std::int64_t, std::int64_t>> view;  // relative to the trace's first event
  std::string select;                                         // op name
  std::optional<std::int32_t> block;                          // --block: the pipe lanes' block
  std::string panel;                                          // "" = details
  std::optional<std::int32_t> rank;                           // --rank: where --select looks (a directory)
  std::string diff;                                           // --diff: the BASE trace diffed against `trace`
  // --compare NPU BENCH: two dump sides compared in the Compare panel (npuscope/viewer/dump_comparison.h);
  // `trace` may then be empty (no timeline).
  std::string compare_npu, compare_bench;
  bool fuzzy_match = false;  // --fuzzy-match / -fm
  std::string mapping;       // --mapping FILE
  bool help = false;

  bool compares_dumps() const { return !compare_npu.empty(); }
};

// argv[0] is the program or subcommand name. Throws ViewUsageError.
ViewerOptions parse_view_args(int argc, char** argv);

}  // namespace npuscope::viewer

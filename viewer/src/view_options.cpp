#include "npuscope/viewer/view_options.h"

#include <charconv>
#include <cstring>
#include <filesystem>
#include <limits>

namespace npuscope::viewer {
namespace {

std::int64_t parse_int(const std::string& s, const std::string& flag) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) {
    throw ViewUsageError(flag + ": '" + s + "' is not an integer" +
                         (ec == std::errc::result_out_of_range ? " within int64" : ""));
  }
  return v;
}

// "A<sep>B" -> {A, B}.
std::pair<std::int64_t, std::int64_t> parse_pair(const std::string& s, char sep, const std::string& flag) {
  const auto at = s.find(sep);
  if (at == std::string::npos) throw ViewUsageError(flag + ": expected A" + sep + "B, got '" + s + "'");
  return {parse_int(s.substr(0, at), flag), parse_int(s.substr(at + 1), flag)};
}

// --diff compares two single traces: a directory of rank traces on either side is refused here,
// before any trace is read (a missing or bad BASE is the viewer's error, as TRACE's is).
void check_diff(const ViewerOptions& o) {
  if (o.diff.empty()) {
    if (o.panel == "diff") throw ViewUsageError("--panel diff needs --diff BASE.db (the trace to diff against)");
    return;
  }
  std::error_code ec;
  if (std::filesystem::is_directory(o.diff, ec)) {
    throw ViewUsageError("--diff: " + o.diff +
                         " is a directory; --diff takes one BASE trace (to compare ranks, diff one rank's trace "
                         "with another's)");
  }
  if (!o.trace.empty() && std::filesystem::is_directory(o.trace, ec))
    throw ViewUsageError("--diff: " + o.trace + " is a directory of rank traces; --diff needs one trace to diff");
}

// --compare with no trace: a window of the Compare panel alone, so the flags of a timeline are refused.
void check_compare(const ViewerOptions& o) {
  if (!o.compares_dumps()) {
    if (o.fuzzy_match || !o.mapping.empty())
      throw ViewUsageError(std::string(o.fuzzy_match ? "--fuzzy-match" : "--mapping") +
                           " needs --compare NPU_DUMP BENCH_DUMP (it applies to a dump comparison)");
    return;
  }
  std::error_code ec;
  if (!o.trace.empty() && std::filesystem::is_directory(o.trace, ec))
    throw ViewUsageError("--compare: " + o.trace +
                         " is a directory of rank traces; --compare shows beside one trace, or alone (no TRACE)");
  if (!o.trace.empty()) return;
  const char* timeline_flag = o.view            ? "--view"
                              : o.block         ? "--block"
                              : o.rank          ? "--rank"
                              : !o.diff.empty() ? "--diff"
                                                : nullptr;
  if (timeline_flag != nullptr)
    throw ViewUsageError(std::string(timeline_flag) + " needs a trace: --compare without TRACE shows no timeline");
  if (!o.panel.empty() && o.panel != "compare")
    throw ViewUsageError("--panel " + o.panel +
                         " needs a trace: --compare without TRACE shows the Compare panel alone");
}

}  // namespace

ViewerOptions parse_view_args(int argc, char** argv) {
  ViewerOptions o;
  const auto value = [&](int& i, const std::string& flag) -> std::string {
    if (i + 1 >= argc) throw ViewUsageError(flag + " needs a value");
    return argv[++i];
  };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string inline_value;
    bool has_inline = false;
    if (arg.rfind("--", 0) == 0 && arg.find('=') != std::string::npos) {
      inline_value = arg.substr(arg.find('=') + 1);
      arg = arg.substr(0, arg.find('='));
      has_inline = true;
    }
    const auto v = [&]() { return has_inline ? inline_value : value(i, arg); };
    if (arg == "-h" || arg == "--help") {
      o.help = true;
    } else if (arg == "--screenshot") {
      o.screenshot = v();
    } else if (arg == "--frame-stats") {
      o.frame_stats = v();
    } else if (arg == "--size") {
      const auto [w, h] = parse_pair(v(), 'x', arg);
      if (w < 64 || h < 64 || w > 16384 || h > 16384) throw ViewUsageError("--size: WxH between 64 and 16384");
      o.width = static_cast<int>(w);
      o.height = static_cast<int>(h);
    } else if (arg == "--view") {
      o.view = parse_pair(v(), ':', arg);
      for (const std::int64_t ns : {o.view->first, o.view->second}) {
        if (ns < -kMaxViewOffsetNs || ns > kMaxViewOffsetNs) {
          std::string what = "--view: ";
          what += std::to_string(ns);
          what +=
              " is out of range: START_NS and END_NS must be within +-4611686018427387904 (2^62) ns of the "
              "trace's first event";
          throw ViewUsageError(what);
        }
      }
      if (o.view->second <= o.view->first) throw ViewUsageError("--view: END_NS must be after START_NS");
    } else if (arg == "--select") {
      o.select = v();
    } else if (arg == "--block") {
      const std::int64_t b = parse_int(v(), arg);
      if (b < 0 || b > std::numeric_limits<std::int32_t>::max()) throw ViewUsageError("--block: N must be 0 or more");
      o.block = static_cast<std::int32_t>(b);
    } else if (arg == "--panel") {
      o.panel = v();
      if (o.panel != "details" && o.panel != "ops" && o.panel != "findings" && o.panel != "compare" &&
          o.panel != "search" && o.panel != "diff" && o.panel != "collective") {
        throw ViewUsageError("--panel must be details, ops, findings, compare, search, diff or collective, got '" +
                             o.panel + "'");
      }
    } else if (arg == "--diff") {
      o.diff = v();
      if (o.diff.empty()) throw ViewUsageError("--diff needs a BASE trace");
    } else if (arg == "--compare") {
      if (has_inline) throw ViewUsageError("--compare takes two dumps: --compare NPU_DUMP BENCH_DUMP");
      for (std::string* dump : {&o.compare_npu, &o.compare_bench}) {
        *dump = value(i, "--compare (NPU_DUMP BENCH_DUMP)");
        if (dump->empty() || (dump->size() > 1 && (*dump)[0] == '-'))
          throw ViewUsageError("--compare needs two dumps, NPU_DUMP BENCH_DUMP: got '" + *dump + "'");
      }
    } else if (arg == "--fuzzy-match" || arg == "-fm") {
      o.fuzzy_match = true;
    } else if (arg == "--mapping") {
      o.mapping = v();
      if (o.mapping.empty()) throw ViewUsageError("--mapping needs a FILE");
    } else if (arg == "--rank") {
      const std::int64_t r = parse_int(v(), arg);
      if (r < 0 || r > std::numeric_limits<std::int32_t>::max()) throw ViewUsageError("--rank: R must be 0 or more");
      o.rank = static_cast<std::int32_t>(r);
    } else if (arg.size() > 1 && arg[0] == '-') {
      throw ViewUsageError("unknown option '" + arg + "'");
    } else if (o.trace.empty()) {
      o.trace = arg;
    } else {
      throw ViewUsageError("one trace (or directory of rank traces) at a time: got '" + o.trace + "' and '" + arg +
                           "'");
    }
  }
  if (!o.help && o.trace.empty() && !o.compares_dumps())
    throw ViewUsageError("no trace given (or --compare NPU_DUMP BENCH_DUMP)");
  if (o.block && o.select.empty())
    throw ViewUsageError("--block needs --select (the custom kernel whose block to show)");
  if (o.rank && o.select.empty()) throw ViewUsageError("--rank needs --select (the rank to select the op on)");
  check_diff(o);
  check_compare(o);
  return o;
}

}  // namespace npuscope::viewer

// npuscope diff: what got slower between two profiles, and why (analyzer/diff.h).
//
//   npuscope diff BASE.db NEW.db [--format text|json|csv] [-o FILE|DIR] [--op-name-map FILE]
//                 [--base-step N --new-step M] [--top N]
//   npuscope diff --describe      (the diff tables' columns, units and docs, as markdown)
//
// text goes to stdout (colour on a terminal) or FILE; json likewise; csv writes one file per table
// into the directory -o names. Text keeps the 20 rows of each per-op table that add the most time,
// JSON and CSV every row, unless --top says otherwise.

#include <optional>
#include <string>

#include "command.h"
#include "npuscope/analyzer/analyze.h"
#include "npuscope/analyzer/diff.h"
#include "open_trace.h"
#include "report_output.h"

namespace npuscope::cli {
namespace {

constexpr const char* kUsage =
    "npuscope diff BASE.db NEW.db [--format text|json|csv] [-o FILE|DIR] [--op-name-map FILE] "
    "[--base-step N --new-step M] [--top N]";

constexpr int kTextTop = 20;
constexpr std::int64_t kMaxStep = std::int64_t{1} << 62;

struct DiffFlags {
  std::string base, next, format = "text", output, op_name_map;
  std::int64_t base_step = -1, new_step = -1;
  int top = -1;  // -1: 20 rows in text, all in JSON and CSV
  bool describe = false;
};

}  // namespace

int diff_command(int argc, char** argv) {
  DiffFlags f;
  po::options_description desc("options");
  desc.add_options()("help,h", "show this help")("base", po::value(&f.base), "the BASE trace (positional)")(
      "new", po::value(&f.next), "the NEW trace, compared with BASE (positional)")(
      "format", po::value(&f.format)->default_value(f.format), "text | json | csv")(
      "output,o", po::value(&f.output), "write to FILE (text, json) or into DIR (csv) instead of stdout")(
      "op-name-map", po::value(&f.op_name_map),
      "YAML or JSON file of ops renamed between the runs: {BASE op name: NEW op name} or a list of {base: NAME, "
      "new: NAME}")("base-step", ranged_value<std::int64_t>(&f.base_step, "base-step", 0, kMaxStep),
                    "compare this step of BASE (a MARKER step: a training loop's iteration) ...")(
      "new-step", ranged_value<std::int64_t>(&f.new_step, "new-step", 0, kMaxStep), "... with this step of NEW")(
      "top", ranged_value(&f.top, "top", 0, 1'000'000),
      "rows of each per-op table, those adding the most time: 0 to 1000000, 0 all (default 20 in text, all in "
      "json and csv)")("describe", po::bool_switch(&f.describe),
                       "print every diff table's columns, units and docs (markdown) and exit");
  po::positional_options_description positional;
  positional.add("base", 1).add("new", 1);
  if (!parse_flags(argc, argv, desc, kUsage, &positional)) return 0;
  if (f.describe) {  // docs/diff.md's generated part
    const std::string doc = analyzer::diff_tables_markdown();
    std::fwrite(doc.data(), 1, doc.size(), stdout);
    return 0;
  }
  if (f.base.empty() || f.next.empty())
    throw UsageError(std::string("give two traces, BASE and NEW\nusage: ") + kUsage);
  check_report_format(f.format, f.output);

  analyzer::DiffOptions options;
  if (f.base_step >= 0) options.base_step = f.base_step;
  if (f.new_step >= 0) options.new_step = f.new_step;
  options.top = f.top >= 0 ? f.top : f.format == "text" ? kTextTop : 0;
  if (!f.op_name_map.empty()) {
    try {
      options.op_name_map = analyzer::load_name_map(f.op_name_map, analyzer::kDiffNameMapKeys);
    } catch (const analyzer::NameMapError& e) {
      throw InputError(std::string("--op-name-map: ") + e.what());
    }
  }
  // No quick_check: diff reads every row anyway, and damage met then is a TraceError.
  const auto base = open_trace(f.base, {.verify = false});
  const auto next = open_trace(f.next, {.verify = false});
  analyzer::DiffResult result;
  try {
    result = analyzer::diff(*base, *next, options);
  } catch (const analyzer::DiffError& e) {
    throw InputError(e.what());
  }
  write_report(result.report, f.format, f.output, "the diff of " + base->path() + " and " + next->path());
  return 0;
}

}  // namespace npuscope::cli

// npuscope analyze: bottlenecks, overflows, memory and advice from a trace (analyzer/).
//
//   npuscope analyze TRACE.db [--format text|json|csv] [--top N] [--rules LIST] [-o FILE]
//   npuscope analyze --describe      (the finding tables' columns, units and docs, as markdown)
//
// text goes to stdout (colour on a terminal) or FILE; json likewise; csv writes one file per table
// into the directory -o names.

#include <string>

#include "command.h"
#include "npuscope/analyzer/analyze.h"
#include "npuscope/collector/trace_reader.h"
#include "open_trace.h"
#include "report_output.h"

namespace npuscope::cli {
namespace {

constexpr const char* kUsage =
    "npuscope analyze TRACE.db [--format text|json|csv] [--top N] [--rules LIST] [-o FILE|DIR]";

constexpr int kMaxTop = 1'000'000;

struct AnalyzeFlags {
  std::string trace, format = "text", output;
  std::vector<std::string> rules;
  int top = 10;
  bool describe = false;
};

}  // namespace

int analyze_command(int argc, char** argv) {
  AnalyzeFlags f;
  std::string rules_help = "comma-separated rules to run (default all):";
  for (const std::string& r : analyzer::all_rules()) rules_help += " " + r;
  po::options_description desc("options");
  desc.add_options()("help,h", "show this help")("trace", po::value(&f.trace), "the trace database (positional)")(
      "format", po::value(&f.format)->default_value(f.format), "text | json | csv")(
      "top", ranged_value(&f.top, "top", 1, kMaxTop)->default_value(f.top),
      "how many top ops, gaps, leaks and advice items per rule: 1 to 1000000")(
      "rules", po::value(&f.rules)->composing(), rules_help.c_str())(
      "output,o", po::value(&f.output), "write to FILE (text, json) or into DIR (csv) instead of stdout")(
      "describe", po::bool_switch(&f.describe),
      "print every finding table's columns, units and docs (markdown) and exit");
  po::positional_options_description positional;
  positional.add("trace", 1);
  if (!parse_flags(argc, argv, desc, kUsage, &positional)) return 0;
  if (f.describe) {  // docs/analyze.md's generated part
    const std::string doc = analyzer::findings_markdown();
    std::fwrite(doc.data(), 1, doc.size(), stdout);
    return 0;
  }
  if (f.trace.empty()) throw UsageError(std::string("no trace given\nusage: ") + kUsage);
  check_report_format(f.format, f.output);

  analyzer::AnalyzeOptions options;
  options.top = f.top;
  options.rules = split_commas(f.rules);
  // No quick_check: analyze reads every row anyway, and damage met then is a TraceError (a third of
  // the time of a big trace otherwise).
  const auto reader = open_trace(f.trace, {.verify = false});
  analyzer::Report report;
  try {
    report = analyzer::analyze(*reader, options);
  } catch (const analyzer::AnalyzeError& e) {
    throw UsageError(e.what());
  }
  write_report(report, f.format, f.output, "the analysis of " + reader->path());
  return 0;
}

}  // namespace npuscope::cli

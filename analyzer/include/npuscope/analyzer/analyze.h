// Reads a trace and computes the report: DESIGN.md's "Analyzer findings", as msprof-analyze's
// advisor and Holistic Trace Analysis do them.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "npuscope/analyzer/report.h"
#include "npuscope/collector/trace_reader.h"

namespace npuscope::analyzer {

// The rules `--rules` chooses from, in report order.
const std::vector<std::string>& all_rules();

struct AnalyzeOptions {
  int top = 10;                    // top ops, longest gaps, largest leaks, advice items per rule
  std::vector<std::string> rules;  // empty: all_rules()
};

// A rule name that does not exist, or a bad option: the message lists what is accepted.
class AnalyzeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws AnalyzeError for bad options; collector::TraceError for an unreadable trace.
Report analyze(const collector::TraceReader& trace, const AnalyzeOptions& options = {});

}  // namespace npuscope::analyzer

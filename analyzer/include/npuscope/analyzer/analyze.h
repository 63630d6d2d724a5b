// Reads a trace and computes the report: DESIGN.md's "Analyzer findings", as msprof-analyze's
// advisor and Holistic Trace Analysis do them.
#pragma once

#include <atomic>
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
  // Set from another thread to stop early (the viewer closing): analyze() then throws
  // AnalyzeCancelled within milliseconds, between rules or every 64Ki rows read.
  const std::atomic<bool>* cancel = nullptr;
};

// A rule name that does not exist, or a bad option: the message lists what is accepted.
class AnalyzeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// analyze() stopped because AnalyzeOptions::cancel was set.
class AnalyzeCancelled : public std::runtime_error {
 public:
  AnalyzeCancelled() : std::runtime_error("the analysis was cancelled") {}
};

// Throws AnalyzeError for bad options; collector::TraceError for an unreadable trace;
// AnalyzeCancelled when cancelled.
Report analyze(const collector::TraceReader& trace, const AnalyzeOptions& options = {});

}  // namespace npuscope::analyzer

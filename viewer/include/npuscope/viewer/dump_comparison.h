// --compare NPU BENCH: `npuscope compare` of two msprobe dumps, or of npuscope traces with a PyTorch
// dump (comparator/compare_dumps.h)
// for the viewer's Compare panel. Headless: the panel (viewer/src/app/dump_compare_panel.cpp) draws
// what is here, tests read it without a display.
//
// Note [Dump comparison in the viewer]
// The two sides are read and paired by step and rank as `npuscope compare` reads them
// (comparator::read_dump_sides, Note [Dump comparison sides]) and compared (comparator::compare_dumps)
// on a thread of their own (viewer/src/app/dump_job.h), as the Diff panel's diff runs (diff_job.h):
// the window stays live and the panel shows a progress line. Each step and rank is published when it is done,
// immutable from then on, so the UI thread reads it without a lock; a dump that cannot be read or compared becomes the
// job's error (the panel shows it), never an exception out of the frame. What a frame needs is made once here, not per
// frame: the report's tables (compare_report without its compare_result rows, which are most of a big comparison's
// cells), the entries table's row -> entry map, and the NPU dump's name index for the module chain. The compare_result
// rows of one entry (its values) are made when the entry is selected: a sub-result holding that entry's rows alone goes
// through the same compare_report, so the cells are msprobe's, written in one place.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "npuscope/analyzer/report.h"
#include "npuscope/collector/msprobe_dump.h"
#include "npuscope/comparator/compare_dumps.h"

namespace npuscope::viewer {

// One step of one rank compared.
class DumpComparison {
 public:
  // `place` names the step and rank ("step 0, rank 0": importer::dump_place). Throws
  // comparator::CompareError for dumps that cannot be compared.
  DumpComparison(const collector::MsprobeDump& npu, const collector::MsprobeDump& bench,
                 const comparator::DumpCompareOptions& options, std::string place);
  DumpComparison(const DumpComparison&) = delete;  // entries_ points into report_
  DumpComparison& operator=(const DumpComparison&) = delete;

  const std::string& place() const { return place_; }
  const comparator::DumpCompareResult& result() const { return result_; }
  const analyzer::Report& report() const { return report_; }    // without compare_result rows
  const analyzer::Table& entries() const { return *entries_; }  // worst first
  // The entries table's row as an index into result().entries, and back.
  std::size_t entry_of_row(std::size_t row) const { return entry_of_row_[row]; }
  std::size_t row_of_entry(std::size_t entry) const { return row_of_entry_[entry]; }
  // The paired entry whose NPU name is `name`.
  std::optional<std::size_t> find_entry(std::string_view name) const;
  const collector::DumpEntry& npu_entry(std::size_t entry) const;
  const collector::DumpEntry& bench_entry(std::size_t entry) const;

  // msprobe's compare_result rows of one entry (its inputs, parameters, outputs), under the mode's
  // column names (Note [Dump comparison in the viewer]).
  analyzer::Table values(std::size_t entry) const;
  // Its NPU call stack (stack.json) as written, innermost frame first; empty when none.
  const std::vector<std::string>& stack(std::size_t entry) const;
  // The module it ran in, then the modules that one ran in, outwards (construct.json). A parent
  // that is no entry of dump.json ends the chain (the reader counts such nodes in its notes).
  std::vector<std::string> module_chain(std::size_t entry) const;

 private:
  std::string place_;
  comparator::DumpCompareResult result_;
  analyzer::Report report_;
  const analyzer::Table* entries_ = nullptr;
  std::vector<std::size_t> entry_of_row_, row_of_entry_;
  std::unordered_map<std::string_view, std::size_t> entry_by_name_;  // NPU name -> result_.entries
  std::unordered_map<std::string_view, std::size_t> npu_by_name_;    // NPU name -> npu.entries
};

}  // namespace npuscope::viewer

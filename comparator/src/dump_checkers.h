// msprobe's Result and Err_message of one entry's compare_result rows (Ascend/msprobe
// core/compare/indicator_analysis/algorithm.py: the checkers of each mode, in its order), and the
// tensor-mode cells they read (npy_compare.py). Private to the comparator.
#pragma once

#include <array>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dump_values.h"
#include "npuscope/comparator/compare_dumps.h"

namespace npuscope::comparator {

// Tensor mode's six metric cells as msprobe writes them: Cosine, EucDist, MaxAbsErr, MaxRelativeErr,
// One Thousandth Err Ratio, Five Thousandths Err Ratio ("unsupported", "shape unmatched", "N/A",
// "Nan" where a number cannot be), the message npy_compare adds to the row's own (`why`) about
// them, and the two numbers the checkers read (NaN where the cell is not a number).
struct MetricCells {
  std::array<std::string, 6> text;
  std::string message;
  double cosine, one_thousandth;
};
MetricCells metric_cells(const DumpRow& row);

// The older msprobe's Accuracy Reached or Not from the cells (check_accuracy): Yes, No, Unmatched, None.
std::string accuracy_reached(const MetricCells& cells);

// Runs the checkers of a mode over the rows of one NPU entry after another, reusing its scratch.
class EntryChecker {
 public:
  // The rows of one NPU entry (inputs then outputs; its bench entry's name, "" for none): sets each
  // row's result and appends its messages ("error: ...", "warning: ...", msprobe's words).
  void check(DumpMode mode, std::string_view entry_name, std::string_view bench_entry, std::span<DumpRow> rows);

  // What a checker reads of a row.
  struct RowFacts {
    DumpRow* row = nullptr;
    std::array<StatCell, 4> npu, bench;
    StatDiff norm;
    MetricCells metrics;
  };

 private:
  std::vector<RowFacts> facts_;
  std::vector<RowFacts*> inputs_, outputs_, checked_;
};

}  // namespace npuscope::comparator

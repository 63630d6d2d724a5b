// Writing COMPARE_RESULT, the table `npuscope compare` fills: into the NPU trace it compared
// (--annotate), or into a results file of its own (--results), a trace with only that table filled.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "npuscope/collector/trace_error.h"
#include "npuscope/collector/trace_rows.h"

namespace npuscope::collector {

class CompareResultWriter {
 public:
  // An existing trace (its earlier results are replaced), or, with `create`, a new results file
  // (TraceError if it exists). Nothing is changed until commit().
  static std::unique_ptr<CompareResultWriter> open(const std::string& path, bool create);
  virtual ~CompareResultWriter() = default;

  // Into the file's STRING_IDS: an existing string keeps its id.
  virtual StringId intern(std::string_view s) = 0;
  virtual void set_meta(std::string_view key, std::string_view value) = 0;
  virtual void add(std::span<const CompareResultRow> rows) = 0;
  // Replaces the table's rows with those added, in one transaction.
  virtual void commit() = 0;
};

}  // namespace npuscope::collector

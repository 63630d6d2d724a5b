// Keeping a comparison where the viewer finds it: the COMPARE_RESULT table (docs/schema.md).
#pragma once

#include <string>

#include "npuscope/collector/trace_reader.h"
#include "npuscope/comparator/compare.h"

namespace npuscope::comparator {

// Writes the rows of `result` into COMPARE_RESULT of the NPU trace it compared (`npuscope compare
// --annotate`; earlier results replaced), or of a new results file when `new_file` (--results).
// META gets compare.npu_trace, compare.golden_trace, compare.mode, compare.first_failing_task and
// compare.first_introducing_task. Throws collector::TraceError.
void store_results(const CompareResult& result, const std::string& path, bool new_file);

// The comparison `trace` keeps (COMPARE_RESULT and its META keys), `stored`: its rows and their ops,
// judged again from the rows (Note [Verdicts]), without what the table does not keep (unmatched
// ops, shapes, dtypes, passes, how ops were paired, statistics-mode figures). Empty without one.
CompareResult load_results(const collector::TraceReader& trace);

}  // namespace npuscope::comparator

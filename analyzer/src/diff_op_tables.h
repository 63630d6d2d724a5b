// The diff's per-op tables: ops, op types, kernels by input shape, host APIs.
#pragma once

#include <cstdint>

#include "diff_report.h"
#include "npuscope/analyzer/finding_table.h"

namespace npuscope::analyzer {

// HTA's categories over the rows of the ops table.
struct OpRowCounts {
  std::int64_t slower = 0, faster = 0, unchanged = 0;
};

Table diff_ops_table(const DiffInputs& in, OpRowCounts& counts);
Table diff_op_types_table(const DiffInputs& in);
Table diff_kernels_table(const DiffInputs& in);
Table diff_apis_table(const DiffInputs& in);

}  // namespace npuscope::analyzer

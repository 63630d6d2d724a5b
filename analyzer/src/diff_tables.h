// The tables of `npuscope diff` (Note [Finding tables]: declared once, written by any format).
// Each row carries BASE, NEW, diff = NEW - BASE and ratio = NEW / BASE (1 when both are 0, inf
// when only BASE is: REFERENCE.md "Profile diff", msprof-analyze's calculate_diff_ratio).
#pragma once

#include <cstdint>

#include "npuscope/analyzer/finding_table.h"

namespace npuscope::analyzer {

extern const TableSpec kDiffRunsTable, kDiffOverallTable, kDiffMemoryTable, kDiffMatchingTable, kDiffOpsTable,
    kDiffOpTypesTable, kDiffKernelsTable, kDiffApisTable, kDiffModelErrorTable;

// NEW / BASE as the ratio columns hold it.
double diff_ratio(std::int64_t base, std::int64_t next);

}  // namespace npuscope::analyzer

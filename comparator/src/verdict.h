// Judging tensors and ops.
//
// Note [Verdicts]
// A tensor fails, by msprobe's rule, when Cosine < 0.99 and MaxAbsErr > 0.001, or Cosine < 0.9, or
// MaxAbsErr > 1, or when it cannot be compared (shapes differ, NaN/Inf at different places). A NaN
// cosine (one element, or a zero norm on one side) takes no part in the rule. In statistics mode
// (no tensor data, --dump stats) it fails when max, min, mean or norm differ by more than 0.5
// relatively (msprobe's statistics-mode warning) or the NaN/Inf counts differ. A tensor without a
// counterpart, or without data and statistics on one side, is n/a.
// An op fails if one of its outputs fails, passes if its compared outputs all pass, and is n/a if
// none could be compared. A failing op introduced the error when none of its inputs failed (they
// agreed with the golden run, its outputs did not), and inherited it when an input failed already.
#pragma once

#include <vector>

#include "npuscope/collector/trace_rows.h"
#include "npuscope/comparator/compare.h"

namespace npuscope::comparator {

inline constexpr double kCosineFloor = 0.9, kCosineGood = 0.99;
inline constexpr double kMaxAbsErrSmall = 0.001, kMaxAbsErrCap = 1.0;
inline constexpr double kStatsRelDiff = 0.5;

// Sets row.verdict and row.reason from row.metrics (tensor mode).
void judge_tensor(CompareRow& row);

// Statistics mode: fills row.stats from the two TENSOR rows' summaries and judges it.
void judge_stats(CompareRow& row, const collector::TensorRow& npu, const collector::TensorRow& golden);

// Judges `op` from its rows result.rows[first, last) (Note [Verdicts]), gives them its origin, and
// adds it to result.ops, its counts and its first failing and first introducing op.
void add_judged_op(CompareResult& result, OpVerdict op, std::size_t first, std::size_t last);

}  // namespace npuscope::comparator

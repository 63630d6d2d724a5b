// Judging tensors and ops.
//
// Note [Verdicts]
// A tensor fails, by msprobe's rule, when Cosine < 0.99 and MaxAbsErr > 0.001, or Cosine < 0.9, or
// MaxAbsErr > 1, or when it cannot be compared (shapes differ, NaN/Inf at different places). A NaN
// cosine (one element, or a zero norm on one side) takes no part in the rule. In statistics mode
// (no tensor data, --dump stats) it fails when the norms differ by more than 0.5 relatively
// (msprobe's statistics-mode warning), when max, min or mean differ by more than 0.5 of the
// tensor's magnitude (the largest |max| or |min| of both sides: a statistic near zero, a
// gradient's mean, would otherwise fail on noise), or when the NaN/Inf counts differ. A tensor without a
// counterpart, or without data and statistics on one side, is n/a.
// An op fails if one of its outputs fails, passes if its compared outputs all pass, and is n/a if
// none could be compared. A failing op introduced the error when none of its inputs failed (they
// agreed with the golden run, its outputs did not), and inherited it when an input failed already.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "npuscope/collector/trace_rows.h"
#include "npuscope/comparator/compare.h"

namespace npuscope::comparator {

inline constexpr double kCosineFloor = 0.9, kCosineGood = 0.99;
inline constexpr double kMaxAbsErrSmall = 0.001, kMaxAbsErrCap = 1.0;
inline constexpr double kStatsRelDiff = 0.5;

// The tensor rule on metrics: "" when they pass, else why they fail (m.why when not comparable).
std::string tensor_failure(const TensorMetrics& m);

// Sets row.verdict and row.reason from row.metrics (tensor mode).
void judge_tensor(CompareRow& row);

// A tensor's summary statistics, as a TENSOR row or an msprobe dump holds them.
struct StatsSummary {
  double max = 0, min = 0, mean = 0, norm = 0;
  std::int64_t nan_count = 0, inf_count = 0;  // 0 where not counted (msprobe dumps)
};

// The statistics rule: fills `d`; "" when it passes, else why it fails.
std::string stats_failure(const StatsSummary& npu, const StatsSummary& golden, StatsDiff& d);

// Statistics mode: fills row.stats from the two TENSOR rows' summaries and judges it.
void judge_stats(CompareRow& row, const collector::TensorRow& npu, const collector::TensorRow& golden);

// An op's verdict and origin from its tensors' (Note [Verdicts]): `output(t)` says whether a tensor
// is an output, `verdict(t)` its verdict.
struct GroupVerdict {
  Verdict verdict = Verdict::kNotApplicable;
  ErrorOrigin origin = ErrorOrigin::kNone;
};
template <class It, class IsOutput, class VerdictOf>
GroupVerdict judge_group(It first, It last, IsOutput output, VerdictOf verdict) {
  bool any_output = false, output_failed = false, input_failed = false;
  for (; first != last; ++first) {
    const Verdict v = verdict(*first);
    if (v == Verdict::kNotApplicable) continue;
    if (!output(*first)) {
      input_failed |= v == Verdict::kFail;
      continue;
    }
    any_output = true;
    output_failed |= v == Verdict::kFail;
  }
  GroupVerdict g;
  g.verdict = !any_output ? Verdict::kNotApplicable : output_failed ? Verdict::kFail : Verdict::kPass;
  g.origin = g.verdict != Verdict::kFail ? ErrorOrigin::kNone
             : input_failed              ? ErrorOrigin::kInherited
                                         : ErrorOrigin::kIntroduced;
  return g;
}

// Judges `op` from its rows result.rows[first, last) (Note [Verdicts]), gives them its origin, and
// adds it to result.ops, its counts and its first failing and first introducing op.
void add_judged_op(CompareResult& result, OpVerdict op, std::size_t first, std::size_t last);

}  // namespace npuscope::comparator

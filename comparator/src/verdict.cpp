#include "verdict.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace npuscope::comparator {
namespace {

std::string number(double v) {
  std::ostringstream s;
  s.precision(4);
  s << v;
  return s.str();
}

double stats_rel(double npu, double golden) {
  return std::abs(npu - golden) / (std::max(std::abs(npu), std::abs(golden)) + 1e-10);
}

}  // namespace

void judge_tensor(CompareRow& row) {
  const TensorMetrics& m = row.metrics;
  if (!m.comparable) {
    row.verdict = Verdict::kFail;
    row.reason = m.why;
    return;
  }
  const bool has_cosine = !std::isnan(m.cosine);
  if (has_cosine && m.cosine < kCosineFloor) {
    row.reason = "cosine " + number(m.cosine) + " < " + number(kCosineFloor);
  } else if (has_cosine && m.cosine < kCosineGood && m.max_abs_err > kMaxAbsErrSmall) {
    row.reason = "cosine " + number(m.cosine) + " < " + number(kCosineGood) + " and max abs err " +
                 number(m.max_abs_err) + " > " + number(kMaxAbsErrSmall);
  } else if (m.max_abs_err > kMaxAbsErrCap) {
    row.reason = "max abs err " + number(m.max_abs_err) + " > " + number(kMaxAbsErrCap);
  }
  row.verdict = row.reason.empty() ? Verdict::kPass : Verdict::kFail;
}

void judge_stats(CompareRow& row, const collector::TensorRow& npu, const collector::TensorRow& golden) {
  row.stats_mode = true;
  StatsDiff& d = row.stats;
  d.max_rel = stats_rel(npu.max, golden.max);
  d.min_rel = stats_rel(npu.min, golden.min);
  d.mean_rel = stats_rel(npu.mean, golden.mean);
  d.norm_rel = stats_rel(npu.l2norm, golden.l2norm);
  d.nan_inf_differ = npu.nan_count != golden.nan_count || npu.inf_count != golden.inf_count;
  if (d.nan_inf_differ) {
    row.reason = "NaN/Inf counts differ (" + std::to_string(npu.nan_count) + "/" + std::to_string(npu.inf_count) +
                 " vs golden " + std::to_string(golden.nan_count) + "/" + std::to_string(golden.inf_count) + ")";
  } else {
    const std::pair<const char*, double> diffs[] = {
        {"max", d.max_rel}, {"min", d.min_rel}, {"mean", d.mean_rel}, {"norm", d.norm_rel}};
    for (const auto& [what, rel] : diffs) {
      if (rel > kStatsRelDiff) {
        row.reason = std::string(what) + " differs by " + number(100 * rel) + " % (statistics mode)";
        break;
      }
    }
  }
  row.verdict = row.reason.empty() ? Verdict::kPass : Verdict::kFail;
}

namespace {

// The op's verdict and origin from its rows.
void judge_op(OpVerdict& op, const std::vector<CompareRow>& rows, std::size_t first, std::size_t last) {
  bool any_output = false, output_failed = false, input_failed = false;
  op.worst_cosine = std::numeric_limits<double>::quiet_NaN();
  op.worst_max_abs_err = std::numeric_limits<double>::quiet_NaN();
  for (std::size_t i = first; i < last; ++i) {
    const CompareRow& r = rows[i];
    if (r.verdict == Verdict::kNotApplicable) continue;
    if (is(r.role, TensorRole::kInput)) {
      input_failed |= r.verdict == Verdict::kFail;
      continue;
    }
    any_output = true;
    output_failed |= r.verdict == Verdict::kFail;
    if (!r.stats_mode && r.metrics.comparable) {  // NaN: none yet
      const double c = r.metrics.cosine, e = r.metrics.max_abs_err;
      if (!std::isnan(c) && (std::isnan(op.worst_cosine) || c < op.worst_cosine)) op.worst_cosine = c;
      if (std::isnan(op.worst_max_abs_err) || e > op.worst_max_abs_err) op.worst_max_abs_err = e;
    }
  }
  op.verdict = !any_output ? Verdict::kNotApplicable : output_failed ? Verdict::kFail : Verdict::kPass;
  op.origin = op.verdict != Verdict::kFail ? ErrorOrigin::kNone
              : input_failed               ? ErrorOrigin::kInherited
                                           : ErrorOrigin::kIntroduced;
}

}  // namespace

void add_judged_op(CompareResult& result, OpVerdict op, std::size_t first, std::size_t last) {
  judge_op(op, result.rows, first, last);
  for (std::size_t i = first; i < last; ++i) result.rows[i].origin = op.origin;
  ++(op.verdict == Verdict::kPass   ? result.passed
     : op.verdict == Verdict::kFail ? result.failed
                                    : result.not_applicable);
  if (op.verdict == Verdict::kFail && !result.first_failing) result.first_failing = result.ops.size();
  if (op.origin == ErrorOrigin::kIntroduced && !result.first_introducing) result.first_introducing = result.ops.size();
  result.ops.push_back(std::move(op));
}

}  // namespace npuscope::comparator

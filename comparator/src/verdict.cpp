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

std::string tensor_failure(const TensorMetrics& m) {
  if (!m.comparable) return m.why;
  const bool has_cosine = !std::isnan(m.cosine);
  if (has_cosine && m.cosine < kCosineFloor) return "cosine " + number(m.cosine) + " < " + number(kCosineFloor);
  if (has_cosine && m.cosine < kCosineGood && m.max_abs_err > kMaxAbsErrSmall) {
    return "cosine " + number(m.cosine) + " < " + number(kCosineGood) + " and max abs err " + number(m.max_abs_err) +
           " > " + number(kMaxAbsErrSmall);
  }
  if (m.max_abs_err > kMaxAbsErrCap) return "max abs err " + number(m.max_abs_err) + " > " + number(kMaxAbsErrCap);
  return "";
}

void judge_tensor(CompareRow& row) {
  row.reason = tensor_failure(row.metrics);
  row.verdict = row.reason.empty() && row.metrics.comparable ? Verdict::kPass : Verdict::kFail;
}

std::string stats_failure(const StatsSummary& npu, const StatsSummary& golden, StatsDiff& d) {
  d.max_rel = stats_rel(npu.max, golden.max);
  d.min_rel = stats_rel(npu.min, golden.min);
  d.mean_rel = stats_rel(npu.mean, golden.mean);
  d.norm_rel = stats_rel(npu.norm, golden.norm);
  d.nan_inf_differ = npu.nan_count != golden.nan_count || npu.inf_count != golden.inf_count;
  if (d.nan_inf_differ) {
    return "NaN/Inf counts differ (" + std::to_string(npu.nan_count) + "/" + std::to_string(npu.inf_count) +
           " vs golden " + std::to_string(golden.nan_count) + "/" + std::to_string(golden.inf_count) + ")";
  }
  // Max, min and mean are judged against the tensor's magnitude, not against themselves: a
  // gradient's mean of 1e-9 against 2e-9, beside elements of 0.01, is no error (Note [Verdicts]).
  // fmax: a statistic that is NaN (or null in a dump) leaves the scale to the others.
  const double scale =
      std::fmax(std::fmax(std::abs(npu.max), std::abs(npu.min)), std::fmax(std::abs(golden.max), std::abs(golden.min)));
  const auto scaled = [&](double a, double b) { return std::abs(a - b) / (scale + 1e-10); };
  const std::pair<const char*, double> diffs[] = {{"max", scaled(npu.max, golden.max)},
                                                  {"min", scaled(npu.min, golden.min)},
                                                  {"mean", scaled(npu.mean, golden.mean)},
                                                  {"norm", d.norm_rel}};
  for (const auto& [what, rel] : diffs) {
    if (rel > kStatsRelDiff)
      return std::string(what) + " differs by " + number(100 * rel) + " % of the tensor's magnitude (statistics mode)";
  }
  return "";
}

void judge_stats(CompareRow& row, const collector::TensorRow& npu, const collector::TensorRow& golden) {
  row.stats_mode = true;
  const auto summary = [](const collector::TensorRow& t) {
    return StatsSummary{t.max, t.min, t.mean, t.l2norm, t.nan_count, t.inf_count};
  };
  row.reason = stats_failure(summary(npu), summary(golden), row.stats);
  row.verdict = row.reason.empty() ? Verdict::kPass : Verdict::kFail;
}

namespace {

// The op's verdict and origin from its rows, and its outputs' worst metrics.
void judge_op(OpVerdict& op, const std::vector<CompareRow>& rows, std::size_t first, std::size_t last) {
  const auto begin = rows.begin() + static_cast<std::ptrdiff_t>(first);
  const auto end = rows.begin() + static_cast<std::ptrdiff_t>(last);
  const GroupVerdict g = judge_group(
      begin, end, [](const CompareRow& r) { return is(r.role, TensorRole::kOutput); },
      [](const CompareRow& r) { return r.verdict; });
  op.verdict = g.verdict;
  op.origin = g.origin;
  op.worst_cosine = std::numeric_limits<double>::quiet_NaN();
  op.worst_max_abs_err = std::numeric_limits<double>::quiet_NaN();
  for (auto it = begin; it != end; ++it) {
    const CompareRow& r = *it;
    if (r.verdict == Verdict::kNotApplicable || !is(r.role, TensorRole::kOutput)) continue;
    if (!r.stats_mode && r.metrics.comparable) {  // NaN: none yet
      const double c = r.metrics.cosine, e = r.metrics.max_abs_err;
      if (!std::isnan(c) && (std::isnan(op.worst_cosine) || c < op.worst_cosine)) op.worst_cosine = c;
      if (std::isnan(op.worst_max_abs_err) || e > op.worst_max_abs_err) op.worst_max_abs_err = e;
    }
  }
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

#include <cmath>

#include <nlohmann/json.hpp>

#include "npuscope/comparator/format.h"

namespace npuscope::comparator {
namespace {

using nlohmann::ordered_json;

ordered_json number(double v) { return std::isfinite(v) ? ordered_json(v) : ordered_json(nullptr); }

// Note [Model pass of an op] in op_matching.h: null when the trace does not know it.
ordered_json pass_json(const std::string& pass) { return pass.empty() ? ordered_json(nullptr) : ordered_json(pass); }

ordered_json op_json(const CompareResult& r, const std::optional<std::size_t>& index) {
  if (!index) return nullptr;
  const OpVerdict& op = r.ops[*index];
  return {{"op_name", op.op_name},
          {"op_type", op.op_type},
          {"call_index", op.call_index},
          {"pass", pass_json(op.pass)},
          {"task_id", op.npu_task_id},
          {"golden_task_id", op.golden_task_id},
          {"start_ns", op.start_ns},
          {"verdict", verdict_name(op.verdict)},
          {"origin", origin_name(op.origin)},
          {"cosine", number(op.worst_cosine)},
          {"max_abs_err", number(op.worst_max_abs_err)},
          {"npu_overflow", op.npu_overflow},
          {"npu_underflow", op.npu_underflow}};
}

ordered_json row_json(const CompareRow& row) {
  const TensorMetrics& m = row.metrics;
  const bool metrics = !row.stats_mode && m.comparable;
  const auto metric = [&](double v) { return metrics ? number(v) : ordered_json(nullptr); };
  ordered_json j = {{"op_name", row.op_name},
                    {"op_type", row.op_type},
                    {"call_index", row.call_index},
                    {"pass", pass_json(row.pass)},
                    {"tensor", row.tensor},
                    {"shape", row.shape},
                    {"dtype", row.dtype},
                    {"golden_shape", row.golden_shape},
                    {"golden_dtype", row.golden_dtype},
                    {"cosine", metric(m.cosine)},
                    {"max_abs_err", metric(m.max_abs_err)},
                    {"max_rel_err", metric(m.max_rel_err)},
                    {"one_thousandth_ratio", metric(m.one_thousandth_ratio)},
                    {"five_thousandth_ratio", metric(m.five_thousandth_ratio)},
                    {"rmse", metric(m.rmse)},
                    {"rel_euclidean", metric(m.rel_euclidean)},
                    {"allclose", metrics ? ordered_json(m.allclose) : ordered_json(nullptr)},
                    {"verdict", verdict_name(row.verdict)},
                    {"origin", origin_name(row.origin)},
                    {"reason", row.reason},
                    {"match", match_name(row.match)},
                    {"task_id", row.npu_task_id},
                    {"golden_task_id", row.golden_task_id}};
  if (row.stats_mode) {
    j["stats"] = {{"max_rel_diff", number(row.stats.max_rel)},
                  {"min_rel_diff", number(row.stats.min_rel)},
                  {"mean_rel_diff", number(row.stats.mean_rel)},
                  {"norm_rel_diff", number(row.stats.norm_rel)},
                  {"nan_inf_differ", row.stats.nan_inf_differ}};
  }
  return j;
}

ordered_json unmatched_json(const std::vector<UnmatchedOp>& ops) {
  ordered_json out = ordered_json::array();
  for (const UnmatchedOp& op : ops) {
    out.push_back(
        {{"op_name", op.op_name}, {"op_type", op.op_type}, {"call_index", op.call_index}, {"task_id", op.task_id}});
  }
  return out;
}

}  // namespace

std::string to_json(const CompareResult& r) {
  ordered_json j;
  j["npu_trace"] = r.npu_path;
  j["golden_trace"] = r.golden_path;
  j["mode"] = r.mode;
  j["summary"] = {{"ops_compared", r.ops.size()},
                  {"passed", r.passed},
                  {"failed", r.failed},
                  {"not_applicable", r.not_applicable},
                  {"unmatched_npu", r.unmatched_npu.size()},
                  {"unmatched_golden", r.unmatched_golden.size()}};
  j["first_failing_op"] = op_json(r, r.first_failing);
  j["first_introducing_op"] = op_json(r, r.first_introducing);
  ordered_json rows = ordered_json::array();
  for (const CompareRow& row : r.rows) rows.push_back(row_json(row));
  j["rows"] = std::move(rows);
  j["unmatched"] = {{"npu", unmatched_json(r.unmatched_npu)}, {"golden", unmatched_json(r.unmatched_golden)}};
  j["notes"] = r.notes;
  return j.dump(2) + "\n";
}

}  // namespace npuscope::comparator

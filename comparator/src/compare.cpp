// compare_traces: pairs the ops (Note [Op pairing]), then reads the two traces' tensors op by op in NPU
// execution order, so that memory holds one op's tensors at a time whatever the model's size.
#include "npuscope/comparator/compare.h"

#include <algorithm>

#include "compare_ops.h"
#include "npuscope/collector/export_npy.h"
#include "underflow_reason.h"
#include "verdict.h"

namespace npuscope::comparator {
namespace {

using collector::TensorRow;

std::vector<TensorRow> tensors_of(const collector::TraceReader& trace, std::int64_t task_id) {
  std::vector<TensorRow> out;
  trace.for_each([&](TensorRow& t) { out.push_back(std::move(t)); }, {.task_id = task_id, .with_data = true});
  return out;
}

bool has_data(const TensorRow& t) { return t.data_bytes > 0; }  // dumped with --dump tensor

// One tensor pair (either side may be missing) of a matched op.
CompareRow compare_pair(const TensorRow* npu, const TensorRow* golden) {
  CompareRow row;
  const TensorRow& any = npu ? *npu : *golden;
  row.role = any.role;
  row.index = any.idx;
  row.tensor = tensor_label(any.role, any.idx);
  if (npu) {
    row.shape = npu->shape;
    row.dtype = collector::tensor_dtype_name(npu->dtype);
  }
  if (golden) {
    row.golden_shape = golden->shape;
    row.golden_dtype = collector::tensor_dtype_name(golden->dtype);
  }
  if (!npu || !golden) {
    row.reason = npu ? "no golden " + row.tensor : "no NPU " + row.tensor;
    return row;  // n/a
  }
  if (npu->shape != golden->shape) {
    row.verdict = Verdict::kFail;
    row.reason = "shape [" + npu->shape + "] vs golden [" + golden->shape + "]: cannot compare";
    return row;
  }
  if (has_data(*npu) && has_data(*golden)) {
    // The reader checked numel, dtype and the data's size against each other (Note [Checked tensor
    // rows] in the collector); the kernel still reads no more than the bytes it is given.
    const TensorData n{npu->data.data(), npu->dtype, static_cast<std::size_t>(npu->numel), npu->data.size()};
    const TensorData g{golden->data.data(), golden->dtype, static_cast<std::size_t>(golden->numel),
                       golden->data.size()};
    row.metrics = compare_tensors(n, g);
    judge_tensor(row);
    if (row.verdict == Verdict::kFail && row.metrics.comparable) {  // Note [Underflow reason]
      if (auto why = underflow_reason(count_zeroed(n, g))) row.reason = *why + "; " + row.reason;
    }
  } else {
    judge_stats(row, *npu, *golden);
    if (row.verdict == Verdict::kFail) {
      if (auto why = underflow_reason(*npu, *golden)) row.reason = *why + "; " + row.reason;
    }
  }
  return row;
}

// The rows of one matched op: its tensors paired by role and index, inputs first.
void compare_op(const std::vector<TensorRow>& npu, const std::vector<TensorRow>& golden,
                std::vector<CompareRow>& rows) {
  std::map<std::pair<std::int32_t, std::int32_t>, std::pair<const TensorRow*, const TensorRow*>> by_key;
  for (const TensorRow& t : npu) by_key[{t.role, t.idx}].first = &t;
  for (const TensorRow& t : golden) by_key[{t.role, t.idx}].second = &t;
  for (const auto& [key, pair] : by_key) rows.push_back(compare_pair(pair.first, pair.second));
}

void check_has_dumps(const collector::TraceReader& trace, const char* which) {
  if (trace.count("TENSOR") > 0) return;
  throw CompareError(trace.path() + ": the " + std::string(which) +
                     " trace has no tensor dumps: record it with `npuscope run --dump tensor` (full metrics) or "
                     "`--dump stats` (statistics only)");
}

UnmatchedOp unmatched(const OpInfo& op) { return {op.name, op.type, op.call_index, op.task_id}; }

}  // namespace

CompareResult compare_traces(const collector::TraceReader& npu, const collector::TraceReader& golden,
                             const CompareOptions& options) {
  check_has_dumps(npu, "NPU");
  check_has_dumps(golden, "golden");
  analyzer::KeySpace keys;
  analyzer::SideKeys npu_keys(npu, keys, &options.mapping), golden_keys(golden, keys);
  const std::vector<OpInfo> npu_ops = load_ops(npu, npu_keys), golden_ops = load_ops(golden, golden_keys);
  const analyzer::OpPairing pairing = analyzer::pair_ops(golden_ops, npu_ops, kCompareStages);

  CompareResult result;
  result.npu_path = npu.path();
  result.golden_path = golden.path();
  const auto total = static_cast<std::int64_t>(pairing.pairs.size());
  std::int64_t tensor_rows = 0, stats_rows = 0, done = 0, undumped = 0;
  for (const analyzer::OpPair& pair : pairing.pairs) {
    const OpInfo& n = npu_ops[pair.subject];
    const OpInfo& g = golden_ops[pair.reference];
    const std::size_t first = result.rows.size();
    const std::vector<TensorRow> npu_tensors = tensors_of(npu, n.task_id),
                                 golden_tensors = tensors_of(golden, g.task_id);
    ++done;
    if (npu_tensors.empty() && golden_tensors.empty()) {
      // Dumped on neither side: left out by the recordings' --ops / --steps filters, as msprobe
      // compares only the APIs it dumped.
      ++undumped;
      if (options.progress) options.progress(done, total);
      continue;
    }
    compare_op(npu_tensors, golden_tensors, result.rows);
    for (std::size_t i = first; i < result.rows.size(); ++i) {
      CompareRow& r = result.rows[i];
      r.op_name = n.name;
      r.op_type = n.type;
      r.call_index = n.call_index;
      r.pass = n.pass;
      r.npu_task_id = n.task_id;
      r.golden_task_id = g.task_id;
      r.match = pair.how;
      if (r.verdict != Verdict::kNotApplicable || r.stats_mode) ++(r.stats_mode ? stats_rows : tensor_rows);
    }
    OpVerdict op{n.name, n.type, n.call_index, n.pass, n.task_id, g.task_id, n.start_ns};
    op.npu_overflow = n.overflow;
    op.npu_underflow = n.underflow;
    add_judged_op(result, std::move(op), first, result.rows.size());
    if (options.progress) options.progress(done, total);
  }
  for (const std::uint32_t i : pairing.subject_only) result.unmatched_npu.push_back(unmatched(npu_ops[i]));
  for (const std::uint32_t i : pairing.reference_only) result.unmatched_golden.push_back(unmatched(golden_ops[i]));
  result.mode = stats_rows == 0 ? "tensor" : tensor_rows == 0 ? "stats" : "mixed";
  if (result.mode != "tensor") {
    result.notes.push_back(
        "statistics mode for " + std::to_string(stats_rows) +
        " tensors (no tensor data on both sides): only max/min/mean/norm were compared; record both runs with "
        "`--dump tensor` for cosine and error metrics");
  }
  if (undumped > 0) {
    result.notes.push_back(std::to_string(undumped) +
                           " paired ops had no tensors dumped in either trace (the recordings' --ops or --steps "
                           "filters) and were not compared");
  }
  if (npu.meta(std::string(collector::kMetaGolden)) == "1") {
    result.notes.push_back("the NPU trace " + npu.path() +
                           " is a golden run (META golden = 1): give the NPU run first and the golden run second");
  }
  const auto by = [&](PairingStage stage) {
    return std::count_if(pairing.pairs.begin(), pairing.pairs.end(),
                         [&](const analyzer::OpPair& p) { return p.how == stage; });
  };
  if (const auto by_type = by(PairingStage::kTypeShape) + by(PairingStage::kTypeOrder); by_type > 0) {
    result.notes.push_back(std::to_string(by_type) +
                           " ops had no golden op of the same name and call index and were paired by op type in "
                           "execution order (" +
                           std::to_string(by(PairingStage::kTypeShape)) +
                           " of them with the same input shapes): check them, or give a --mapping file");
  }
  return result;
}

}  // namespace npuscope::comparator

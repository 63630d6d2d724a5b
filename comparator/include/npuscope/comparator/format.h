// Writing a comparison: a terminal summary with the worst ops, JSON with stable keys, or CSV rows.
#pragma once

#include <ostream>
#include <string>

#include "npuscope/collector/text_table.h"
#include "npuscope/comparator/compare.h"

namespace npuscope::comparator {

using TextStyle = collector::TextStyle;

// The summary (ops compared, passed, failed, unmatched; the first failing and the first introducing
// op), then the `top` worst ops (failing first, lowest cosine first), then unmatched ops.
void write_text(const CompareResult& result, std::ostream& out, const TextStyle& style = {}, int top = 20);

// Keys: npu_trace, golden_trace, mode, summary, first_failing_op, first_introducing_op (null when
// none), rows[] (op_name, op_type, call_index, pass, tensor, shape, dtype, cosine, max_abs_err,
// max_rel_err, one_thousandth_ratio, five_thousandth_ratio, rmse, verdict, origin, ...), unmatched,
// notes. Metrics that do not apply are null, and so is `pass` for a trace without PYTORCH_API.
std::string to_json(const CompareResult& result);

// The rows, one per line, the JSON rows' fields as columns (`pass` last, empty when unknown).
void write_csv(const CompareResult& result, std::ostream& out);

}  // namespace npuscope::comparator

// Compares an NPU trace with a golden (CPU) trace of the same workload, op by op: what msprobe
// compare and msit debug compare do. DESIGN.md's "Comparator" section; Note [Op pairing] in
// npuscope/analyzer/op_pairing.h and Note [Verdicts] in comparator/src/verdict.h say how ops are
// paired and judged.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "npuscope/analyzer/op_pairing.h"
#include "npuscope/collector/trace_reader.h"
#include "npuscope/comparator/tensor_metrics.h"

namespace npuscope::comparator {

// Bad input: a trace without tensor dumps, an unreadable mapping file. The message says what to do.
class CompareError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Verdicts, error origins (Note [Verdicts]) and pairing stages are the vocabulary's (vocabulary.h:
// Verdict, ErrorOrigin, PairingStage), named with enum_name: COMPARE_RESULT stores their values.

// The pairing stages compare runs, and why (Note [Op pairing]): the golden run is the reference,
// the NPU run the subject.
inline constexpr PairingStage kCompareStages[] = {PairingStage::kName, PairingStage::kTypeShape,
                                                  PairingStage::kTypeOrder};
// The keys of --mapping's list form, as msprobe's mapping files name them ("bench" for "golden").
inline constexpr analyzer::NameMapKeys kMappingKeys{"npu", "golden", "bench"};

// Statistics mode (traces dumped with --dump stats): msprobe's relative differences of the summary
// statistics, |npu - golden| / (max(|npu|, |golden|) + 1e-10).
struct StatsDiff {
  double max_rel = 0, min_rel = 0, mean_rel = 0, norm_rel = 0;
  bool nan_inf_differ = false;  // NaN or Inf counts differ
};

// One tensor of one matched op.
struct CompareRow {
  std::string op_name, op_type;
  std::int32_t call_index = 0;
  std::string pass;  // the NPU task's model pass (Note [Model pass of an op] in compare_ops.h); "" unknown
  std::int64_t npu_task_id = 0, golden_task_id = 0;  // 0: no counterpart
  PairingStage match = PairingStage::kName;
  std::int32_t role = 0, index = 0;  // TENSOR.role (0 input, 1 output) and idx
  std::string tensor;                // "input.0", "output.1"
  std::string shape, dtype, golden_shape, golden_dtype;
  bool stats_mode = false;  // no tensor data on both sides: `stats` is set, `metrics` is not
  TensorMetrics metrics;
  StatsDiff stats;
  Verdict verdict = Verdict::kNotApplicable;
  std::string reason;                       // why it failed or could not be compared
  ErrorOrigin origin = ErrorOrigin::kNone;  // the op's, repeated on its rows
};

// One NPU op and its outputs' verdict.
struct OpVerdict {
  std::string op_name, op_type;
  std::int32_t call_index = 0;
  std::string pass;  // "forward", "backward", "optimizer"; "" when the trace has no PYTORCH_API
  std::int64_t npu_task_id = 0, golden_task_id = 0;
  std::int64_t start_ns = 0;                  // -1: not known (read back from COMPARE_RESULT)
  Verdict verdict = Verdict::kNotApplicable;  // fail if any output fails, pass if all pass
  ErrorOrigin origin = ErrorOrigin::kNone;
  double worst_cosine = 0, worst_max_abs_err = 0;  // over its outputs (NaN when not compared)
  bool npu_overflow = false;                       // the NPU task was flagged as overflowing
  std::int64_t npu_underflow = 0;                  // output elements the NPU task flushed to zero (TASK.underflow)
};

struct UnmatchedOp {
  std::string op_name, op_type;
  std::int32_t call_index = 0;
  std::int64_t task_id = 0;
};

struct CompareOptions {
  // NPU op name -> golden op name, applied before pairing by name (analyzer::load_name_map with
  // kMappingKeys).
  analyzer::NameMap mapping;
  // Called after each op with (ops done, ops in all): for a progress line on long comparisons.
  std::function<void(std::int64_t, std::int64_t)> progress;
};

struct CompareResult {
  std::string npu_path, golden_path;
  std::string mode;              // "tensor", "stats" or "mixed": what the dumps allowed
  std::vector<OpVerdict> ops;    // matched NPU ops in execution (start) order
  std::vector<CompareRow> rows;  // their tensors, op by op, inputs then outputs
  std::vector<UnmatchedOp> unmatched_npu, unmatched_golden;
  std::int64_t passed = 0, failed = 0, not_applicable = 0;      // ops
  std::optional<std::size_t> first_failing, first_introducing;  // indexes into `ops`
  std::vector<std::string> notes;
  bool stored = false;  // read back from COMPARE_RESULT (load_results): no unmatched ops, shapes or passes
};

// Throws CompareError when a trace has no tensor dumps; collector::TraceError when it is unreadable.
CompareResult compare_traces(const collector::TraceReader& npu, const collector::TraceReader& golden,
                             const CompareOptions& options = {});

}  // namespace npuscope::comparator

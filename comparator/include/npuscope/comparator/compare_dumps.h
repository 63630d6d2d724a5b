// Compares two msprobe dumps (collector::MsprobeDump: an NPU run and its bench run, one step of one
// rank each) as msprobe's compare does (Ascend/msprobe python/msprobe/core/compare: acc_compare.py,
// indicator_analysis/, npy_compare.py): entry by entry, value by value, into msprobe's
// compare_result rows with its Result and Err_message, and, as compare_traces does, each entry's
// verdict and the first failing and first introducing entry. docs/compare.md "Comparing msprobe
// dumps" is the user's guide.
//
// Note [Dump comparison modes]
// msprobe's dump_mode comes from the two dump.json tasks: tensor (ALL: the tensors' data compared),
// statistics (SUMMARY: their Max/Min/Mean/Norm), md5 (statistics with summary_mode md5: CRC-32
// equality). msprobe refuses two dumps of different tasks; we compare them in the richest mode both
// allow and say so in a note: a tensor dump carries statistics too, so tensor against statistics is a
// statistics comparison (an npuscope trace's dump against a real statistics dump, the common case);
// md5 against anything else has nothing in common and is a CompareError.
//
// Note [Dump entry matching]
// msprobe pairs compare rows by name: entry name + "." + slot ("Functional.conv2d.0.forward.input.0").
// We pair the same way in two steps, which give the same pairs and cost one hash per entry:
//  1. entries by their full name (with the call index and forward/backward). Backward entries are
//     first renumbered on both sides by their order among the backward entries of their name (as
//     msprobe's update_backward_call does, so that a recomputed forward does not shift them). With
//     --fuzzy-match (msprobe's -fm) the call index is ignored: the k-th entry of a name (less its call
//     index) pairs with the k-th of the other run, both in dump order (the name stage of Note [Op
//     pairing] on names without call index); msprobe walks the two lists with a greedy queue instead, which pairs the
//     same entries unless the runs call the APIs in a different relative order.
//  2. values of a paired entry by slot; a pair whose dtypes differ beyond msprobe's float group
//     (float16, float32, bfloat16 compare with each other) is no pair (msprobe's gen_dtype_condition).
// The name map (--mapping, kMappingKeys) renames NPU entries first: a key is a full entry name, an
// API or module name without call index and direction ("Torch.matmul: Tensor.matmul",
// "Module.enc.Encoder: Module.encoder.Encoder"), or the module part msprobe's cell_mapping YAML maps
// ("enc.Encoder: encoder.Encoder"); msprobe's data_mapping and api_mapping pair values across slots
// (Note [Dump mapping files]). What pairs nothing is listed on its side, never dropped.
//
// Note [Dump verdicts]
// Result and Err_message are msprobe's (indicator_analysis/algorithm.py's checkers, per entry: NaN/Inf
// in the NPU max or min but not the bench's, inputs' NormRelativeErr < 0.1 while an output's is > 0.5,
// dtype, shape, requires_grad or scalar argument mismatch -> error; an output's NormRelativeErr 10x
// its inputs' -> warning; tensor mode: inputs' One Thousandth Err Ratio > 0.9 while an output's is
// < 0.1 -> error, an output's cosine 0.1 below its inputs' -> warning; md5: CRC-32 differs -> error,
// no counterpart -> warning). Accuracy Reached or Not (tensor mode) is the older msprobe's rule on
// Cosine and MaxAbsErr (Note [Verdicts]). A value's verdict, which finds the first failing entry:
// fail when its Result is error, or (tensor mode) its metrics fail Note [Verdicts]'s rule, or
// (statistics mode) its statistics differ by more than Note [Verdicts]'s 0.5; n/a when it has no
// counterpart or could not be loaded. An entry is judged from its values as an op from its tensors
// (Note [Verdicts]; a parameters_grad entry's gradients are its outputs).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "npuscope/analyzer/op_pairing.h"
#include "npuscope/collector/msprobe_dump.h"
#include "npuscope/comparator/compare.h"
#include "npuscope/comparator/dump_mapping.h"
#include "npuscope/comparator/tensor_metrics.h"

namespace npuscope::comparator {

// msprobe's dump_mode (Note [Dump comparison modes]).
enum class DumpMode : std::uint8_t { kTensor, kStatistics, kMd5 };
std::string_view dump_mode_name(DumpMode mode);  // "tensor", "statistics", "md5"

// msprobe's Result column (indicator_analysis ResultLevel): the worst a checker found.
enum class DumpResult : std::uint8_t { kPass, kWarning, kError };
std::string_view dump_result_name(DumpResult result);  // "pass", "warning", "error"

struct DumpCompareOptions {
  // NPU names -> bench names (Note [Dump entry matching]), and msprobe's data_mapping and
  // api_mapping (Note [Dump mapping files]): load_dump_mapping.
  DumpMapping mapping;
  bool fuzzy_match = false;  // msprobe's -fm: entries pair whatever their call index
  // Called after each paired entry with (entries done, entries in all).
  std::function<void(std::int64_t, std::int64_t)> progress;
};

// One compare_result row: a value of an NPU entry and its bench counterpart, if any.
struct DumpRow {
  std::int32_t entry = -1;                        // into DumpCompareResult::entries; -1: its NPU entry paired nothing
  std::int32_t npu_entry = -1, bench_entry = -1;  // into the dumps' entries; bench -1: none
  const collector::DumpValue* npu = nullptr;      // into the NPU dump
  const collector::DumpValue* bench = nullptr;    // into the bench dump; null: no counterpart
  bool output = false;                            // msprobe's split: an output slot (".output." in its name)
  // Tensor mode: the metrics when both tensors were loaded and compared (metrics.comparable may
  // still be false: NaN/Inf at different places); `why` says what stopped it otherwise (msprobe's
  // Err_message text: "Shape of NPU and bench tensor do not match. Skipped.", a load error, ...).
  bool compared = false;
  TensorMetrics metrics;
  std::string why;
  bool load_failed = false;  // MsprobeDump::load threw: `why` has its message
  StatsDiff stats;           // statistics mode: Note [Verdicts]'s relative differences
  DumpResult result = DumpResult::kPass;
  std::vector<std::string> messages;  // msprobe's checker messages, then ours (Err_message)
  Verdict verdict = Verdict::kNotApplicable;
  std::string reason;  // why it failed or was not compared
};

// A paired entry.
struct DumpEntryVerdict {
  std::int32_t npu = -1, bench = -1;         // into the dumps' entries
  PairingStage match = PairingStage::kName;  // kName, or kNameMap when --mapping renamed it
  bool fuzzy = false;                        // paired by --fuzzy-match (the call indexes may differ)
  Verdict verdict = Verdict::kNotApplicable;
  ErrorOrigin origin = ErrorOrigin::kNone;
  DumpResult result = DumpResult::kPass;           // its rows' worst
  double worst_cosine = 0, worst_max_abs_err = 0;  // over its outputs; NaN when none was compared
  std::size_t first_row = 0, last_row = 0;         // its rows: [first_row, last_row)
  bool backward = false;                           // a backward or parameters_grad entry
};

// An entry, or a value of a paired entry, that paired nothing.
struct UnmatchedDumpItem {
  std::int32_t entry = -1;  // into its dump's entries
  std::string slot;         // "" for a whole entry, else the value's slot
};

struct DumpCompareResult {
  // The two dumps compared: the result points into them, keep them alive while it is used.
  const collector::MsprobeDump* npu = nullptr;
  const collector::MsprobeDump* bench = nullptr;
  DumpMode mode = DumpMode::kStatistics;
  std::vector<DumpEntryVerdict> entries;  // paired entries in NPU dump order (execution order)
  std::vector<DumpRow> rows;              // every NPU value, entry by entry: inputs, parameters, outputs
  std::vector<UnmatchedDumpItem> unmatched_npu, unmatched_bench;
  std::int64_t passed = 0, failed = 0, not_applicable = 0;  // entries
  std::int64_t warnings = 0, errors = 0;                    // entries by msprobe's Result
  // Indexes into `entries`, forward and backward apart (backward entries in the order they ran,
  // which is dump order: the reverse of their forward entries').
  std::optional<std::size_t> first_failing, first_introducing;
  std::optional<std::size_t> first_failing_backward, first_introducing_backward;
  std::vector<std::string> notes;
};

// Throws CompareError for two dumps that cannot be compared (Note [Dump comparison modes]; a
// PyTorch NPU dump against a bench of another framework, which msprobe refuses too). A tensor that
// cannot be loaded is that value's Err_message, never an exception.
DumpCompareResult compare_dumps(const collector::MsprobeDump& npu, const collector::MsprobeDump& bench,
                                const DumpCompareOptions& options = {});

}  // namespace npuscope::comparator

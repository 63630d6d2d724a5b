// compare_dumps: pairs the entries (dump_match.h), then walks the NPU dump entry by entry: its rows,
// the tensors of a tensor dump loaded one pair at a time, msprobe's checkers (dump_checkers.h), the
// verdicts (Note [Dump verdicts] in compare_dumps.h).
#include "npuscope/comparator/compare_dumps.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <thread>

#include "dump_checkers.h"
#include "dump_match.h"
#include "dump_values.h"
#include "npuscope/collector/huge_pages.h"
#include "npuscope/runtime_hooks/vocabulary.h"
#include "verdict.h"

namespace npuscope::comparator {
namespace {

using collector::DumpEntry;
using collector::DumpValue;
using collector::MsprobeDump;

std::string framework_of(const MsprobeDump& d) { return d.framework.empty() ? "pytorch" : d.framework; }

// msprobe's get_compare_framework: PyTorch against PyTorch, MindSpore (or MindTorch) against either.
// Returns whether the two are of different frameworks.
bool check_frameworks(const MsprobeDump& npu, const MsprobeDump& bench) {
  const std::string n = framework_of(npu), b = framework_of(bench);
  const bool ms_npu = n == "mindspore" || n == "mindtorch";
  if ((n == "pytorch" && b == "pytorch") || (ms_npu && (b == "pytorch" || b == "mindspore"))) return n != b;
  throw CompareError(npu.path + ": a " + n + " dump cannot be compared with " + bench.path + ", a " + b +
                     " dump: msprobe compares a PyTorch dump with a PyTorch bench, and a MindSpore dump with a "
                     "PyTorch or MindSpore bench");
}

DumpMode mode_of_task(const MsprobeDump& d) {
  if (d.task == "tensor") return DumpMode::kTensor;
  if (d.task == "md5") return DumpMode::kMd5;
  if (d.task == "structure") {
    throw CompareError(d.path + ": a structure dump (task structure) holds no statistics or tensors to compare");
  }
  return DumpMode::kStatistics;
}

// Note [Dump comparison modes].
DumpMode choose_mode(const MsprobeDump& npu, const MsprobeDump& bench, std::vector<std::string>& notes) {
  const DumpMode n = mode_of_task(npu), b = mode_of_task(bench);
  if (n == b) return n;
  if (n == DumpMode::kMd5 || b == DumpMode::kMd5) {
    throw CompareError(npu.path + " is a " + std::string(dump_mode_name(n)) + " dump and " + bench.path + " a " +
                       std::string(dump_mode_name(b)) +
                       " dump: they have nothing to compare (dump both with the same task, or both with summary_mode "
                       "md5)");
  }
  notes.push_back("the NPU dump is a " + std::string(dump_mode_name(n)) + " dump and the bench a " +
                  std::string(dump_mode_name(b)) +
                  " dump: compared in statistics mode (msprobe itself refuses dumps of different tasks)");
  return DumpMode::kStatistics;
}

std::int64_t numel_of(const DumpValue& v) {
  std::int64_t n = 1;
  for (const std::int64_t d : v.shape) n *= d;
  return n;
}

// Loads one side's tensor; "" or why not (msprobe's Err_message words).
std::string load(const MsprobeDump& dump, const DumpEntry& entry, const DumpValue& v, const char* side,
                 collector::DumpTensorData& out, bool& failed) {
  if (v.data_name.empty() || !dump.load) return std::string(side) + " does not have data file.";
  try {
    dump.load(entry, v, out);
  } catch (const collector::MsprobeDumpError& e) {
    failed = true;
    return e.what();
  }
  return "";
}

// Both tensors of a row, or `r.why` says why not (the NPU's reason first). A big pair is read on two
// threads, the bench's beside the NPU's: reading the files is most of comparing them (a 16 MB float32
// pair at PERFORMANCE.md's rates: 11 ms to read both from the page cache, 5 ms for the metrics).
void load_both(const MsprobeDump& npu, const DumpEntry& npu_entry, const MsprobeDump& bench,
               const DumpEntry& bench_entry, DumpRow& r, collector::DumpTensorData& n, collector::DumpTensorData& b) {
  constexpr std::int64_t kTwoThreadsFrom = 1 << 20;  // elements: below, a thread costs more than it saves
  std::string bench_why;
  bool npu_failed = false, bench_failed = false;
  std::exception_ptr bench_error;
  std::thread reader;
  if (numel_of(*r.bench) >= kTwoThreadsFrom && std::thread::hardware_concurrency() > 1) {
    reader = std::thread([&] {
      try {
        bench_why = load(bench, bench_entry, *r.bench, "Bench", b, bench_failed);
      } catch (...) {  // not a MsprobeDumpError (those are its why): std::bad_alloc
        bench_error = std::current_exception();
      }
    });
  }
  std::exception_ptr npu_error;
  try {
    r.why = load(npu, npu_entry, *r.npu, "NPU", n, npu_failed);
  } catch (...) {
    npu_error = std::current_exception();  // rethrown once the reader is joined
  }
  if (reader.joinable()) {
    reader.join();
  } else if (!npu_error && r.why.empty()) {
    bench_why = load(bench, bench_entry, *r.bench, "Bench", b, bench_failed);
  }
  if (npu_error) std::rethrow_exception(npu_error);
  if (bench_error) std::rethrow_exception(bench_error);
  r.load_failed = r.why.empty() ? bench_failed : npu_failed;
  if (r.why.empty()) r.why = std::move(bench_why);
}

// The dtype msprobe's compare sees a loaded tensor as: its read_pt_data makes bfloat16 float32.
std::int32_t as_numpy(std::int32_t dtype) {
  return dtype == static_cast<std::int32_t>(DType::kBF16) ? static_cast<std::int32_t>(DType::kF32) : dtype;
}

// Tensor mode: both tensors loaded into `n` and `b` (the comparison's two buffers, reused from row
// to row) and compared (npy_compare's ValidateTensor order: empty, shape, then the metrics), or why
// not.
void compare_tensor_row(const MsprobeDump& npu, const DumpEntry& npu_entry, const MsprobeDump& bench,
                        const DumpEntry& bench_entry, DumpRow& r, collector::DumpTensorData& n,
                        collector::DumpTensorData& b) {
  if (!r.npu->is_tensor || !r.bench->is_tensor) return;  // scalar arguments: the checkers judge them
  if (r.npu->shape != r.bench->shape) {
    r.why = "Shape of NPU and bench tensor do not match. Skipped.";
    return;
  }
  if (numel_of(*r.npu) == 0) {
    r.why = "This is empty data, can not compare.";
    return;
  }
  for (const DumpValue* v : {r.npu, r.bench}) {
    if (v->dtype_id < 0) {  // no loader reads it (a complex or float8 tensor): say so, read no file
      r.why = (v == r.npu ? "NPU" : "Bench") + std::string(" tensor of dtype ") + v->dtype +
              ", which npuscope does not compare: not compared.";
      return;
    }
  }
  load_both(npu, npu_entry, bench, bench_entry, r, n, b);
  if (!r.why.empty()) return;
  const TensorData nd{n.bytes.data(), n.dtype_id, static_cast<std::size_t>(n.numel), n.bytes.size()};
  const TensorData bd{b.bytes.data(), b.dtype_id, static_cast<std::size_t>(b.numel), b.bytes.size()};
  r.metrics = compare_tensors(nd, bd);
  r.compared = true;
  if (!r.metrics.comparable) {
    r.why = r.metrics.nan_inf_mismatches > 0 ? "The position of inf or nan in NPU and bench Tensor do not match."
                                             : r.metrics.why;
  } else if (as_numpy(n.dtype_id) != as_numpy(b.dtype_id)) {
    r.why = "Dtype of NPU and bench tensor do not match.";
  }
}

// A statistic null on either side is NaN here, and NaN judges nothing (stats_failure).
StatsSummary summary_of(const DumpValue& v, std::uint8_t both) {
  const auto stat = [&](std::uint8_t bit, double x) { return (both & bit) != 0 ? x : DumpValue::kNone; };
  return {stat(DumpValue::kHasMax, v.max), stat(DumpValue::kHasMin, v.min), stat(DumpValue::kHasMean, v.mean),
          stat(DumpValue::kHasNorm, v.norm)};
}

// A row's verdict (Note [Dump verdicts]).
void judge_row(DumpMode mode, DumpRow& r) {
  if (r.bench == nullptr) {
    r.verdict = Verdict::kNotApplicable;
    r.reason = "no bench value";
    return;
  }
  r.verdict = Verdict::kPass;
  if (is_null_value(*r.npu) && is_null_value(*r.bench)) r.verdict = Verdict::kNotApplicable;
  const bool tensors = r.npu->is_tensor && r.bench->is_tensor;
  if (mode == DumpMode::kTensor && tensors) {
    if (r.compared) {
      r.reason = tensor_failure(r.metrics);
      if (!r.reason.empty() || !r.metrics.comparable) r.verdict = Verdict::kFail;
    } else if (r.npu->shape != r.bench->shape) {
      r.verdict = Verdict::kFail;
      r.reason = r.why;
    } else {
      r.verdict = Verdict::kNotApplicable;
      r.reason = r.why;
    }
  } else if (mode == DumpMode::kStatistics && tensors) {
    if (!r.npu->has_stats || !r.bench->has_stats) {
      r.verdict = Verdict::kNotApplicable;
      r.reason = std::string("no statistics in the ") + (r.npu->has_stats ? "bench" : "NPU") + " dump (null)";
    } else if ((r.npu->stats_present & r.bench->stats_present) == 0) {
      r.verdict = Verdict::kNotApplicable;
      r.reason = "no statistic in both dumps (the others are null)";
    } else if (std::string why =
                   stats_failure(summary_of(*r.npu, r.npu->stats_present & r.bench->stats_present),
                                 summary_of(*r.bench, r.npu->stats_present & r.bench->stats_present), r.stats);
               !why.empty()) {
      r.verdict = Verdict::kFail;
      r.reason = std::move(why);
    }
  }
  if (r.result == DumpResult::kError) {
    if (r.verdict != Verdict::kFail) {
      const auto error = std::find_if(r.messages.begin(), r.messages.end(),
                                      [](const std::string& m) { return m.starts_with("error:"); });
      r.reason = error != r.messages.end() ? *error : "msprobe's Result is error";
    }
    r.verdict = Verdict::kFail;
  }
}

// The entry's verdict, origin and worst metrics from its rows.
void judge_entry(DumpEntryVerdict& e, std::span<const DumpRow> rows, bool params_grad) {
  const auto output = [&](const DumpRow& r) { return r.output || params_grad; };
  const GroupVerdict g = judge_group(rows.begin(), rows.end(), output, [](const DumpRow& r) { return r.verdict; });
  e.verdict = g.verdict;
  e.origin = g.origin;
  e.worst_cosine = e.worst_max_abs_err = std::numeric_limits<double>::quiet_NaN();
  for (const DumpRow& r : rows) {
    e.result = std::max(e.result, r.result);
    if (!output(r) || !r.compared || !r.metrics.comparable) continue;
    const double c = r.metrics.cosine, err = r.metrics.max_abs_err;
    if (!std::isnan(c) && (std::isnan(e.worst_cosine) || c < e.worst_cosine)) e.worst_cosine = c;
    if (std::isnan(e.worst_max_abs_err) || err > e.worst_max_abs_err) e.worst_max_abs_err = err;
  }
}

void count_entry(DumpCompareResult& result, const DumpEntryVerdict& e) {
  const std::size_t at = result.entries.size();
  ++(e.verdict == Verdict::kPass ? result.passed : e.verdict == Verdict::kFail ? result.failed : result.not_applicable);
  if (e.result == DumpResult::kWarning) ++result.warnings;
  if (e.result == DumpResult::kError) ++result.errors;
  auto& failing = e.backward ? result.first_failing_backward : result.first_failing;
  auto& introducing = e.backward ? result.first_introducing_backward : result.first_introducing;
  if (e.verdict == Verdict::kFail && !failing) failing = at;
  if (e.origin == ErrorOrigin::kIntroduced && !introducing) introducing = at;
}

// msprobe's split: ".output." in the row's name "{entry}.{slot}" (without writing it).
bool output_row(std::string_view entry, std::string_view slot) {
  if (entry.find(".output.") != std::string_view::npos || entry.ends_with(".output")) return true;
  for (std::size_t at = slot.find("output"); at != std::string_view::npos; at = slot.find("output", at + 1)) {
    const bool starts = at == 0 || slot[at - 1] == '.', ends = at + 6 == slot.size() || slot[at + 6] == '.';
    if (starts && ends) return true;
  }
  return false;
}

void add_notes(DumpCompareResult& r, const DumpCompareOptions& options, bool cross_frame) {
  std::int64_t load_failures = 0;
  for (const DumpRow& row : r.rows) load_failures += row.load_failed ? 1 : 0;
  if (load_failures > 0) {
    r.notes.push_back(std::to_string(load_failures) +
                      " tensors could not be loaded: their Err_message says why, and they were not compared");
  }
  if (cross_frame) {
    r.notes.push_back("a " + framework_of(*r.npu) + " dump against a " + framework_of(*r.bench) +
                      " dump: Cell, Mint and MintFunctional names read as Module, Torch and Functional, dtypes "
                      "compared by kind; map other names with --mapping");
  }
  if (options.fuzzy_match) {
    r.notes.emplace_back(
        "fuzzy matching: entries paired by name whatever their call index, in dump order; check the pairs whose "
        "call indexes differ");
  }
  for (const auto* d : {r.npu, r.bench}) {
    if (d == r.bench && r.bench->path == r.npu->path) break;  // one dump against itself: its notes once
    for (const std::string& note : d->notes) r.notes.push_back(d->path + ": " + note);
  }
}

}  // namespace

std::string_view dump_mode_name(DumpMode mode) {
  switch (mode) {
    case DumpMode::kTensor: return "tensor";
    case DumpMode::kStatistics: return "statistics";
    case DumpMode::kMd5: return "md5";
  }
  return "";
}

std::string_view dump_result_name(DumpResult result) {
  switch (result) {
    case DumpResult::kPass: return "pass";
    case DumpResult::kWarning: return "warning";
    case DumpResult::kError: return "error";
  }
  return "";
}

DumpCompareResult compare_dumps(const MsprobeDump& npu, const MsprobeDump& bench, const DumpCompareOptions& options) {
  DumpCompareResult result;
  result.npu = &npu;
  result.bench = &bench;
  const bool cross_frame = check_frameworks(npu, bench);
  result.mode = choose_mode(npu, bench, result.notes);
  const EntryPairing pairing = pair_dump_entries(npu, bench, options.mapping.names, options.fuzzy_match, cross_frame);
  std::vector<const EntryPair*> pair_of(npu.entries.size(), nullptr);
  for (const EntryPair& p : pairing.pairs) pair_of[p.npu] = &p;
  std::size_t values_in_all = 0;
  for (const DumpEntry& e : npu.entries) values_in_all += e.values.size();
  // A row per NPU value: the rows never move. Hundreds of MB for a big dump: in huge pages (Note [Huge
  // pages for the JSON parser] in importer/src/msprobe_dump_json.cpp).
  collector::reserve_in_huge_pages(result.rows, values_in_all);
  ValuePairing values;
  SlotMap slots;
  EntryChecker checker;
  collector::DumpTensorData npu_data, bench_data;  // tensor mode: every row's tensors, in turn
  const auto total = static_cast<std::int64_t>(npu.entries.size());
  for (std::size_t i = 0; i < npu.entries.size(); ++i) {
    const DumpEntry& ne = npu.entries[i];
    const EntryPair* pair = pair_of[i];
    const DumpEntry* be = pair != nullptr ? &bench.entries[pair->bench] : nullptr;
    mapped_slots(options.mapping, ne.name, be != nullptr ? std::string_view(be->name) : "", slots);
    pair_values(ne, be, cross_frame, slots, values);
    const std::size_t first = result.rows.size();
    const auto entry_index = be != nullptr ? static_cast<std::int32_t>(result.entries.size()) : -1;
    for (std::size_t k = 0; k < values.npu_order.size(); ++k) {
      DumpRow& r = result.rows.emplace_back();
      r.entry = entry_index;
      r.npu_entry = static_cast<std::int32_t>(i);
      r.npu = &ne.values[static_cast<std::size_t>(values.npu_order[k])];
      r.output = output_row(ne.name, r.npu->slot);
      if (values.bench_of[k] >= 0) {
        r.bench_entry = static_cast<std::int32_t>(pair->bench);
        r.bench = &be->values[static_cast<std::size_t>(values.bench_of[k])];
        if (result.mode == DumpMode::kTensor) compare_tensor_row(npu, ne, bench, *be, r, npu_data, bench_data);
      } else {
        r.why = "No bench data matched.";
        if (be != nullptr) result.unmatched_npu.push_back({static_cast<std::int32_t>(i), r.npu->slot});
      }
    }
    std::span<DumpRow> rows(result.rows.data() + first, result.rows.size() - first);
    checker.check(result.mode, ne.name, be != nullptr ? std::string_view(be->name) : "", rows);
    for (DumpRow& r : rows) {
      judge_row(result.mode, r);
      if (!r.why.empty()) r.messages.push_back(r.why);
    }
    if (be == nullptr) {
      result.unmatched_npu.push_back({static_cast<std::int32_t>(i), ""});
    } else {
      for (const std::int32_t j : values.bench_only)
        result.unmatched_bench.push_back(
            {static_cast<std::int32_t>(pair->bench), be->values[static_cast<std::size_t>(j)].slot});
      DumpEntryVerdict e;
      e.npu = static_cast<std::int32_t>(i);
      e.bench = static_cast<std::int32_t>(pair->bench);
      e.match = pair->renamed ? PairingStage::kNameMap : PairingStage::kName;
      e.fuzzy = options.fuzzy_match;
      e.first_row = first;
      e.last_row = result.rows.size();
      const DumpName::Pass pass = split_dump_name(ne.name).pass;
      e.backward = pass == DumpName::Pass::kBackward || pass == DumpName::Pass::kParamsGrad;
      judge_entry(e, rows, pass == DumpName::Pass::kParamsGrad);
      count_entry(result, e);
      result.entries.push_back(e);
    }
    if (options.progress) options.progress(static_cast<std::int64_t>(i) + 1, total);
  }
  for (const std::uint32_t j : pairing.bench_only) result.unmatched_bench.push_back({static_cast<std::int32_t>(j), ""});
  add_notes(result, options, cross_frame);
  return result;
}

}  // namespace npuscope::comparator

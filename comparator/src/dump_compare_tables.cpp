// The tables of a dump comparison (Note [Finding tables]; compare_report.h): declared once here,
// written by the analyzer's renderers. compare_result's columns are msprobe's header names for the
// mode (CompareConst in msprobe's core/common/const.py) and its cells the text msprobe writes, so
// that what reads msprobe's compare_result CSV reads ours.
#include <array>
#include <cmath>
#include <span>
#include <string_view>

#include "dump_checkers.h"
#include "dump_match.h"
#include "dump_values.h"
#include "npuscope/collector/json_string.h"
#include "npuscope/comparator/compare_report.h"
#include "report_cells.h"

namespace npuscope::comparator {
namespace {

using analyzer::Column;
using analyzer::Layout;
using analyzer::Row;
using analyzer::Section;
using analyzer::Table;
using analyzer::TableSpec;
using analyzer::Unit;
using analyzer::Value;
using collector::DumpEntry;

constexpr Column kSummaryColumns[] = {
    {"npu_dump", Unit::kText, "the NPU dump (a step of a rank)", "NPU"},
    {"bench_dump", Unit::kText, "the bench dump", "bench"},
    {"mode", Unit::kText, "tensor, statistics or md5 (Note [Dump comparison modes])"},
    {"entries_compared", Unit::kCount, "paired entries"},
    {"passed", Unit::kCount, "entries whose compared outputs all pass"},
    {"failed", Unit::kCount, "entries with a failing output"},
    {"not_applicable", Unit::kCount, "entries none of whose outputs could be compared", "n/a"},
    {"errors", Unit::kCount, "entries with a row msprobe's Result calls error"},
    {"warnings", Unit::kCount, "entries whose worst Result is warning"},
    {"unmatched_npu", Unit::kCount, "NPU entries and values with no bench counterpart", "unmatched NPU"},
    {"unmatched_bench", Unit::kCount, "bench entries and values with no NPU counterpart", "unmatched bench"},
    {"first_failing", Unit::kText,
     "the first failing forward entry in dump order, in a line: name (module): worst cosine and max abs err; the "
     "reason of its first failing row; the first frame of its stack outside torch and msprobe; `none`",
     "first failing entry"},
    {"first_introducing", Unit::kText,
     "the first forward entry that introduced the error (its inputs match the bench, its outputs do not); null when "
     "none",
     "first entry that introduced the error"},
    {"first_failing_backward", Unit::kText,
     "the first failing backward or parameters_grad entry, in the order the backward ran (dump order); null when "
     "none",
     "first failing backward entry"},
    {"first_introducing_backward", Unit::kText, "the first backward entry that introduced the error; null when none",
     "first backward entry that introduced the error"},
};
constexpr TableSpec kSummaryTable{"dump_summary",  "Dump comparison", "What was compared, and the verdict.",
                                  kSummaryColumns, Layout::kRecord,   Section::kSummary};

constexpr Column kEntryColumns[] = {
    {"entry", Unit::kOpName, "the NPU entry's name in dump.json"},
    {"pass", Unit::kText, "forward, backward or parameters_grad"},
    {"verdict", Unit::kText, "pass, fail or n/a (Note [Dump verdicts])"},
    {"origin", Unit::kText, "introduced (it failed, its inputs did not), inherited or none"},
    {"result", Unit::kText, "msprobe's Result: the worst of its rows (pass, warning, error)"},
    {"cosine", Unit::kSimilarity, "its outputs' lowest cosine (tensor mode); null otherwise"},
    {"max_abs_err", Unit::kNumber, "its outputs' largest max abs err (tensor mode); null otherwise", "max abs err"},
    {"reason", Unit::kText, "its first failing row: slot and why"},
    {"module", Unit::kText, "the module it ran in (construct.json); null when none", "module", true},
    {"bench_entry", Unit::kText, "the bench entry it was paired with", "bench entry", true},
    {"match", Unit::kText, "name, name map (--mapping) or fuzzy (--fuzzy-match)", "match", true},
    {"stack", Unit::kList, "its call stack (stack.json), innermost frame first", "stack", true},
};
constexpr TableSpec kEntriesTable{"entries", "Worst entries",
                                  "Every paired entry, failing first, then errors, warnings, lowest cosine and largest "
                                  "max abs err, then dump order.",
                                  kEntryColumns};
constexpr TableSpec kFirstFailingTable{"first_failing_entry",
                                       "First failing entry",
                                       "The first failing forward entry in dump order; null when none fails.",
                                       kEntryColumns,
                                       Layout::kRecord,
                                       Section::kDetail};
constexpr TableSpec kFirstIntroducingTable{
    "first_introducing_entry",
    "First entry that introduced the error",
    "The first failing forward entry whose inputs match the bench (Note [Verdicts]); null when none.",
    kEntryColumns,
    Layout::kRecord,
    Section::kDetail,
    {},
    {},
    analyzer::kNotInText};
constexpr TableSpec kFirstFailingBackwardTable{
    "first_failing_backward_entry",
    "First failing backward entry",
    "The first failing backward or parameters_grad entry in the order the backward ran; null when none.",
    kEntryColumns,
    Layout::kRecord,
    Section::kDetail,
    {},
    {},
    analyzer::kNotInText};
constexpr TableSpec kFirstIntroducingBackwardTable{
    "first_introducing_backward_entry",
    "First backward entry that introduced the error",
    "The first failing backward entry whose inputs (the gradients it received) match the bench; null when none.",
    kEntryColumns,
    Layout::kRecord,
    Section::kDetail,
    {},
    {},
    analyzer::kNotInText};

constexpr Column kUnmatchedColumns[] = {
    {"entry", Unit::kOpName, "the entry's name in its dump"},
    {"slot", Unit::kText, "the value's slot (input.0, output.1, ...); null for a whole entry"},
    {"index", Unit::kCount, "the entry's place in its dump.json", "index", true},
};
constexpr TableSpec kUnmatchedNpuTable{"unmatched_npu",
                                       "Unmatched NPU entries",
                                       "NPU entries, and values of paired entries, with no bench counterpart.",
                                       kUnmatchedColumns,
                                       Layout::kRows,
                                       Section::kDetail,
                                       {},
                                       {},
                                       20};
constexpr TableSpec kUnmatchedBenchTable{"unmatched_bench",
                                         "Unmatched bench entries",
                                         "Bench entries, and values of paired entries, with no NPU counterpart.",
                                         kUnmatchedColumns,
                                         Layout::kRows,
                                         Section::kDetail,
                                         {},
                                         {},
                                         20};

// msprobe's compare_result columns (CompareConst), all text.
#define NPUSCOPE_TEXT(name, doc) \
  { name, Unit::kText, doc, name }
#define NPUSCOPE_BASIC_INFO                                                                                         \
  NPUSCOPE_TEXT("NPU Name", "the NPU entry's name and the value's slot"),                                           \
      NPUSCOPE_TEXT("Bench Name", "the bench's; N/A: no counterpart"),                                              \
      NPUSCOPE_TEXT("NPU Dtype", "torch.float32, ...; a scalar argument's Python type"),                            \
      NPUSCOPE_TEXT("Bench Dtype", "the bench's"), NPUSCOPE_TEXT("NPU Tensor Shape", "[2, 3]; [] for scalars"),     \
      NPUSCOPE_TEXT("Bench Tensor Shape", "the bench's"), NPUSCOPE_TEXT("NPU Requires_grad", "True, False or N/A"), \
      NPUSCOPE_TEXT("Bench Requires_grad", "the bench's")
#define NPUSCOPE_SUMMARY_INFO                                                                                          \
  NPUSCOPE_TEXT("NPU max", "dump.json's Max; a scalar argument's value"), NPUSCOPE_TEXT("NPU min", "dump.json's Min"), \
      NPUSCOPE_TEXT("NPU mean", "dump.json's Mean"), NPUSCOPE_TEXT("NPU l2norm", "dump.json's Norm"),                  \
      NPUSCOPE_TEXT("Bench max", "the bench's"), NPUSCOPE_TEXT("Bench min", "the bench's"),                            \
      NPUSCOPE_TEXT("Bench mean", "the bench's"), NPUSCOPE_TEXT("Bench l2norm", "the bench's")
#define NPUSCOPE_EXTRACT_INDEX                                                                      \
  NPUSCOPE_TEXT("Requires_grad Consistent", "True when both Requires_grad agree"),                  \
      NPUSCOPE_TEXT("Result", "pass, warning or error: msprobe's checkers (Note [Dump verdicts])"), \
      NPUSCOPE_TEXT("Err_message", "a JSON list: the checkers' messages, then why the row was not compared")
#define NPUSCOPE_STACK NPUSCOPE_TEXT("NPU_Stack_Info", "the entry's stack on its first row (a Python list); N/A")

constexpr Column kTensorColumns[] = {
    NPUSCOPE_BASIC_INFO,
    NPUSCOPE_TEXT("Cosine", "cosine similarity; unsupported for one element or a 0-d tensor"),
    NPUSCOPE_TEXT("EucDist", "||n - b||"),
    NPUSCOPE_TEXT("MaxAbsErr", "max |n - b|"),
    NPUSCOPE_TEXT("MaxRelativeErr", "max |n - b| / |b|"),
    NPUSCOPE_TEXT("One Thousandth Err Ratio", "share of elements with relative error < 0.001"),
    NPUSCOPE_TEXT("Five Thousandths Err Ratio", "share with relative error < 0.005"),
    NPUSCOPE_SUMMARY_INFO,
    NPUSCOPE_EXTRACT_INDEX,
    NPUSCOPE_STACK,
    NPUSCOPE_TEXT("Data_name", "the two tensor files, as a Python list"),
    NPUSCOPE_TEXT("Dirty Valid Len", "msprobe's post-processing lengths: [-1, -1]"),
    NPUSCOPE_TEXT("Accuracy Reached or Not", "the older msprobe's Yes / No / Unmatched / None on Cosine and MaxAbsErr"),
};
constexpr Column kStatisticsColumns[] = {
    NPUSCOPE_BASIC_INFO,
    NPUSCOPE_TEXT("Max diff",
                  "NPU max - Bench max; 0 when equal; Nan, inf, -inf, N/A, Diff (Note [msprobe's statistics cells])"),
    NPUSCOPE_TEXT("Min diff", "the same of the minimums"),
    NPUSCOPE_TEXT("Mean diff", "of the means"),
    NPUSCOPE_TEXT("L2norm diff", "of the L2 norms"),
    NPUSCOPE_TEXT("MaxRelativeErr", "|Max diff / Bench max| * 100, with %; inf when Bench max is 0"),
    NPUSCOPE_TEXT("MinRelativeErr", "the same of the minimums"),
    NPUSCOPE_TEXT("MeanRelativeErr", "of the means"),
    NPUSCOPE_TEXT("NormRelativeErr", "of the L2 norms"),
    NPUSCOPE_SUMMARY_INFO,
    NPUSCOPE_EXTRACT_INDEX,
    NPUSCOPE_STACK,
};
constexpr Column kMd5Columns[] = {
    NPUSCOPE_BASIC_INFO,
    NPUSCOPE_TEXT("NPU MD5", "the CRC-32 dump.json holds (8 hex digits)"),
    NPUSCOPE_TEXT("BENCH MD5", "the bench's"),
    NPUSCOPE_EXTRACT_INDEX,
    NPUSCOPE_STACK,
};
#undef NPUSCOPE_STACK
#undef NPUSCOPE_EXTRACT_INDEX
#undef NPUSCOPE_SUMMARY_INFO
#undef NPUSCOPE_BASIC_INFO
#undef NPUSCOPE_TEXT

constexpr std::string_view kCompareResultDoc =
    "msprobe's compare_result rows: every NPU value, entry by entry in dump order, inputs, parameters, outputs; "
    "its columns for the mode, cells as msprobe writes them.";
constexpr TableSpec kTensorResultTable{"compare_result",
                                       "compare_result (tensor mode)",
                                       kCompareResultDoc,
                                       kTensorColumns,
                                       Layout::kRows,
                                       Section::kDetail,
                                       {},
                                       {},
                                       analyzer::kNotInText};
constexpr TableSpec kStatisticsResultTable{"compare_result",
                                           "compare_result (statistics mode)",
                                           kCompareResultDoc,
                                           kStatisticsColumns,
                                           Layout::kRows,
                                           Section::kDetail,
                                           {},
                                           {},
                                           analyzer::kNotInText};
constexpr TableSpec kMd5ResultTable{"compare_result",
                                    "compare_result (md5 mode)",
                                    kCompareResultDoc,
                                    kMd5Columns,
                                    Layout::kRows,
                                    Section::kDetail,
                                    {},
                                    {},
                                    analyzer::kNotInText};

using report_cells::metric;
using report_cells::number;
using report_cells::text_or_null;

// Python's repr of a string, appended: single quotes, or double quotes when it holds a single
// quote and no double quote; backslash, the quote and line breaks escaped.
void append_python_repr(std::string& out, std::string_view item) {
  const char quote = item.find('\'') != std::string_view::npos && item.find('"') == std::string_view::npos ? '"' : '\'';
  out += quote;
  for (const char c : item) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      if (c == quote || c == '\\') out += '\\';
      out += c;
    }
  }
  out += quote;
}

// Python's str of a list of strings: ['a', 'b'].
template <class Items>
void append_python_list(std::string& out, const Items& items) {
  out += '[';
  bool first = true;
  for (const auto& item : items) {
    if (!first) out += ", ";
    first = false;
    append_python_repr(out, item);
  }
  out += ']';
}

const std::vector<std::string>* stack_of(const collector::MsprobeDump& d, const DumpEntry& e) {
  if (e.stack < 0 || static_cast<std::size_t>(e.stack) >= d.stacks.size()) return nullptr;
  return &d.stacks[static_cast<std::size_t>(e.stack)];
}

// The first frame outside torch and msprobe, as "File F, line N, in fn".
std::string user_frame(const std::vector<std::string>* stack) {
  if (stack == nullptr || stack->empty()) return "";
  const std::string* frame = &stack->front();
  for (const std::string& f : *stack) {
    if (f.find("/torch/") == std::string::npos && f.find("/msprobe/") == std::string::npos) {
      frame = &f;
      break;
    }
  }
  const std::size_t code = frame->find(", \n");
  return frame->substr(0, code);
}

std::string row_reason(const DumpCompareResult& r, const DumpEntryVerdict& e) {
  for (std::size_t i = e.first_row; i < e.last_row; ++i) {
    const DumpRow& row = r.rows[i];
    if (row.verdict == Verdict::kFail) return row.npu->slot + ": " + row.reason;
  }
  return "";
}

std::string entry_line(const DumpCompareResult& r, const DumpEntryVerdict& e) {
  const DumpEntry& n = r.npu->entries[static_cast<std::size_t>(e.npu)];
  std::string line = n.name + (n.parent.empty() ? "" : " (in " + n.parent + ")") + ": Result " +
                     std::string(dump_result_name(e.result));
  if (!std::isnan(e.worst_cosine) || !std::isnan(e.worst_max_abs_err))
    line += ", cosine " + number(e.worst_cosine, "%.6f") + ", max abs err " + number(e.worst_max_abs_err, "%.4g");
  if (const std::string why = row_reason(r, e); !why.empty()) line += "; " + why;
  if (const std::string frame = user_frame(stack_of(*r.npu, n)); !frame.empty()) line += "; at " + frame;
  return line;
}

Value line_or(const DumpCompareResult& r, const std::optional<std::size_t>& e, Value none = Value()) {
  return e ? Value(entry_line(r, r.entries[*e])) : none;
}

Table summary_table(const DumpCompareResult& r) {
  const auto count = [](std::size_t n) { return static_cast<std::int64_t>(n); };
  Table t{&kSummaryTable, {}};
  t.add({r.npu->path, r.bench->path, std::string(dump_mode_name(r.mode)), count(r.entries.size()), r.passed, r.failed,
         r.not_applicable, r.errors, r.warnings, count(r.unmatched_npu.size()), count(r.unmatched_bench.size()),
         line_or(r, r.first_failing, std::string("none")), line_or(r, r.first_introducing),
         line_or(r, r.first_failing_backward), line_or(r, r.first_introducing_backward)});
  return t;
}

Row entry_row(const DumpCompareResult& r, const DumpEntryVerdict& e) {
  const DumpEntry& n = r.npu->entries[static_cast<std::size_t>(e.npu)];
  const DumpEntry& b = r.bench->entries[static_cast<std::size_t>(e.bench)];
  const std::vector<std::string>* stack = stack_of(*r.npu, n);
  return {n.name,
          std::string(pass_name(split_dump_name(n.name).pass)),
          std::string(enum_name(e.verdict)),
          std::string(enum_name(e.origin)),
          std::string(dump_result_name(e.result)),
          metric(e.worst_cosine),
          metric(e.worst_max_abs_err),
          text_or_null(row_reason(r, e)),
          text_or_null(n.parent),
          b.name,
          e.fuzzy ? std::string("fuzzy") : std::string(enum_name(e.match)),
          stack != nullptr ? *stack : std::vector<std::string>{}};
}

Table entry_record(const TableSpec& spec, const DumpCompareResult& r, const std::optional<std::size_t>& e) {
  Table t{&spec, {}};
  if (e) t.add(entry_row(r, r.entries[*e]));
  return t;
}

// The entries, worst first; only the first `top` rows built when top > 0 (the text report's).
Table entries_table(const DumpCompareResult& r, int top) {
  std::vector<const DumpEntryVerdict*> order;
  for (const DumpEntryVerdict& e : r.entries) order.push_back(&e);
  const auto rank = [](const DumpEntryVerdict* e) {
    return e->verdict == Verdict::kFail ? 0 : e->verdict == Verdict::kPass ? 1 : 2;
  };
  const auto cosine = [](const DumpEntryVerdict* e) { return std::isnan(e->worst_cosine) ? 2.0 : e->worst_cosine; };
  const auto error = [](const DumpEntryVerdict* e) {
    return std::isnan(e->worst_max_abs_err) ? -1 : e->worst_max_abs_err;
  };
  std::stable_sort(order.begin(), order.end(), [&](const DumpEntryVerdict* a, const DumpEntryVerdict* b) {
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    if (a->result != b->result) return a->result > b->result;
    if (cosine(a) != cosine(b)) return cosine(a) < cosine(b);
    return error(a) > error(b);
  });
  if (top > 0 && order.size() > static_cast<std::size_t>(top)) order.resize(static_cast<std::size_t>(top));
  Table t{&kEntriesTable, {}};
  t.rows.reserve(order.size());
  for (const DumpEntryVerdict* e : order) t.add(entry_row(r, *e));
  return t;
}

Table unmatched_table(const TableSpec& spec, const collector::MsprobeDump& d,
                      const std::vector<UnmatchedDumpItem>& items) {
  Table t{&spec, {}};
  for (const UnmatchedDumpItem& u : items) {
    t.add({d.entries[static_cast<std::size_t>(u.entry)].name, text_or_null(u.slot), std::int64_t{u.entry}});
  }
  return t;
}

// Note [compare_result streamed]
// compare_result has a row per NPU value and ~30 text cells a row: for a 100,000-entry statistics
// dump, 390,000 rows and 160 MB of CSV, where building them as analyzer::Values (a string a cell,
// the messages copied, a Row a vector) cost 3.4 s of the 4 s the comparison took. The cells are
// written straight into the renderer's reused strings instead (Note [Streamed tables]), each number
// formatted once, by appending: nothing allocates once the strings have grown. The viewer, which
// reads the rows, has them held (compare_report's), built by the same writer.
class ResultRowWriter {
 public:
  explicit ResultRowWriter(const DumpCompareResult& r) : r_(r) {}

  // Row `i`'s cells in the mode's column order, appended to the (empty) `cells`.
  void operator()(std::size_t i, std::span<std::string> cells) const {
    const DumpRow& row = r_.rows[i];
    const DumpEntry& ne = r_.npu->entries[static_cast<std::size_t>(row.npu_entry)];
    const DumpEntry* be =
        row.bench_entry >= 0 ? &r_.bench->entries[static_cast<std::size_t>(row.bench_entry)] : nullptr;
    const collector::DumpValue& n = *row.npu;
    const collector::DumpValue* b = row.bench;
    std::string* c = cells.data();
    (c++)->append(ne.name).append(1, '.').append(n.slot);
    if (b) {
      (c++)->append(be->name).append(1, '.').append(b->slot);
    } else {
      *c++ = "N/A";
    }
    c++->append(msprobe_dtype(n));
    c++->append(b ? msprobe_dtype(*b) : "N/A");
    append_msprobe_shape(*c++, n);
    if (b) {
      append_msprobe_shape(*c++, *b);
    } else {
      *c++ = "N/A";
    }
    c++->append(requires_grad(&n));
    c++->append(requires_grad(b));
    const std::array<StatCell, 4> ns = stat_cells(n);
    const std::array<StatCell, 4> bs =
        b ? stat_cells(*b) : std::array<StatCell, 4>{na_cell(), na_cell(), na_cell(), na_cell()};
    if (r_.mode == DumpMode::kStatistics) {
      std::array<StatDiff, 4> d;
      for (int k = 0; k < 4; ++k) d[k] = stat_diff(ns[k], bs[k]);
      for (int k = 0; k < 4; ++k) d[k].append_diff_text(*c++);
      for (int k = 0; k < 4; ++k) d[k].append_rel_text(*c++);
    }
    MetricCells metrics;
    if (r_.mode == DumpMode::kTensor) {
      metrics = metric_cells(row);
      for (const std::string& m : metrics.text) c++->append(m);  // accuracy_reached reads them below
    }
    if (r_.mode == DumpMode::kMd5) {
      *c++ = msprobe_md5(n);
      *c++ = b ? msprobe_md5(*b) : "N/A";
    } else {
      for (const StatCell& s : ns) s.append_text(*c++);
      for (const StatCell& s : bs) s.append_text(*c++);
    }
    c++->append(requires_grad(&n) == requires_grad(b) ? "True" : "False");
    c++->append(dump_result_name(row.result));
    append_messages(*c++, row.messages, metrics.message);
    const bool first_of_entry = i == 0 || r_.rows[i - 1].npu_entry != row.npu_entry;
    const std::vector<std::string>* stack = first_of_entry ? stack_of(*r_.npu, ne) : nullptr;
    if (stack != nullptr) {
      append_python_list(*c++, *stack);
    } else {
      *c++ = "N/A";
    }
    if (r_.mode == DumpMode::kTensor) {
      append_python_list(*c++, std::array<std::string_view, 2>{data_name(&n), data_name(b)});
      *c++ = b ? "[-1, -1]" : "[-1, 'N/A']";
      *c++ = b ? accuracy_reached(metrics) : "N/A";
    }
  }

 private:
  static std::string_view requires_grad(const collector::DumpValue* v) {
    return v == nullptr ? "N/A" : v->requires_grad < 0 ? "N/A" : v->requires_grad ? "True" : "False";
  }
  static std::string_view data_name(const collector::DumpValue* v) {
    return v == nullptr ? "N/A" : v->data_name.empty() ? "-1" : std::string_view(v->data_name);
  }
  // Err_message: the row's messages, then the metrics' (a JSON list).
  static void append_messages(std::string& out, const std::vector<std::string>& messages, const std::string& more) {
    out += '[';
    for (const std::string& m : messages) {
      if (out.size() > 1) out += ", ";
      collector::append_json_string(out, m);
    }
    if (!more.empty()) {
      if (out.size() > 1) out += ", ";
      collector::append_json_string(out, more);
    }
    out += ']';
  }

  const DumpCompareResult& r_;
};

Table result_table(const DumpCompareResult& r, bool with_rows) {
  const TableSpec* spec = r.mode == DumpMode::kTensor       ? &kTensorResultTable
                          : r.mode == DumpMode::kStatistics ? &kStatisticsResultTable
                                                            : &kMd5ResultTable;
  Table t{spec, {}, {}};
  if (!with_rows) return t;
  Table streamed{spec, {}, {}};  // the same writer, its cells then held as Values (the viewer reads them)
  streamed.stream({r.rows.size(), ResultRowWriter(r)});
  t.rows.reserve(r.rows.size());
  streamed.for_each_streamed([&](std::span<const std::string> cells) { t.add(Row(cells.begin(), cells.end())); });
  return t;
}

}  // namespace

analyzer::Report compare_report(const DumpCompareResult& r, int top, bool compare_result_rows) {
  analyzer::Report report;
  report.rules = {"compare"};
  report.notes = r.notes;
  report.tables.push_back(summary_table(r));
  if (top > 0 && r.entries.size() > static_cast<std::size_t>(top)) {
    report.notes.push_back("entries: the " + std::to_string(top) + " worst of " + std::to_string(r.entries.size()) +
                           " (--top N: more; JSON and CSV have all)");
  }
  report.tables.push_back(entries_table(r, top));
  report.tables.push_back(entry_record(kFirstFailingTable, r, r.first_failing));
  report.tables.push_back(entry_record(kFirstIntroducingTable, r, r.first_introducing));
  report.tables.push_back(entry_record(kFirstFailingBackwardTable, r, r.first_failing_backward));
  report.tables.push_back(entry_record(kFirstIntroducingBackwardTable, r, r.first_introducing_backward));
  report.tables.push_back(unmatched_table(kUnmatchedNpuTable, *r.npu, r.unmatched_npu));
  report.tables.push_back(unmatched_table(kUnmatchedBenchTable, *r.bench, r.unmatched_bench));
  report.tables.push_back(result_table(r, compare_result_rows));
  return report;
}

void stream_compare_result(analyzer::Report& report, const DumpCompareResult& result) {
  for (Table& t : report.tables) {
    if (t.spec->name != "compare_result") continue;
    t.rows.clear();
    t.stream({result.rows.size(), ResultRowWriter(result)});
  }
}

std::vector<const TableSpec*> dump_compare_table_specs() {
  return {&kSummaryTable,
          &kEntriesTable,
          &kFirstFailingTable,
          &kFirstIntroducingTable,
          &kFirstFailingBackwardTable,
          &kFirstIntroducingBackwardTable,
          &kUnmatchedNpuTable,
          &kUnmatchedBenchTable,
          &kTensorResultTable,
          &kStatisticsResultTable,
          &kMd5ResultTable};
}

}  // namespace npuscope::comparator

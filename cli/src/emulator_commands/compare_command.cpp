// npuscope compare: NPU vs CPU golden accuracy, op by op, with the first failing op (comparator/).
//
//   npuscope compare NPU.db GOLDEN.db [--mapping FILE] [--format text|json|csv] [-o FILE|DIR]
//                    [--top N] [--fail-on-mismatch] [--annotate | --results FILE.db]
//   npuscope compare NPU_DUMP BENCH_DUMP [--fuzzy-match | -fm] [--mapping FILE] [same output flags]
//                    (msprobe dumps: Note [Comparing dump trees] in compare_dumps_run.h)
//   npuscope compare --describe   (the compare tables' columns, units and docs, as markdown)
//   npuscope compare --model M.onnx [exec's flags: --input NAME=FILE, --dim NAME=VALUE, --seed S,
//                    --iterations N, --precision-mode MODE, --overflow-mode MODE, --spec PRESET,
//                    --perturb GLOB:MODE ...] [one-shot flags] [same output flags]
//   npuscope compare [--perturb GLOB:MODE]... [one-shot flags] [same output flags] -- CMD [ARGS...]
//   one-shot flags: [--dump tensor|stats] [--ops GLOB]... [--steps A-B] [--keep-traces DIR] [--annotate]
//
// The report is finding tables (comparator/compare_report.h) written as `npuscope analyze` writes
// its own: text to stdout or FILE, json likewise, csv one file per table into the directory -o names.
// The one-shot forms record a golden run and an NPU run with `npuscope run --dump tensor` (Note
// [One-shot comparison runs] in compare_runs.h), then compare the two traces as the two-trace form
// does. --annotate stores the verdicts in the NPU trace's COMPARE_RESULT table (the viewer colours
// ops by them); --results writes them into a new file instead.
// Exit status: 0 when the comparison ran, whatever it found; 1 with --fail-on-mismatch when an op
// fails; 2 for bad input (not a trace, no dumps, a bad mapping file, a bad perturbation rule, a model
// or a command that does not run).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "command.h"
#include "compare_dumps_run.h"
#include "compare_runs.h"
#include "exec_flags.h"
#include "npuscope/collector/trace_error.h"
#include "npuscope/collector/trace_reader.h"
#include "npuscope/comparator/compare.h"
#include "npuscope/comparator/compare_report.h"
#include "npuscope/comparator/dump_mapping.h"
#include "npuscope/comparator/results_table.h"
#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/perturb.h"
#include "npuscope/runtime_hooks/inject_config.h"
#include "open_trace.h"
#include "report_output.h"

namespace npuscope::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kUsage =
    "npuscope compare NPU.db GOLDEN.db [--mapping FILE] [--format text|json|csv] [-o FILE|DIR] [--top N] "
    "[--fail-on-mismatch] [--annotate | --results FILE.db]\n"
    "       npuscope compare NPU_DUMP BENCH_DUMP [--fuzzy-match|-fm] [--mapping FILE] [--format text|json|csv] "
    "[-o FILE|DIR] [--top N] [--fail-on-mismatch]\n"
    "       npuscope compare --model M.onnx [--input NAME=FILE]... [--dim NAME=VALUE]... [--seed S] [--iterations N] "
    "[--precision-mode MODE] [--overflow-mode MODE] [--spec PRESET] [--perturb GLOB:MODE]... [one-shot flags] "
    "[output flags]\n"
    "       npuscope compare [--perturb GLOB:MODE]... [one-shot flags] [output flags] -- CMD [ARGS...]\n"
    "one-shot flags: [--dump tensor|stats] [--ops GLOB]... [--steps A-B] [--keep-traces DIR] [--annotate]";

struct CompareFlags {
  std::vector<std::string> traces;
  std::string mapping, format = "text", output;
  int top = 20;
  bool fail_on_mismatch = false, annotate = false, describe = false, fuzzy_match = false;
  std::string results;
  // One shot: exec's own flags (exec_flags.h), for both runs of --model; --perturb for -- CMD too.
  ExecFlags exec;
  std::vector<std::string> command;  // after "--"
  DumpFlags dump;
  std::string keep_traces;

  bool one_shot() const { return !exec.model.empty() || !command.empty(); }
};

// "compare: 120/500 ops" on a terminal, once a comparison has run for a second.
class Progress {
 public:
  void operator()(std::int64_t done, std::int64_t total) {
    if (!tty_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - start_ < std::chrono::seconds(1) || (done < total && now - last_ < std::chrono::milliseconds(100)))
      return;
    last_ = now;
    std::fprintf(stderr, "\rnpuscope compare: %lld/%lld ops%s", static_cast<long long>(done),
                 static_cast<long long>(total), done == total ? "\n" : "");
  }

 private:
  bool tty_ = isatty(STDERR_FILENO) != 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_ = start_;
};

// Checks the one-shot flags before anything runs, with `npuscope run`'s and the emulator's own
// parsers, so that a value is refused in the words it would be refused in later.
void check_one_shot(const CompareFlags& f) {
  if (!f.traces.empty()) throw UsageError(std::string("give either two traces, --model or -- CMD\nusage: ") + kUsage);
  if (!f.exec.model.empty() && !f.command.empty()) throw UsageError("give either --model or -- CMD, not both");
  if (!f.exec.model.empty()) check_exec_flags(f.exec);  // as exec would
  if (!f.command.empty()) {
    // exec's flags other than --perturb set up a model run: a program sets itself up. exec_arguments
    // gives each flag that differs from its default as a flag and a value.
    const std::vector<std::string> given = exec_arguments(f.exec, false);
    for (std::size_t i = 0; i + 1 < given.size(); i += 2) {
      if (given[i] == "--perturb") continue;
      throw UsageError(given[i] +
                       " is a flag of --model: with -- CMD the program sets itself up (its own flags, or "
                       "NPUSCOPE_SPEC, NPUSCOPE_PRECISION_MODE, NPUSCOPE_OVERFLOW_MODE in the environment)");
    }
  }
  for (const std::string& rule : f.exec.perturb) {
    try {
      emulator::parse_perturb_rule(rule);
    } catch (const emulator::InvalidArgument& e) {
      throw UsageError(std::string("--perturb: ") + e.what());
    }
  }
  constexpr auto kFlag = inject::Spelling::kFlag;
  try {
    if (inject::parse_dump(f.dump.dump, kFlag) == inject::DumpMode::kNone)
      throw UsageError("--dump must be tensor or stats: a comparison needs the tensors or their statistics");
    for (const std::string& glob : f.dump.ops) inject::parse_op_glob(glob, kFlag);
    if (!f.dump.steps.empty()) inject::parse_steps(f.dump.steps, kFlag);
  } catch (const inject::ConfigError& e) {
    throw UsageError(e.what());
  }
  if (f.annotate && f.keep_traces.empty()) {
    throw UsageError(std::string("--annotate with ") + (f.command.empty() ? "--model" : "-- CMD") +
                     " needs --keep-traces DIR: the NPU trace is otherwise temporary");
  }
}

// The flags that only make sense for a one-shot comparison, refused with two traces.
void check_two_traces(const CompareFlags& f, const po::variables_map& vm) {
  if (f.traces.size() != 2) {
    throw UsageError(std::string("give two traces (NPU.db GOLDEN.db), --model M.onnx or -- CMD\nusage: ") + kUsage);
  }
  for (const char* flag : {"dump", "ops", "steps", "keep-traces", "perturb"}) {
    if (vm.count(flag) && !vm[flag].defaulted())
      throw UsageError(std::string("--") + flag + " records runs: give it with --model or -- CMD, not two traces");
  }
}

// Records the two runs of a one-shot comparison and compares them; `annotated` is the NPU trace.
comparator::CompareResult compare_one_shot(const CompareFlags& f, const comparator::CompareOptions& options,
                                           std::string& annotated) {
  if (!f.exec.model.empty() && !fs::is_regular_file(f.exec.model))
    throw InputError(f.exec.model + ": no such model file");
  TraceDir dir(f.keep_traces);
  const RecordedRuns runs =
      f.command.empty() ? record_model(f.exec, f.dump, dir) : record_command(f.command, f.exec.perturb, f.dump, dir);
  const auto npu = collector::TraceReader::open(runs.npu, {.verify = false});
  const auto golden = collector::TraceReader::open(runs.golden, {.verify = false});
  comparator::CompareResult result = comparator::compare_traces(*npu, *golden, options);
  annotated = runs.npu;
  if (dir.temporary()) {
    result.notes.push_back("the two traces were temporary: --keep-traces DIR keeps them (for npuscope view, analyze)");
  } else {
    std::fprintf(stderr, "npuscope compare: traces kept in %s\n", f.keep_traces.c_str());
  }
  return result;
}

// Two sides of which one is an msprobe dump (Note [Comparing dump trees]).
int compare_dumps_command(const CompareFlags& f) {
  if (f.annotate || !f.results.empty())
    throw UsageError(
        "--annotate and --results store verdicts in a trace: a dump comparison has no trace to store into");
  DumpCompareFlags d;
  d.format = f.format;
  d.output = f.output;
  d.top = f.top;
  d.fuzzy_match = f.fuzzy_match;
  d.fail_on_mismatch = f.fail_on_mismatch;
  Progress progress;
  d.progress = std::ref(progress);
  try {
    if (!f.mapping.empty()) d.mapping = comparator::load_dump_mapping(f.mapping);
  } catch (const analyzer::NameMapError& e) {
    throw InputError("--mapping " + std::string(e.what()));
  }
  return compare_dump_sides(f.traces[0], f.traces[1], d);
}

// Splits argv at the first "--": what follows is the command of the -- CMD form.
int split_command(int argc, char** argv, CompareFlags& f) {
  const int split = command_separator(argc, argv);
  if (split == argc) return argc;
  if (split + 1 >= argc) throw UsageError("no command after '--'\nusage: " + std::string(kUsage));
  f.command.assign(argv + split + 1, argv + argc);
  return split;
}

}  // namespace

int compare_command(int argc, char** argv) {
  CompareFlags f;
  po::options_description desc("options");
  desc.add_options()("help,h", "show this help")("traces", po::value(&f.traces)->composing(),
                                                 "NPU.db GOLDEN.db (positional)")(
      "mapping", po::value(&f.mapping), "YAML or JSON file: NPU op name -> golden op name")(
      "format", po::value(&f.format)->default_value(f.format), "text | json | csv")(
      "output,o", po::value(&f.output), "write to FILE (text, json) or into DIR (csv) instead of stdout")(
      "top", ranged_value(&f.top, "top", 0, 1'000'000)->default_value(f.top),
      "worst ops listed in the text report: 0 to 1000000")("fail-on-mismatch", po::bool_switch(&f.fail_on_mismatch),
                                                           "exit with status 1 when an op fails")(
      "annotate", po::bool_switch(&f.annotate), "store the verdicts in the NPU trace (COMPARE_RESULT), for the viewer")(
      "results", po::value(&f.results), "store the verdicts in a new file FILE.db instead")(
      "fuzzy-match", po::bool_switch(&f.fuzzy_match),
      "msprobe dumps: pair entries whatever their call index, in dump order (msprobe's -fm; also -fm)")(
      "describe", po::bool_switch(&f.describe),
      "print every compare table's columns, units and docs (markdown) and exit");
  // One shot (--model, or -- CMD): record a golden and an NPU run with dumps, then compare.
  po::options_description one_shot("one-shot comparison (--model M.onnx, or -- CMD [ARGS...])");
  one_shot.add_options()("dump", po::value(&f.dump.dump)->default_value(f.dump.dump),
                         "what both runs dump: tensor (full metrics) | stats (statistics mode)")(
      "ops", po::value(&f.dump.ops)->composing(), "dump only ops whose name matches this glob (repeatable)")(
      "steps", po::value(&f.dump.steps), "dump only in steps A-B, or step A (a PyTorch script's optimizer steps)")(
      "keep-traces", po::value(&f.keep_traces),
      "keep the two traces in DIR (--model: cpu.db, npu.db; -- CMD: golden.db, npu.db) and their *.log");
  desc.add(one_shot);
  // exec's flags go to both runs of --model, those that set up the NPU to the npu run only;
  // --perturb also to the NPU run of -- CMD (as NPUSCOPE_PERTURB).
  po::options_description exec_desc("npuscope exec options, for --model (--perturb for -- CMD too)");
  add_exec_flags(exec_desc, f.exec, ExecFlagSet::kButDeviceAndOutput);
  desc.add(exec_desc);
  po::positional_options_description positional;
  positional.add("traces", 2);
  po::variables_map vm;
  // msprobe's spelling of --fuzzy-match: program_options reads "-fm" as -f with the value m.
  std::vector<std::string> args(argv, argv + argc);
  std::vector<char*> arg_ptrs;
  for (std::string& a : args) {
    if (a == "-fm") a = "--fuzzy-match";
    arg_ptrs.push_back(a.data());
  }
  argv = arg_ptrs.data();
  const int split = split_command(argc, argv, f);
  if (!parse_flags(split, argv, desc, kUsage, &positional, &vm)) return 0;
  if (f.describe) {  // docs/compare.md's generated part
    const std::string doc = comparator::compare_tables_markdown();
    std::fwrite(doc.data(), 1, doc.size(), stdout);
    return 0;
  }
  check_report_format(f.format, f.output);
  if (f.one_shot()) {
    check_one_shot(f);
  } else {
    check_two_traces(f, vm);
  }
  if (!f.one_shot() && (is_dump_side(f.traces[0]) || is_dump_side(f.traces[1]))) return compare_dumps_command(f);
  if (f.fuzzy_match) throw UsageError("--fuzzy-match pairs the entries of msprobe dumps: give two dumps");
  if (f.annotate && !f.results.empty()) throw UsageError("--annotate and --results exclude each other");
  if (!f.results.empty() && fs::exists(f.results)) throw UsageError(f.results + " exists: --results writes a new file");

  comparator::CompareOptions options;
  Progress progress;
  options.progress = std::ref(progress);
  comparator::CompareResult result;
  std::string annotated;  // the NPU trace that --annotate writes into
  try {
    if (!f.mapping.empty()) options.mapping = analyzer::load_name_map(f.mapping, comparator::kMappingKeys);
    if (f.one_shot()) {
      result = compare_one_shot(f, options, annotated);
    } else {
      const auto npu = open_trace(f.traces[0], {.verify = false});
      const auto golden = open_trace(f.traces[1], {.verify = false});
      result = comparator::compare_traces(*npu, *golden, options);
      annotated = npu->path();
    }
  } catch (const collector::TraceError& e) {
    throw InputError(e.what());
  } catch (const comparator::CompareError& e) {
    throw InputError(e.what());
  } catch (const analyzer::NameMapError& e) {
    throw InputError(e.what());
  }
  // Not input errors: a verdict that cannot be written (read-only trace, full disk) is exit status 1.
  if (f.annotate) comparator::store_results(result, annotated, false);
  if (!f.results.empty()) comparator::store_results(result, f.results, true);
  // --top: the worst ops the text report lists; JSON and CSV have every op.
  write_report(comparator::compare_report(result, f.format == "text" ? f.top : 0), f.format, f.output,
               "the comparison of " + result.npu_path + " and " + result.golden_path);
  return f.fail_on_mismatch && result.failed > 0 ? 1 : 0;
}

}  // namespace npuscope::cli

// npuscope compare: NPU vs CPU golden accuracy, op by op, with the first failing op (comparator/).
//
//   npuscope compare NPU.db GOLDEN.db [--mapping FILE] [--format text|json|csv] [-o FILE]
//                    [--top N] [--fail-on-mismatch] [--annotate | --results FILE.db]
//   npuscope compare --model M.onnx [exec's flags: --input NAME=FILE, --dim NAME=VALUE, --seed S,
//                    --iterations N, --precision-mode MODE, --overflow-mode MODE, --spec PRESET,
//                    --perturb GLOB:MODE ...] [--keep-traces DIR] [same output flags]
//
// The one-shot form records the model twice with `npuscope run --dump tensor -- npuscope exec`,
// on the cpu golden backend and on the emulated NPU (same seeded inputs), then compares the two.
// --annotate stores the verdicts in the NPU trace's COMPARE_RESULT table (the viewer colours ops by
// them); --results writes them into a new file instead.
// Exit status: 0 when the comparison ran, whatever it found; 1 with --fail-on-mismatch when an op
// fails; 2 for bad input (not a trace, no dumps, a bad mapping file, a model that does not run).
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "command.h"
#include "exec_flags.h"
#include "npuscope/collector/trace_error.h"
#include "npuscope/collector/trace_reader.h"
#include "npuscope/comparator/compare.h"
#include "npuscope/comparator/format.h"
#include "npuscope/comparator/mapping.h"
#include "npuscope/comparator/results_table.h"
#include "open_trace.h"

extern char** environ;

namespace npuscope::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kUsage =
    "npuscope compare NPU.db GOLDEN.db [--mapping FILE] [--format text|json|csv] [-o FILE] [--top N] "
    "[--fail-on-mismatch] [--annotate | --results FILE.db]\n"
    "       npuscope compare --model M.onnx [--input NAME=FILE]... [--dim NAME=VALUE]... [--seed S] [--iterations N] "
    "[--precision-mode MODE] [--overflow-mode MODE] [--spec PRESET] [--perturb GLOB:MODE]... [--keep-traces DIR] "
    "[output flags]";

struct CompareFlags {
  std::vector<std::string> traces;
  std::string mapping, format = "text", output;
  int top = 20;
  bool fail_on_mismatch = false, annotate = false;
  std::string results;
  // One shot: exec's own flags (exec_flags.h), for both runs.
  ExecFlags exec;
  std::string keep_traces;
};

std::string self_path() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find the npuscope binary (/proc/self/exe): " + ec.message());
  return self.string();
}

// Runs argv with stdout into `log` (the child's chatter; its errors stay on stderr). Returns the exit status.
int run_quietly(const std::vector<std::string>& args, const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + args[0] + ": " + std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Records the model on `device` into DIR/<device>.db; InputError if it does not run.
std::string record(const CompareFlags& f, const std::string& dir, const std::string& device) {
  const std::string self = self_path(), trace = dir + "/" + device + ".db";
  std::vector<std::string> args = {
      self, "run", "-o",   trace,      "--dump", "tensor",       "--force",
      "--", self,  "exec", "--device", device,   "--output-dir", dir + "/" + device + "_outputs"};
  const std::vector<std::string> exec = exec_arguments(f.exec, device == "cpu");
  args.insert(args.end(), exec.begin(), exec.end());
  std::fprintf(stderr, "npuscope compare: running %s on %s with tensor dumps\n", f.exec.model.c_str(),
               device == "cpu" ? "the cpu golden backend" : "the emulated NPU");
  const int status = run_quietly(args, dir + "/" + device + ".log");
  if (status != 0) {
    throw InputError("running " + f.exec.model + " on " + device + " failed (exit status " + std::to_string(status) +
                     "; its output is in " + dir + "/" + device + ".log)");
  }
  return trace;
}

// A temporary directory for the one-shot traces, removed unless --keep-traces names one.
class TraceDir {
 public:
  explicit TraceDir(const std::string& keep) : keep_(!keep.empty()) {
    if (keep_) {
      path_ = keep;
      fs::create_directories(path_);
      return;
    }
    std::string pattern = (fs::temp_directory_path() / "npuscope_compare_XXXXXX").string();
    if (!mkdtemp(pattern.data()))
      throw std::runtime_error("cannot create a temporary directory in " + fs::temp_directory_path().string());
    path_ = pattern;
  }
  ~TraceDir() {
    std::error_code ec;
    if (!keep_) fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  bool keep_;
  std::string path_;
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

void write_output(const comparator::CompareResult& result, const CompareFlags& f) {
  if (f.format == "json") {
    const std::string json = comparator::to_json(result);
    if (f.output.empty()) {
      std::fwrite(json.data(), 1, json.size(), stdout);
    } else {
      write_text_file(f.output, json);
    }
    return;
  }
  std::ostringstream text;
  if (f.format == "csv") {
    comparator::write_csv(result, f.output.empty() ? std::cout : text);
  } else if (f.output.empty()) {
    comparator::write_text(result, std::cout,
                           {.colour = isatty(STDOUT_FILENO) != 0 && std::getenv("NO_COLOR") == nullptr}, f.top);
  } else {
    comparator::write_text(result, text, {}, f.top);
  }
  if (!f.output.empty()) write_text_file(f.output, text.str());
}

}  // namespace

int compare_command(int argc, char** argv) {
  CompareFlags f;
  po::options_description desc("options");
  desc.add_options()("help,h", "show this help")("traces", po::value(&f.traces)->composing(),
                                                 "NPU.db GOLDEN.db (positional)")(
      "mapping", po::value(&f.mapping), "YAML or JSON file: NPU op name -> golden op name")(
      "format", po::value(&f.format)->default_value(f.format), "text | json | csv")("output,o", po::value(&f.output),
                                                                                    "write to FILE instead of stdout")(
      "top", ranged_value(&f.top, "top", 0, 1'000'000)->default_value(f.top),
      "worst ops listed in the text report: 0 to 1000000")("fail-on-mismatch", po::bool_switch(&f.fail_on_mismatch),
                                                           "exit with status 1 when an op fails")(
      "annotate", po::bool_switch(&f.annotate), "store the verdicts in the NPU trace (COMPARE_RESULT), for the viewer")(
      "results", po::value(&f.results), "store the verdicts in a new file FILE.db instead")(
      "keep-traces", po::value(&f.keep_traces), "keep the two traces (cpu.db, npu.db) in DIR");
  // One shot (--model): run the model on cpu and npu with tensor dumps, then compare. exec's flags
  // go to both runs, those that set up the NPU to the npu run only.
  po::options_description exec_desc("npuscope exec options, for --model");
  add_exec_flags(exec_desc, f.exec, ExecFlagSet::kButDeviceAndOutput);
  desc.add(exec_desc);
  po::positional_options_description positional;
  positional.add("traces", 2);
  if (!parse_flags(argc, argv, desc, kUsage, &positional)) return 0;
  if (f.format != "text" && f.format != "json" && f.format != "csv") {
    throw UsageError("--format must be text, json or csv, got '" + f.format + "'");
  }
  if (f.exec.model.empty() == (f.traces.size() != 2)) {
    throw UsageError(std::string(f.exec.model.empty() ? "give two traces (NPU.db GOLDEN.db) or --model M.onnx"
                                                      : "give either two traces or --model, not both") +
                     "\nusage: " + kUsage);
  }

  if (!f.exec.model.empty()) check_exec_flags(f.exec);  // before the runs, as exec would
  if (f.annotate && !f.results.empty()) throw UsageError("--annotate and --results exclude each other");
  if (f.annotate && !f.exec.model.empty() && f.keep_traces.empty()) {
    throw UsageError("--annotate with --model needs --keep-traces DIR: the NPU trace is otherwise temporary");
  }
  if (!f.results.empty() && fs::exists(f.results)) throw UsageError(f.results + " exists: --results writes a new file");

  comparator::CompareOptions options;
  Progress progress;
  options.progress = std::ref(progress);
  comparator::CompareResult result;
  std::string annotated;  // the NPU trace that --annotate writes into
  try {
    if (!f.mapping.empty()) options.mapping = comparator::load_mapping(f.mapping);
    if (f.exec.model.empty()) {
      const auto npu = open_trace(f.traces[0], {.verify = false});
      const auto golden = open_trace(f.traces[1], {.verify = false});
      result = comparator::compare_traces(*npu, *golden, options);
      annotated = npu->path();
    } else {
      if (!fs::is_regular_file(f.exec.model)) throw InputError(f.exec.model + ": no such model file");
      const TraceDir dir(f.keep_traces);
      const std::string golden_trace = record(f, dir.path(), "cpu");
      const std::string npu_trace = record(f, dir.path(), "npu");
      const auto npu = collector::TraceReader::open(npu_trace, {.verify = false});
      const auto golden = collector::TraceReader::open(golden_trace, {.verify = false});
      result = comparator::compare_traces(*npu, *golden, options);
      annotated = npu_trace;
      if (f.keep_traces.empty()) {
        result.notes.push_back(
            "the two traces were temporary: --keep-traces DIR keeps them (for npuscope view, analyze)");
      } else {
        std::fprintf(stderr, "npuscope compare: traces kept in %s\n", f.keep_traces.c_str());
      }
    }
  } catch (const collector::TraceError& e) {
    throw InputError(e.what());
  } catch (const comparator::CompareError& e) {
    throw InputError(e.what());
  }
  // Not input errors: a verdict that cannot be written (read-only trace, full disk) is exit status 1.
  if (f.annotate) comparator::store_results(result, annotated, false);
  if (!f.results.empty()) comparator::store_results(result, f.results, true);
  write_output(result, f);
  return f.fail_on_mismatch && result.failed > 0 ? 1 : 0;
}

}  // namespace npuscope::cli

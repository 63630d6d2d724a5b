// npuscope run: the profiler wrapper. Runs CMD with the injection library preloaded into the
// emulator (NPUSCOPE_INJECTION), converts the spool the library writes into the trace database
// (Note [Trace spool] in npuscope/collector/trace_spool.h), waits for CMD, passes its exit status
// through, and summarises the trace (Note [Data flow] in DESIGN.md: the workload is not rebuilt
// and pays nothing when not profiled).
//
// Under a launcher, -o takes %r for the rank, one trace per rank: mpirun -np 4 npuscope run -o
// traces/rank_%r.db -- CMD (Note [Launcher environment] in npuscope/runtime_hooks/launcher_env.h).
//
//   npuscope run [-o OUT.db] [--dump none|stats|tensor|md5] [--ops GLOB]... [--steps A-B|A]
//                [--max-dump-bytes N] [--overflow-only] [--grad-probe] [--check-ops] [--no-pipe-trace] [--keep-going]
//                [--force] -- CMD [ARGS...]
//
// The dump flags become the injection library's settings through its own parsers
// (npuscope/runtime_hooks/inject_config.h): a value is refused here, before the program starts,
// exactly when the library would refuse it.
//
// Exit status: the workload's own when it is not 0; else 125 when the workload ran but profiling
// never started (the injection library was never loaded, refused its settings or implements another
// hook API: Note [Why profiling did not start] in hook_api.h), 1 when the spool could not be
// converted, 2 for a bad flag or an unwritable output (found before the workload starts), 0 otherwise.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "command.h"
#include "npuscope/collector/trace_reader.h"
#include "npuscope/runtime_hooks/hook_api.h"
#include "npuscope/runtime_hooks/inject_config.h"
#include "npuscope/runtime_hooks/launcher_env.h"
#include "shipped_files.h"
#include "spool_converter.h"

namespace npuscope::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kUsage =
    "npuscope run [-o OUT.db] [--dump none|stats|tensor|md5] [--ops GLOB]... [--steps A-B|A] [--max-dump-bytes N] "
    "[--overflow-only] [--grad-probe] [--check-ops] [--no-pipe-trace] [--keep-going] [--force] -- CMD [ARGS...]\n"
    "exit status: CMD's when not 0; 125 when CMD ran but profiling never started; 1 when the trace could not be "
    "made; 2 for a bad flag or an unwritable -o";

// The workload ran but the injection library never started profiling (documented in kUsage and
// docs/profiling.md). 125, as timeout(1) and docker run use it: the wrapper failed, not the command.
constexpr int kProfilingNotStarted = 125;

// As typed: the values are parsed by inject_config's parsers, not by program_options (which reads
// "-5" as a huge unsigned number).
struct RunFlags {
  std::string output, dump = "none", steps, max_dump_bytes;
  std::vector<std::string> ops;
  bool overflow_only = false, force = false, grad_probe = false, check_ops = false, no_pipe_trace = false,
       keep_going = false;
};

volatile sig_atomic_t g_child = 0;

void forward_signal(int sig) {
  if (g_child > 0) kill(static_cast<pid_t>(g_child), sig);
}

// -o with %r: this rank's trace (Note [Launcher environment] in npuscope/runtime_hooks/launcher_env.h).
// `mpirun -np 4 npuscope run -o traces/rank_%r.db -- CMD` gives traces/rank_0.db .. rank_3.db.
std::string expand_rank(std::string output) {
  if (output.find("%r") == std::string::npos) return output;
  const auto launched = launcher::rank_from_environment();
  if (!launched) {
    throw UsageError("-o " + output +
                     ": %r stands for the rank, but no launcher said which rank this is (none of "
                     "OMPI_COMM_WORLD_RANK, RANK, SLURM_PROCID, PMI_RANK is set); run npuscope under the launcher, "
                     "e.g. mpirun -np 4 npuscope run -o traces/rank_%r.db -- CMD, or torchrun --nproc_per_node 4 "
                     "--no_python npuscope run -o traces/rank_%r.db -- python3 train.py");
  }
  output = launcher::expand_rank(output, launched->rank);
  // The ranks start together: whichever comes first makes the directory (the others find it made).
  std::error_code ec;
  if (const fs::path dir = fs::absolute(output).parent_path(); !dir.empty()) fs::create_directories(dir, ec);
  return output;
}

std::string default_output(const std::string& cmd) {
  char stamp[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y%m%d_%H%M%S", std::localtime(&now));
  return "npuscope_" + fs::path(cmd).filename().string() + "_" + stamp + ".db";
}

// The library's settings from the flags; a bad value is a UsageError in the library's words.
inject::InjectConfig inject_config(const RunFlags& f) {
  constexpr auto kFlag = inject::Spelling::kFlag;
  try {
    inject::InjectConfig c;
    c.dump = inject::parse_dump(f.dump, kFlag);
    for (const std::string& glob : f.ops) c.ops.push_back(inject::parse_op_glob(glob, kFlag));
    if (!f.steps.empty()) {
      const inject::StepRange steps = inject::parse_steps(f.steps, kFlag);
      c.has_steps = true;
      c.step_first = steps.first;
      c.step_last = steps.last;
    }
    if (!f.max_dump_bytes.empty()) {
      c.max_dump_bytes = inject::parse_bytes(f.max_dump_bytes, inject::Setting::kMaxDumpBytes, kFlag);
    }
    c.overflow_only = f.overflow_only;
    c.grad_probe = f.grad_probe;
    c.check_ops = f.check_ops;
    c.pipe_trace = !f.no_pipe_trace;
    c.keep_going = f.keep_going;
    inject::validate(c, kFlag);
    return c;
  } catch (const inject::ConfigError& e) {
    throw UsageError(e.what());
  }
}

// The trace's directory must take new files: found out now, not after the workload has run.
void check_writable(const std::string& output, const std::string& spool) {
  const int fd = ::open(spool.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw InputError("cannot write the trace " + output + ": creating " + spool + " failed (" + std::strerror(errno) +
                     "); choose a writable directory with -o");
  }
  ::close(fd);
  ::unlink(spool.c_str());
}

// What the emulator and the injection library said about not starting (Note [Why profiling did
// not start]), one reason per line; "" when they said nothing.
std::string not_started_reasons(const std::string& status_file) {
  std::ifstream in(status_file);
  std::string line, out;
  while (std::getline(in, line)) {
    if (!line.empty()) out += (out.empty() ? "" : "; ") + line;
  }
  return out;
}

// Runs argv as a child with `env` added; returns its exit status (128 + signal when killed).
int run_child(const std::vector<std::string>& command, const std::vector<std::pair<std::string, std::string>>& env,
              SpoolConverter& converter) {
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> argv;
    for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "npuscope: error: cannot run '%s': %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  g_child = pid;
  struct sigaction sa {};
  sa.sa_handler = forward_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  g_child = 0;
  converter.workload_exited();
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// `counted`: the summary the conversion counted, if it ran (else read from the trace).
void print_summary(const std::string& path, const std::optional<collector::TaskSummary>& counted) {
  if (!fs::exists(path)) {
    std::fprintf(stderr, "npuscope: no trace was written to %s: the program did not use the npuscope emulator\n",
                 path.c_str());
    return;
  }
  // Just written by the child: no need to read the whole file for a quick_check.
  const auto reader = collector::TraceReader::open(path, {.verify = false});
  const collector::TaskSummary t = counted ? *counted : reader->task_summary();
  const std::int64_t tasks = t.tasks, overflows = t.overflows, first = t.first_start_ns, last = t.last_end_ns;
  const std::vector<collector::StatValue> lost = collector::data_loss(reader->stats());
  std::printf("npuscope: trace written to %s%s\n", path.c_str(),
              reader->complete() ? "" : " (INCOMPLETE: the program did not exit cleanly)");
  std::printf("npuscope: %lld tasks over %.3f ms of device time, %lld overflowing task%s\n",
              static_cast<long long>(tasks), tasks ? static_cast<double>(last - first) / 1e6 : 0.0,
              static_cast<long long>(overflows), overflows == 1 ? "" : "s");
  if (const std::int64_t findings = reader->count("KERNEL_FINDING"); findings > 0) {
    std::printf("npuscope: %lld sanitizer finding%s in custom kernels (npuscope analyze %s lists them)\n",
                static_cast<long long>(findings), findings == 1 ? "" : "s", path.c_str());
  }
  if (reader->meta(std::string(collector::kMetaGolden)) == "1")
    std::printf("npuscope: a golden run (NPUSCOPE_GOLDEN=1): every NPU op ran its CPU golden kernel\n");
  // Every data-loss counter that is not zero (Note [Trace stats]): what the trace is missing.
  for (const collector::StatValue& s : lost) {
    std::fprintf(stderr, "npuscope: warning: DATA LOST: %s\n", collector::describe(s).c_str());
  }
}

}  // namespace

int run_command(int argc, char** argv) {
  const int split = command_separator(argc, argv);
  RunFlags f;
  po::options_description desc("npuscope run options");
  desc.add_options()("help,h", "show this help")(
      "output,o", po::value(&f.output),
      "the trace file (default npuscope_<cmd>_<time>.db); %r: the rank, under mpirun/torchrun/srun")(
      "dump", po::value(&f.dump)->default_value(f.dump), "tensor capture: none | stats | tensor | md5")(
      "ops", po::value(&f.ops)->composing(), "dump only ops whose name matches this glob (repeatable)")(
      "steps", po::value(&f.steps),
      "dump only in steps A-B, or step A (from the workload's step markers); 0 <= A <= B <= 2^63-1")(
      "max-dump-bytes", po::value(&f.max_dump_bytes),
      "stop dumping tensor data after this many bytes: 0 (no cap, the default) to 2^50")(
      "overflow-only", po::bool_switch(&f.overflow_only), "keep tensor data only for overflowing ops and their inputs")(
      "grad-probe", po::bool_switch(&f.grad_probe),
      "PyTorch scripts: record every parameter's gradient statistics each step (msprobe's grad_probe)")(
      "check-ops", po::bool_switch(&f.check_ops),
      "check every NPU kernel against its CPU golden kernel in f64 on the same inputs (msprobe's API precision "
      "standards)")("no-pipe-trace", po::bool_switch(&f.no_pipe_trace),
                    "custom (opkit) kernels: do not record every instruction (PIPE_INSTRUCTION); the per-block pipe "
                    "summary (KERNEL_BLOCK) stays")(
      "keep-going", po::bool_switch(&f.keep_going),
      "custom (opkit) kernels: on a sanitizer finding, skip the instruction and run on, so that every finding is "
      "listed (default: the first one fails the kernel)")("force", po::bool_switch(&f.force),
                                                          "overwrite an existing trace file");
  if (!parse_flags(split, argv, desc, kUsage)) return 0;
  if (split + 1 >= argc) throw UsageError("no command to run: put it after '--'");
  const inject::InjectConfig config = inject_config(f);
  const std::vector<std::string> command(argv + split + 1, argv + argc);
  const std::string output =
      fs::absolute(f.output.empty() ? default_output(command[0]) : expand_rank(f.output)).string();
  const std::string spool = output + ".spool";
  for (const std::string& path : {output, spool, output + ".part"}) {
    if (!fs::exists(path)) continue;
    if (!f.force) throw UsageError(path + " exists: choose another -o or pass --force to overwrite it");
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path + suffix);
  }
  check_writable(output, spool);
  const std::string status_file = output + ".start_status";
  fs::remove(status_file);
  const std::string library = injection_library();
  SpoolConverter converter(spool, output);
  const auto started = std::chrono::steady_clock::now();
  const int status = run_child(command,
                               {{"NPUSCOPE_INJECTION", library},
                                {"NPUSCOPE_SPOOL", spool},
                                {"NPUSCOPE_CONFIG", config.to_json()},
                                {NPUSCOPE_INJECTION_STATUS_ENV, status_file}},
                               converter);
  const std::string why_not_started = not_started_reasons(status_file);
  fs::remove(status_file);
  const auto exited = std::chrono::steady_clock::now();
  const SpoolConverter::Outcome outcome = converter.finish();
  const auto ready = std::chrono::steady_clock::now();
  if (outcome.error) {
    try {
      std::rethrow_exception(outcome.error);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "npuscope: error: converting %s into the trace failed: %s (the spool is kept)\n",
                   spool.c_str(), e.what());
    }
    return status != 0 ? status : 1;
  }
  if (!outcome.had_spool && !fs::exists(output)) {
    std::fprintf(stderr, "npuscope: error: profiling never started, no trace was written to %s: %s\n", output.c_str(),
                 why_not_started.empty() ? "the program did not use the npuscope emulator (it never loaded the "
                                           "injection library); profile a program that links npuscope's emulator"
                                         : why_not_started.c_str());
    return status != 0 ? status : kProfilingNotStarted;
  }
  try {
    print_summary(output, outcome.had_spool ? std::optional(outcome.replay.tasks) : std::nullopt);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "npuscope: the trace %s cannot be read: %s\n", output.c_str(), e.what());
  }
  if (outcome.had_spool) {
    const auto seconds = [](auto d) { return std::chrono::duration<double>(d).count(); };
    std::printf("npuscope: the program ran %.3f s; the trace was ready %.3f s after it exited\n",
                seconds(exited - started), seconds(ready - exited));
  }
  return status;
}

}  // namespace npuscope::cli

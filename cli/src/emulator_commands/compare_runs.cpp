// See Note [One-shot comparison runs] in compare_runs.h.
#include "compare_runs.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "command.h"

extern char** environ;

namespace npuscope::cli {
namespace {

namespace fs = std::filesystem;

// The variables compare decides for each run (Note [One-shot comparison runs]).
constexpr const char* kGoldenEnv = "NPUSCOPE_GOLDEN";
constexpr const char* kPerturbEnv = "NPUSCOPE_PERTURB";

std::string self_path() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find the npuscope binary (/proc/self/exe): " + ec.message());
  return self.string();
}

// This process's environment without compare's own variables, plus `set` ("NAME=VALUE" each).
std::vector<std::string> run_environment(const std::vector<std::string>& set) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::string_view name = entry.substr(0, entry.find('='));
    if (name != kGoldenEnv && name != kPerturbEnv) env.emplace_back(entry);
  }
  env.insert(env.end(), set.begin(), set.end());
  return env;
}

// Runs argv with `env`, stdout appended to `log` (its stderr stays on ours). Returns the exit status.
int run_quietly(const std::vector<std::string>& args, const std::vector<std::string>& env, const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  const auto pointers = [](const std::vector<std::string>& strings) {
    std::vector<char*> out;
    for (const std::string& s : strings) out.push_back(const_cast<char*>(s.c_str()));
    out.push_back(nullptr);
    return out;
  };
  std::vector<char*> argv = pointers(args), envp = pointers(env);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + args[0] + ": " + std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// `npuscope run` recording DIR/<name>.db with the dump flags, up to and including "--".
std::vector<std::string> run_prefix(const std::string& self, const std::string& trace, const DumpFlags& dump) {
  std::vector<std::string> args = {self, "run", "-o", trace, "--force", "--dump", dump.dump};
  for (const std::string& glob : dump.ops) args.insert(args.end(), {"--ops", glob});
  if (!dump.steps.empty()) args.insert(args.end(), {"--steps", dump.steps});
  args.emplace_back("--");
  return args;
}

// Records one run into DIR/<name>.db; InputError naming `what` and the log when it fails.
std::string record(const std::vector<std::string>& args_after_run, const std::vector<std::string>& env,
                   const DumpFlags& dump, TraceDir& dir, const std::string& name, const std::string& what) {
  const std::string self = self_path(), trace = dir.path() + "/" + name + ".db", log = dir.path() + "/" + name + ".log";
  std::vector<std::string> args = run_prefix(self, trace, dump);
  args.insert(args.end(), args_after_run.begin(), args_after_run.end());
  std::fprintf(stderr, "npuscope compare: running %s with %s dumps\n", what.c_str(), dump.dump.c_str());
  const int status = run_quietly(args, run_environment(env), log);
  if (status != 0) {
    dir.keep();
    throw InputError(what + " failed (exit status " + std::to_string(status) + "; its output is in " + log +
                     ", its errors above)");
  }
  return trace;
}

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

}  // namespace

TraceDir::TraceDir(const std::string& keep) : keep_(!keep.empty()) {
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

TraceDir::~TraceDir() {
  std::error_code ec;
  if (!keep_) fs::remove_all(path_, ec);
}

RecordedRuns record_model(const ExecFlags& exec, const DumpFlags& dump, TraceDir& dir) {
  RecordedRuns runs;
  for (const char* device : {"cpu", "npu"}) {
    const bool golden = std::strcmp(device, "cpu") == 0;
    std::vector<std::string> args = {self_path(), "exec",         "--device",
                                     device,      "--output-dir", dir.path() + "/" + device + "_outputs"};
    const std::vector<std::string> flags = exec_arguments(exec, golden);
    args.insert(args.end(), flags.begin(), flags.end());
    const std::string what =
        exec.model + " on " + (golden ? std::string("the cpu golden backend") : std::string("the emulated NPU"));
    (golden ? runs.golden : runs.npu) = record(args, {}, dump, dir, device, what);
  }
  return runs;
}

RecordedRuns record_command(const std::vector<std::string>& command, const std::vector<std::string>& perturb,
                            const DumpFlags& dump, TraceDir& dir) {
  const std::string cmd = join(command);
  RecordedRuns runs;
  runs.golden = record(command, {std::string(kGoldenEnv) + "=1"}, dump, dir, "golden",
                       "the golden run of '" + cmd + "' (NPUSCOPE_GOLDEN=1)");
  std::vector<std::string> env;
  std::string rules;
  for (const std::string& rule : perturb) rules += (rules.empty() ? "" : "\n") + rule;
  if (!rules.empty()) env.push_back(std::string(kPerturbEnv) + "=" + rules);
  runs.npu = record(command, env, dump, dir, "npu",
                    "the NPU run of '" + cmd + "'" + (perturb.empty() ? "" : " (with " + join(perturb) + ")"));
  return runs;
}

}  // namespace npuscope::cli

// Runs the real `npuscope` binary (and samples) from tests, capturing output and exit status.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace npuscope::testing {

struct CommandResult {
  int status = -1;     // exit status (128 + signal when killed)
  std::string output;  // stdout and stderr together
};

// Runs `command` through /bin/sh with stderr folded into stdout.
inline CommandResult run_command(const std::string& command) {
  CommandResult r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.output.append(buf.data(), n);
  const int raw = pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  return r;
}

// A whole file's bytes ("" if it cannot be read). libstdc++'s filebuf throws when a read fails after
// the open, as reading /proc/PID/task/TID/stat does (ESRCH) once that thread has exited: "" too.
inline std::string read_file(const std::filesystem::path& p) {
  try {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  } catch (const std::exception&) {
    return {};
  }
}

// The symbols of npuscope's a shared object exports (nm -D --defined-only: libstdc++'s templates
// keep their default visibility, so only the names with "npuscope" in them count), one per line;
// nm's own output when it fails.
inline std::string exported_npuscope_symbols(const std::string& file) {
  const CommandResult symbols = run_command("nm -D --defined-only " + file);
  if (symbols.status != 0) return symbols.output;
  std::istringstream lines(symbols.output);
  std::string line, ours;
  while (std::getline(lines, line))
    if (line.find("npuscope") != std::string::npos) ours += line.substr(line.rfind(' ') + 1) + "\n";
  return ours;
}

inline std::string npuscope_cmd(const std::string& args) { return std::string(NPUSCOPE_CLI) + " " + args; }

// The prefix that runs a command under Xvfb for a test: `xvfb-run -a` looking for a free display from
// base + (pid % 500) * 8 + (n-th call % 8) on (test processes that ctest -j runs side by side start
// from different numbers, so that two of them do not race for one; `base` keeps test programs apart),
// with the X authority in a file of this call's own in `auth_dir`. Without -f, xvfb-run keeps the
// authority in a temporary directory of its own, and when removing it at exit fails ("problem while
// cleaning up temporary directory": once in 80 runs of two viewer tests side by side under ASan) it
// exits 5 instead of with the command's status.
inline std::string xvfb_run_prefix(int base, const std::filesystem::path& auth_dir) {
  static int calls = 0;
  const int call = calls++;
  const std::string auth = (auth_dir / ("xauth-" + std::to_string(call))).string();
  return "xvfb-run -a -n " + std::to_string(base + (getpid() % 500) * 8 + call % 8) + " -f '" + auth +
         "' -s '-screen 0 1920x1200x24' ";
}

}  // namespace npuscope::testing

// What every subcommand shares: its entry point, usage errors, and the run-time flags that set up
// the emulator (device, spec, precision and overflow modes).
#pragma once

#include <boost/program_options.hpp>
#include <stdexcept>
#include <string>

namespace npuscope::cli {

namespace po = boost::program_options;

// A wrong flag or argument: printed with the command's usage, exit status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Input the command cannot use (not a trace, no dumps, a bad mapping file): "npuscope: error: ...",
// exit status 2 like a usage error, but without the usage line.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Returns the exit status; throws UsageError or any library error (printed as "npuscope: error").
using CommandFn = int (*)(int argc, char** argv);

// The emulator set-up flags (declared with exec's in exec_flags.cpp).
struct DeviceFlags {
  std::string device = "npu";
  std::string spec;
  std::string precision_mode;
  std::string overflow_mode;
};
// Configures the emulator runtime: environment first (NPUSCOPE_SPEC...), flags over it.
void configure_runtime(const DeviceFlags& flags);

// Parses argv (argv[0] is the subcommand). Returns false when --help was printed.
bool parse_flags(int argc, char** argv, const po::options_description& desc, const char* usage,
                 po::positional_options_description* positional = nullptr, po::variables_map* out = nullptr);

// Writes `text` to `path`; std::runtime_error naming the file when it cannot.
void write_text_file(const std::string& path, const std::string& text);

int analyze_command(int argc, char** argv);
int compare_command(int argc, char** argv);
int exec_command(int argc, char** argv);
int export_command(int argc, char** argv);
int run_command(int argc, char** argv);
int view_command(int argc, char** argv);

}  // namespace npuscope::cli

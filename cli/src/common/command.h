// What every subcommand shares: its entry point, how its errors become an exit status, its flag
// parsing. The npuscope program and the emulator commands' module (Note [Commands that load the
// emulator] in cli/src/emulator_commands.h) both link it.
#pragma once

#include <boost/program_options.hpp>
#include <charconv>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

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

// Runs `fn` as the subcommand `name` (argv[0]) and returns the exit status: fn's own, 2 for a
// UsageError ("npuscope NAME: error: ...") or an InputError, 1 for any other exception
// ("npuscope: error: ..."), each printed to stderr.
int run_guarded(const char* name, CommandFn fn, int argc, char** argv);

// An integer flag read strictly: decimal digits, a leading '-' only for a signed type, within
// [min, max]; anything else is a usage error naming the flag and its range. program_options' own
// reading takes "-5" for an unsigned 2^64-5 and says nothing of the range. Put the range in the
// flag's help too (a test checks --help shows it).
template <class T>
class RangedValue : public po::typed_value<T> {
 public:
  RangedValue(T* store, std::string flag, T min, T max)
      : po::typed_value<T>(store), flag_(std::move(flag)), min_(min), max_(max) {}
  void xparse(boost::any& out, const std::vector<std::string>& tokens) const override {
    const std::string text = tokens.empty() ? "" : tokens.back();
    T v{};
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < min_ || v > max_) {
      throw po::error("--" + flag_ + " must be an integer from " + std::to_string(min_) + " to " +
                      std::to_string(max_) + ", got '" + text + "'");
    }
    out = v;
  }

 private:
  std::string flag_;
  T min_, max_;
};
template <class T>
RangedValue<T>* ranged_value(T* store, std::string flag, T min, T max) {
  return new RangedValue<T>(store, std::move(flag), min, max);
}

// Parses argv (argv[0] is the subcommand). Returns false when --help was printed.
bool parse_flags(int argc, char** argv, const po::options_description& desc, const char* usage,
                 po::positional_options_description* positional = nullptr, po::variables_map* out = nullptr);

// Where the flags end and a command to run begins: the index of the first "--" in argv, else argc
// (npuscope run -- CMD, npuscope compare -- CMD).
int command_separator(int argc, char** argv);

// The items of a list flag given as "a,b" and as repeated flags alike (declare it ->composing()).
std::vector<std::string> split_commas(const std::vector<std::string>& values);

// Writes `text` to `path`; std::runtime_error naming the file when it cannot.
void write_text_file(const std::string& path, const std::string& text);

int analyze_command(int argc, char** argv);
int diff_command(int argc, char** argv);
int calibrate_command(int argc, char** argv);
int cluster_command(int argc, char** argv);
int compare_command(int argc, char** argv);
int exec_command(int argc, char** argv);
int export_command(int argc, char** argv);
int run_command(int argc, char** argv);
int view_command(int argc, char** argv);
int import_command(int argc, char** argv);

}  // namespace npuscope::cli

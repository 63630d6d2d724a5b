// Issue 15: every numeric option of every command has a documented range, checked as it is parsed:
// a negative number never wraps into a huge unsigned one, a number past the range or past its type
// is a usage error (exit 2) naming the flag and the range, and --help shows the range.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_test_util.h"

using namespace npuscope::testing;

namespace {

struct Case {
  std::string command;  // the subcommand and any arguments before the flag
  std::string flag;     // "--top"
  std::vector<std::string> bad;
  std::string range;  // as --help and the error say it
};

const std::vector<Case> kCases = {
    {"analyze t.db", "--top", {"-5", "0", "1000001", "99999999999999999999", "1e3", "5x"}, "1 to 1000000"},
    {"compare a.db b.db", "--top", {"-1", "1000001", "99999999999999999999", "2.5"}, "0 to 1000000"},
    {"exec --model m.onnx", "--iterations", {"-1", "0", "1000001", "4294967297", "1e3"}, "1 to 1000000"},
    {"exec --model m.onnx", "--seed", {"-5", "18446744073709551616", "0x10", "1e3"}, "0 to 18446744073709551615"},
    {"compare --model m.onnx", "--iterations", {"-1", "0", "1000001"}, "1 to 1000000"},
    {"compare --model m.onnx", "--seed", {"-5", "18446744073709551616"}, "0 to 18446744073709551615"},
};

}  // namespace

TEST(NumericOptions, OutOfRangeValuesAreUsageErrorsNamingFlagAndRange) {
  for (const Case& c : kCases) {
    const std::string sub = c.command.substr(0, c.command.find(' '));
    for (const std::string& bad : c.bad) {
      SCOPED_TRACE(c.command + " " + c.flag + "=" + bad);
      const auto r = run_command(npuscope_cmd(c.command + " " + c.flag + "='" + bad + "'"));
      EXPECT_EQ(r.status, 2) << r.output;
      EXPECT_NE(r.output.find("npuscope " + sub + ": error: " + c.flag + " must be an integer from " + c.range),
                std::string::npos)
          << r.output;
    }
  }
}

TEST(NumericOptions, HelpShowsEveryRange) {
  for (const Case& c : kCases) {
    const std::string sub = c.command.substr(0, c.command.find(' '));
    const auto r = run_command(npuscope_cmd(sub + " --help"));
    ASSERT_EQ(r.status, 0) << r.output;
    const auto at = r.output.find(c.flag + " ");
    ASSERT_NE(at, std::string::npos) << r.output;
    EXPECT_NE(r.output.find(c.range, at), std::string::npos) << sub << " " << c.flag << ":\n" << r.output;
  }
  const auto run = run_command(npuscope_cmd("run --help"));
  EXPECT_NE(run.output.find("0 <= A <= B <= 2^63-1"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("to 2^50"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("125 when CMD ran but profiling never started"), std::string::npos) << run.output;
  const auto view = run_command(npuscope_cmd("view --help"));
  EXPECT_NE(view.output.find("+-2^62"), std::string::npos) << view.output;
  EXPECT_NE(view.output.find("64 to 16384"), std::string::npos) << view.output;
}

TEST(NumericOptions, TheRangesBoundsAreAccepted) {
  // Parsed fine, then the command fails later for its own reason (no such trace / model), not the flag.
  for (const std::string& args :
       {std::string("analyze missing.db --top 1000000"), std::string("analyze missing.db --top 1"),
        std::string("exec --model missing.onnx --iterations 1000000 --seed 18446744073709551615")}) {
    const auto r = run_command(npuscope_cmd(args));
    EXPECT_EQ(r.output.find("must be an integer"), std::string::npos) << args << ": " << r.output;
  }
}

#include "report_output.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstring>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>

#include "command.h"
#include "npuscope/analyzer/format.h"

namespace npuscope::cli {

analyzer::TextStyle stdout_text_style() {
  analyzer::TextStyle style;
  const bool terminal = isatty(STDOUT_FILENO) != 0;
  style.colour = terminal && std::getenv("NO_COLOR") == nullptr;
  int columns = 0;
  winsize size{};
  if (terminal && ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0) columns = size.ws_col;
  if (const char* env = std::getenv("COLUMNS"); columns == 0 && env != nullptr) {
    std::from_chars(env, env + std::strlen(env), columns);  // not a number: stays 0
  }
  if (columns > 0) style.width = std::clamp(columns, 60, 1000);
  return style;
}

void check_report_format(const std::string& format, const std::string& output) {
  if (format != "text" && format != "json" && format != "csv") {
    throw UsageError("--format must be text, json or csv, got '" + format + "'");
  }
  if (format == "csv" && output.empty()) throw UsageError("--format csv writes files: give the directory with -o DIR");
}

void write_json_output(const std::string& output, const std::function<void(std::ostream&)>& write) {
  if (output.empty()) {
    write(std::cout);
    std::cout << '\n';
    std::cout.flush();
    return;
  }
  std::ofstream out(output, std::ios::binary);
  write(out);
  out << '\n';
  out.flush();
  if (!out) throw std::runtime_error("cannot write " + output);
}

void write_report(const analyzer::Report& report, const std::string& format, const std::string& output,
                  const std::string& what) {
  if (format == "csv") {
    analyzer::write_csv(report, output);
    std::printf("wrote %s into %s\n", what.c_str(), output.c_str());
  } else if (format == "json") {
    write_json_output(output, [&](std::ostream& out) { analyzer::write_json(report, out); });
  } else if (output.empty()) {
    analyzer::write_text(report, std::cout, stdout_text_style());
  } else {
    std::ostringstream text;
    analyzer::write_text(report, text);
    write_text_file(output, text.str());
  }
}

}  // namespace npuscope::cli

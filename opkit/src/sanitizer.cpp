#include "npuscope/opkit/sanitizer.h"

namespace npuscope::opkit {

std::string format_finding(const Finding& f) {
  std::string s = "ERROR: " + std::string(check_name(f.check)) + " in " + f.kernel;
  if (f.block >= 0) s += ", block " + std::to_string(f.block);
  if (!f.instruction.empty()) s += ", " + f.instruction;
  if (!f.file.empty()) s += " at " + f.file + ":" + std::to_string(f.line);
  return s + ": " + f.message;
}

namespace {
std::string fault_message(const std::vector<Finding>& findings) {
  if (findings.empty()) return "kernel fault";
  std::string s = format_finding(findings.front());
  if (findings.size() > 1) s += " (and " + std::to_string(findings.size() - 1) + " more)";
  return s;
}
}  // namespace

KernelFault::KernelFault(std::vector<Finding> findings)
    : std::runtime_error(fault_message(findings)), findings_(std::move(findings)) {}

}  // namespace npuscope::opkit

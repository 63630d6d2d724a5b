#include "npuscope/opkit/sanitizer.h"

namespace npuscope::opkit {

std::string_view check_name(Check c) {
  static constexpr std::string_view kNames[] = {
#define NPUSCOPE_OPKIT_CHECK_NAME(e, n, d) n,
      NPUSCOPE_OPKIT_CHECKS(NPUSCOPE_OPKIT_CHECK_NAME)
#undef NPUSCOPE_OPKIT_CHECK_NAME
  };
  return kNames[static_cast<int>(c)];
}

std::string_view check_doc(Check c) {
  static constexpr std::string_view kDocs[] = {
#define NPUSCOPE_OPKIT_CHECK_DOC(e, n, d) d,
      NPUSCOPE_OPKIT_CHECKS(NPUSCOPE_OPKIT_CHECK_DOC)
#undef NPUSCOPE_OPKIT_CHECK_DOC
  };
  return kDocs[static_cast<int>(c)];
}

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

#include "api_levels.h"

#include <array>
#include <cctype>
#include <utility>

namespace npuscope::importer {
namespace {

bool same_letters(std::string_view a, std::string_view b) {  // ASCII, ignoring case
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

bool ends_with_letters(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && same_letters(s.substr(s.size() - suffix.size()), suffix);
}

}  // namespace

ApiLevel cann_api_level(std::string_view level, std::string_view call_name) {
  static constexpr std::array<std::pair<std::string_view, ApiLevel>, 8> kLevels{{
      {"acl", ApiLevel::kAcl},
      {"AscendCL", ApiLevel::kAcl},
      {"model", ApiLevel::kModel},
      {"node", ApiLevel::kNode},
      {"hccl", ApiLevel::kHccl},
      {"communication", ApiLevel::kHccl},
      {"runtime", ApiLevel::kRuntime},
      {"driver", ApiLevel::kDriver},
  }};
  if (level.empty()) {
    const std::size_t at = call_name.find('@');
    if (at == std::string_view::npos) return ApiLevel::kUnknown;
    level = call_name.substr(0, at);
  }
  for (const auto& [name, value] : kLevels) {
    if (same_letters(name, level)) return value;
  }
  return ApiLevel::kUnknown;
}

ApiLevel kineto_api_level(std::string_view category) {
  if (same_letters(category, "runtime") || ends_with_letters(category, "_runtime")) return ApiLevel::kRuntime;
  if (same_letters(category, "driver") || ends_with_letters(category, "_driver")) return ApiLevel::kDriver;
  return ApiLevel::kUnknown;
}

}  // namespace npuscope::importer

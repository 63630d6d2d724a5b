// The checked-in list of ONNX node test cases that pass in one configuration
// (tests/conformance/passing_<config>.txt, one case name per line, '#' starts a comment), and the
// check of a run against it: a listed case that does not pass fails the test, naming it; a passing
// case that is not listed is reported. NPUSCOPE_CONFORMANCE_UPDATE=1 rewrites the list instead.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace conformance {

// NPUSCOPE_CONFORMANCE_DIR: tests/conformance of the source tree (tests/CMakeLists.txt).
inline std::filesystem::path passing_list_path(std::string_view config) {
  return std::filesystem::path(NPUSCOPE_CONFORMANCE_DIR) / ("passing_" + std::string(config) + ".txt");
}

inline constexpr char kUpdateCommand[] = "NPUSCOPE_CONFORMANCE_UPDATE=1 build/tests/onnx_node_conformance_test";

inline std::set<std::string> read_passing_list(const std::filesystem::path& path) {
  std::set<std::string> names;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    if (!line.empty() && line[0] != '#') names.insert(line);
  }
  return names;
}

inline void write_passing_list(const std::filesystem::path& path, std::string_view config,
                               const std::vector<std::string>& passed) {
  std::ofstream out(path);
  out << "# ONNX node test cases that pass in the '" << config
      << "' configuration of tests/conformance/onnx_node_conformance_test.cpp.\n"
      << "# A listed case that stops passing fails the test. Rewrite with: " << kUpdateCommand << "\n";
  for (const auto& name : passed) out << name << '\n';
}

// `passed`: the cases that passed; `not_passing`: every other case that was found, with why
// (failure or skip); `filter`: the NPUSCOPE_CONFORMANCE_FILTER substring ("" for all cases).
inline void check_passing_list(std::string_view config, const std::vector<std::string>& passed,
                               const std::map<std::string, std::string>& not_passing, const std::string& filter) {
  const auto path = passing_list_path(config);
  const char* update_env = std::getenv("NPUSCOPE_CONFORMANCE_UPDATE");
  const bool update = update_env != nullptr && std::string_view(update_env) == "1";
  if (update && filter.empty()) {
    write_passing_list(path, config, passed);
    std::printf("[%s] wrote %zu passing cases to %s\n", std::string(config).c_str(), passed.size(),
                path.string().c_str());
    return;
  }
  if (!std::filesystem::exists(path)) {
    ADD_FAILURE() << "[" << config << "] no list of passing cases at " << path << ": create it with " << kUpdateCommand;
    return;
  }
  const std::set<std::string> listed = read_passing_list(path);
  const std::set<std::string> now(passed.begin(), passed.end());
  std::vector<std::string> regressions, new_passes;
  for (const auto& name : listed) {
    if (name.find(filter) != std::string::npos && !now.contains(name)) regressions.push_back(name);
  }
  for (const auto& name : passed) {
    if (!listed.contains(name)) new_passes.push_back(name);
  }
  for (const auto& name : regressions) {
    const auto it = not_passing.find(name);
    ADD_FAILURE() << "[" << config << "] " << name << " is listed in " << path.filename() << " but no longer passes: "
                  << (it != not_passing.end() ? it->second : "the case is not in the test data");
  }
  if (!new_passes.empty()) {
    std::printf("[%s] %zu case(s) pass that %s does not list:\n", std::string(config).c_str(), new_passes.size(),
                path.filename().string().c_str());
    for (const auto& name : new_passes) std::printf("  NEW PASS %s\n", name.c_str());
  }
  if (!regressions.empty() || !new_passes.empty()) {
    std::printf("[%s] if the change is intended, rewrite the lists with: %s (and commit them)\n",
                std::string(config).c_str(), kUpdateCommand);
  }
}

}  // namespace conformance

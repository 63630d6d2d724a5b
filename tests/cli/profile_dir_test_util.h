// A test's own temporary folder for the CLI tests of real profiles: copies of shared/realdata
// files in a writable place (a command given a source caches its import beside it) and the paths
// of the outputs.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace npuscope::testing {

class ProfileDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const ::testing::TestInfo& test = *::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("npuscope_" + std::string(test.test_suite_name()) + "_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  // A copy of `src` as `name` (a relative path) in the folder.
  std::string copy(const std::string& src, const std::string& name) {
    const std::filesystem::path to = dir_ / name;
    std::filesystem::create_directories(to.parent_path());
    std::filesystem::copy_file(src, to, std::filesystem::copy_options::overwrite_existing);
    return to.string();
  }
  // A copy of the folder `src` as `name`, writable (the source's files may be read-only).
  std::string copy_dir(const std::string& src, const std::string& name) {
    const std::filesystem::path to = dir_ / name;
    std::filesystem::create_directories(to.parent_path());
    std::filesystem::copy(src, to, std::filesystem::copy_options::recursive);
    for (const auto& e : std::filesystem::recursive_directory_iterator(to)) {
      std::filesystem::permissions(e.path(), std::filesystem::perms::owner_all, std::filesystem::perm_options::add);
    }
    std::filesystem::permissions(to, std::filesystem::perms::owner_all, std::filesystem::perm_options::add);
    return to.string();
  }
  std::string out(const std::string& name) const { return (dir_ / name).string(); }
  // A writable copy of the msprobe dump folder `src` as `name`, whose entry `entry` has its first
  // output's Max and Norm tripled: a planted change in one entry's statistics.
  std::string planted_dump(const std::string& src, const std::string& entry, const std::string& name) {
    const std::string dir = copy_dir(src, name);
    nlohmann::ordered_json dump = nlohmann::ordered_json::parse(std::ifstream(dir + "/dump.json"));
    nlohmann::ordered_json& out = dump["data"][entry]["output"][0];
    out["Max"] = out["Max"].get<double>() * 3;
    out["Norm"] = out["Norm"].get<double>() * 3;
    std::ofstream(dir + "/dump.json") << dump.dump(1);
    return dir;
  }
  std::filesystem::path dir_;
};

}  // namespace npuscope::testing

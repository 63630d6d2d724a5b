// A test's own temporary folder for importing real profiles: traces imported there, writable copies
// of the shared (read-only) export folders, the error an import ends in. Removed at the end.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "npuscope/collector/trace_reader.h"
#include "npuscope/importer/import.h"

namespace npuscope::importer::test {

class ImportTestDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("npuscope_import_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name() + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  // Imports `src` (detected) into a trace of its own in the folder.
  std::unique_ptr<collector::TraceReader> import(const std::string& src, ImportReport* report = nullptr) {
    const auto source = detect(src);
    EXPECT_TRUE(source.has_value()) << src;
    if (!source) return nullptr;
    const std::string out = (dir_ / ("t" + std::to_string(++imports_) + ".db")).string();
    const ImportReport r = import_to_file(*source, out, true);
    if (report != nullptr) *report = r;
    return collector::TraceReader::open(out);
  }
  // A writable copy of a real export folder.
  std::filesystem::path copy_dir(const std::string& src, const std::string& name) {
    namespace fs = std::filesystem;
    const fs::path to = dir_ / name;
    fs::copy(src, to, fs::copy_options::recursive);
    for (const auto& e : fs::recursive_directory_iterator(to)) {
      fs::permissions(e.path(), fs::perms::owner_all, fs::perm_options::add);
    }
    fs::permissions(to, fs::perms::owner_all, fs::perm_options::add);
    return to;
  }
  // The message of the ImportError importing `folder` throws (detect's or the import's), "" if none.
  std::string import_error(const std::filesystem::path& folder) {
    try {
      const auto source = detect(folder.string());
      if (source) import_to_file(*source, (dir_ / "error.db").string(), true);
    } catch (const ImportError& e) {
      return e.what();
    }
    ADD_FAILURE() << "no error importing " << folder;
    return {};
  }

  std::filesystem::path dir_;

 private:
  int imports_ = 0;
};

}  // namespace npuscope::importer::test

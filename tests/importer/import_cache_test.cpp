// Where a real profile's cached import is written (importer::cache_path_of): beside the source in a
// folder meant to be written, under $TMPDIR otherwise, even for root, who may write anywhere.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "import_test_dir.h"
#include "npuscope/importer/import.h"

namespace npuscope::importer {
namespace {

namespace fs = std::filesystem;

class ImportCacheTest : public test::ImportTestDir {
 protected:
  // A copy of a small real Kineto trace in `folder` under the test's folder.
  std::string copy_into(const std::string& folder) {
    const fs::path d = dir_ / folder;
    fs::create_directories(d);
    const fs::path src = fs::path(NPUSCOPE_SOURCE_DIR) / "tests/data/realdata/kineto_cross_hw/h100_bert_small.json.gz";
    fs::copy_file(src, d / src.filename());
    return (d / src.filename()).string();
  }
};

TEST_F(ImportCacheTest, WritesBesideASourceInAWritableFolder) {
  const std::string trace = copy_into("rw");
  const auto source = detect(trace);
  ASSERT_TRUE(source.has_value());
  EXPECT_EQ(cache_path_of(*source), fs::absolute(trace).string() + ".npuscope.db");
}

// shared/realdata is r-x for everyone, root included: root passes access(W_OK) there, and an
// earlier version left its cached imports inside the shared data.
TEST_F(ImportCacheTest, ReadOnlyFolderKeepsItsFilesEvenForRoot) {
  const std::string trace = copy_into("ro");
  const fs::path folder = fs::path(trace).parent_path();
  fs::permissions(folder, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                              fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  const auto source = detect(trace);
  ASSERT_TRUE(source.has_value());
  const CachedTrace cached = cached_import(*source);
  fs::permissions(folder, fs::perms::owner_all);  // so that TearDown can remove it
  EXPECT_FALSE(fs::path(cached.path).string().starts_with(folder.string())) << cached.path;
  EXPECT_TRUE(fs::exists(cached.path));
  EXPECT_FALSE(fs::exists(trace + ".npuscope.db"));
  EXPECT_EQ(fs::path(cached.path).parent_path().filename(), "npuscope-imports");
  std::error_code ec;
  fs::remove(cached.path, ec);
}

}  // namespace
}  // namespace npuscope::importer

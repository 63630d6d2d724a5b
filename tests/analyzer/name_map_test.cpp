// Name map files (Note [Op pairing]): `npuscope compare --mapping` and `npuscope diff --op-name-map`
// read them with one loader, each with its own keys; every error names the file, the item and the keys.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "npuscope/analyzer/diff.h"
#include "npuscope/analyzer/op_pairing.h"

using namespace npuscope::analyzer;

namespace {

constexpr NameMapKeys kCompareKeys{"npu", "golden", "bench"};  // comparator::kMappingKeys

class NameMapTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("npuscope_name_map_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static void write_bytes_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }
  static NameMap load(const std::string& path, const NameMapKeys& keys = kCompareKeys) {
    return load_name_map(path, keys);
  }

 private:
  std::filesystem::path dir_;
};

TEST_F(NameMapTest, BadFilesAreExplained) {
  const std::string bad = path("bad.yaml");
  write_bytes_file(bad, "- just a string\n");
  EXPECT_THROW(load(bad), NameMapError);
  write_bytes_file(bad, "a: b\na: c\n");
  EXPECT_THROW(load(bad), NameMapError);
  EXPECT_THROW(load(path("missing.yaml")), NameMapError);
  write_bytes_file(bad, R"([{"npu": "x", "golden": "y"}])");
  EXPECT_EQ(load(bad), (std::map<std::string, std::string>{{"x", "y"}}));
}

// Issue 15: an item without "golden" gave `invalid node; first invalid key: "bench"` with no file
// name. Every error names the file, the item (index and line) and the expected keys.
TEST_F(NameMapTest, ErrorsNameFileItemAndKeys) {
  const std::string bad = path("bad.yaml");
  const auto error_of = [&](const std::string& text) -> std::string {
    write_bytes_file(bad, text);
    try {
      load(bad);
    } catch (const NameMapError& e) {
      return e.what();
    }
    return "(accepted)";
  };
  std::string e = error_of("- {npu: a, golden: b}\n- {npu: x}\n");
  EXPECT_EQ(e, bad + ": item 2 (line 2): no \"golden\" (or \"bench\") key; the keys are npu and golden") << e;
  e = error_of("- {npu: a, golden: b}\n- {golden: x}\n");
  EXPECT_EQ(e, bad + ": item 2 (line 2): no \"npu\" key; the keys are npu and golden (or bench)") << e;
  e = error_of("- {npu: a, gold: b}\n");
  EXPECT_NE(e.find(bad + ": item 1 (line 1): unknown key \"gold\""), std::string::npos) << e;
  e = error_of("- {npu: a, golden: b, bench: c}\n");
  EXPECT_NE(e.find("item 1 (line 1): both"), std::string::npos) << e;
  e = error_of("- {npu: a, golden: b}\n- just a string\n");
  EXPECT_NE(e.find(bad + ": item 2 (line 2): not a {npu: NAME, golden: NAME} map"), std::string::npos) << e;
  e = error_of("- {npu: a, golden: [1]}\n");
  EXPECT_NE(e.find(bad + ": item 1 (line 1): golden must be a non-empty op name"), std::string::npos) << e;
  e = error_of("a: b\nc: [1]\n");
  EXPECT_NE(e.find(bad + ": line 2: a value must be a non-empty op name"), std::string::npos) << e;
  e = error_of("a: b\n\na: c\n");
  EXPECT_NE(e.find(bad + ": line 3: op 'a' is mapped twice"), std::string::npos) << e;
  e = error_of("42\n");
  EXPECT_NE(e.find(bad + ": expected a map"), std::string::npos) << e;
  // "bench" is golden's alias.
  write_bytes_file(bad, "- {npu: x, bench: y}\n");
  EXPECT_EQ(load(bad), (std::map<std::string, std::string>{{"x", "y"}}));
}

// diff's keys: {base, new}, no alias; the map form is the same for both tools.
TEST_F(NameMapTest, EachToolNamesItsOwnKeys) {
  const std::string file = path("map.yaml");
  write_bytes_file(file, "- {base: old/fc, new: new/fc}\n");
  EXPECT_EQ(load(file, kDiffNameMapKeys), (NameMap{{"old/fc", "new/fc"}}));
  try {
    load(file);
    ADD_FAILURE() << "compare's keys accepted base/new";
  } catch (const NameMapError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown key \"base\"; the keys are npu and golden (or bench)"),
              std::string::npos)
        << e.what();
  }
  write_bytes_file(file, "- {base: a, bench: b}\n");
  EXPECT_THROW(load(file, kDiffNameMapKeys), NameMapError) << "bench is compare's alias only";
  write_bytes_file(file, "a: b\n");
  EXPECT_EQ(load(file, kDiffNameMapKeys), load(file));
}

}  // namespace

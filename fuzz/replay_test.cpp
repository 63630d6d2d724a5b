// Replays every seed (fuzz/corpus/<harness>/) and every input that ever crashed a harness
// (fuzz/regressions/<harness>/) through the harness NPUSCOPE_FUZZ_HARNESS, in the ordinary build:
// `make test` keeps what fuzzing found fixed without needing clang. A harness that aborts, crashes
// or lets an untyped exception out fails the test; the log names the input it was given last.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> inputs_in(const std::string& kind) {
  const fs::path dir = fs::path(NPUSCOPE_FUZZ_DIR) / kind / NPUSCOPE_FUZZ_HARNESS;
  std::vector<fs::path> files;
  if (fs::is_directory(dir)) {
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.is_regular_file() && entry.path().filename() != "README.md") files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

void replay(const std::vector<fs::path>& files) {
  for (const fs::path& file : files) {
    std::fprintf(stderr, "replaying %s\n", file.c_str());  // before: a crash must name its input
    std::ifstream in(file, std::ios::binary);
    const std::vector<char> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    EXPECT_EQ(LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()), 0) << file;
  }
}

TEST(FuzzReplay, SeedCorpus) {
  const auto files = inputs_in("corpus");
  ASSERT_FALSE(files.empty()) << "no seeds in fuzz/corpus/" NPUSCOPE_FUZZ_HARNESS;
  replay(files);
}

TEST(FuzzReplay, EveryInputThatEverCrashed) { replay(inputs_in("regressions")); }

}  // namespace

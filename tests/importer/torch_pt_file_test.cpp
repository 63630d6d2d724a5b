// Reading torch.save files without Python (importer/src/torch_pt_file.cpp): the files PyTorch
// writes (Debian's torch, at test time, against what it wrote as raw bytes), the small ones checked
// into tests/data/torch_pt (always), and bad input built here (a clear error, never a crash).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../../importer/src/torch_pt_file.h"
#include "npuscope/runtime_hooks/vocabulary.h"

namespace npuscope::importer {
namespace {

namespace fs = std::filesystem;
using collector::DumpTensorData;
using collector::MsprobeDumpError;

const fs::path kSourceDir = NPUSCOPE_SOURCE_DIR;
const fs::path kCheckedIn = kSourceDir / "tests" / "data" / "torch_pt";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void spit(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

template <class T>
std::vector<T> elements(const DumpTensorData& d) {
  std::vector<T> v(d.bytes.size() / sizeof(T));
  std::memcpy(v.data(), d.bytes.data(), v.size() * sizeof(T));
  return v;
}

std::string error_of(const fs::path& p) {
  try {
    read_torch_pt(p.string());
  } catch (const MsprobeDumpError& e) {
    return e.what();
  }
  return "(no error)";
}

class TorchPtTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // In /dev/shm where there is one: the bad-input tests write a file per byte of their input.
    const fs::path tmp = fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    dir_ = tmp / ("npuscope_torch_pt_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
};

// ---- the files Debian's torch writes ----

TEST_F(TorchPtTest, EveryFileTorchWrites) {
  const std::string cmd = "/usr/bin/python3 " + (kSourceDir / "tests/importer/write_torch_pt_files.py").string() + " " +
                          dir_.string() + " > " + (dir_ / "python.log").string() + " 2>&1";
  const int status = std::system(cmd.c_str());
  if (WIFEXITED(status) && WEXITSTATUS(status) == 3) GTEST_SKIP() << "/usr/bin/python3 has no torch";
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << slurp(dir_ / "python.log");
  std::istringstream manifest(slurp(dir_ / "manifest.txt"));
  std::string line;
  int ok = 0, errors = 0;
  while (std::getline(manifest, line)) {
    std::istringstream fields(line);
    std::string verdict, file;
    fields >> verdict >> file;
    SCOPED_TRACE(file);
    if (verdict == "error") {
      std::string text;
      fields >> text;
      std::replace(text.begin(), text.end(), '_', ' ');
      const std::string message = error_of(dir_ / file);
      // The text names the file and what is wrong (underscores in the expected text are spaces,
      // or underscores: compare both spellings).
      std::string spaced = message;
      std::replace(spaced.begin(), spaced.end(), '_', ' ');
      EXPECT_NE(spaced.find(text), std::string::npos) << message;
      EXPECT_NE(message.find(file), std::string::npos) << message;
      ++errors;
      continue;
    }
    std::string dtype, shape, raw;
    fields >> dtype >> shape >> raw;
    DumpTensorData d;
    try {
      d = read_torch_pt((dir_ / file).string());
    } catch (const MsprobeDumpError& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    EXPECT_EQ(dtype_name(static_cast<DType>(d.dtype_id)), dtype);
    std::string got_shape;
    for (const std::int64_t s : d.shape) got_shape += (got_shape.empty() ? "" : "x") + std::to_string(s);
    EXPECT_EQ(got_shape.empty() ? "-" : got_shape, shape);
    std::int64_t numel = 1;
    for (const std::int64_t s : d.shape) numel *= s;
    EXPECT_EQ(d.numel, numel);
    const std::string expected = slurp(dir_ / raw);
    EXPECT_EQ(std::string(d.bytes.begin(), d.bytes.end()), expected) << "the elements differ from what torch wrote";
    ++ok;
  }
  EXPECT_GE(ok, 30);
  EXPECT_GE(errors, 5);
}

// ---- the checked-in files: every build reads them ----

TEST_F(TorchPtTest, CheckedInFloat32) {
  const DumpTensorData d = read_torch_pt((kCheckedIn / "f32_2x3.pt").string());
  EXPECT_EQ(d.dtype_id, static_cast<std::int32_t>(DType::kF32));
  EXPECT_EQ(d.shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(d.numel, 6);
  EXPECT_EQ(elements<float>(d), (std::vector<float>{0, 1, 2, 3, 4, 5}));
}

TEST_F(TorchPtTest, CheckedInTransposedBFloat16IsGathered) {
  const DumpTensorData d = read_torch_pt((kCheckedIn / "bf16_transposed.pt").string());
  EXPECT_EQ(d.dtype_id, static_cast<std::int32_t>(DType::kBF16));
  EXPECT_EQ(d.shape, (std::vector<std::int64_t>{4, 3}));
  std::vector<float> values;
  for (const std::uint16_t h : elements<std::uint16_t>(d)) {
    const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    values.push_back(f);
  }
  // arange(12).reshape(3, 4).t(): row i of the result is column i of the original.
  EXPECT_EQ(values, (std::vector<float>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
}

TEST_F(TorchPtTest, CheckedInLegacyFormat) {
  const DumpTensorData d = read_torch_pt((kCheckedIn / "legacy_i64.pt").string());
  EXPECT_EQ(d.dtype_id, static_cast<std::int32_t>(DType::kI64));
  EXPECT_EQ(d.shape, (std::vector<std::int64_t>{5}));
  EXPECT_EQ(elements<std::int64_t>(d), (std::vector<std::int64_t>{-2, -1, 0, 1, 2}));
}

// ---- bad input: a clear error naming the file, never a crash ----

TEST_F(TorchPtTest, EveryCutOfAFileIsAnErrorOrTheTensor) {
  for (const char* name : {"f32_2x3.pt", "bf16_transposed.pt", "legacy_i64.pt"}) {
    const std::string bytes = slurp(kCheckedIn / name);
    const fs::path cut = dir_ / name;
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      spit(cut, bytes.substr(0, n));
      const std::string message = error_of(cut);
      EXPECT_NE(message.find(cut.string()), std::string::npos) << name << " cut at " << n << ": " << message;
    }
  }
}

TEST_F(TorchPtTest, EveryFlippedByteIsAnErrorOrATensor) {
  for (const char* name : {"f32_2x3.pt", "bf16_transposed.pt", "legacy_i64.pt"}) {
    const std::string bytes = slurp(kCheckedIn / name);
    const fs::path bad = dir_ / name;
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      for (const unsigned char x : {0x01, 0x80, 0xFF}) {
        std::string flipped = bytes;
        flipped[i] = static_cast<char>(flipped[i] ^ x);
        spit(bad, flipped);
        try {
          const DumpTensorData d = read_torch_pt(bad.string());
          std::int64_t numel = 1;
          for (const std::int64_t s : d.shape) numel *= s;
          ASSERT_EQ(d.numel, numel);
          ASSERT_EQ(d.bytes.size(), static_cast<std::size_t>(numel) * dtype_size(static_cast<DType>(d.dtype_id)));
        } catch (const MsprobeDumpError&) {
        }
      }
    }
  }
}

TEST_F(TorchPtTest, NotATorchFile) {
  spit(dir_ / "empty.pt", "");
  EXPECT_NE(error_of(dir_ / "empty.pt").find("empty"), std::string::npos);
  spit(dir_ / "text.pt", "hello, world\n");
  EXPECT_NE(error_of(dir_ / "text.pt").find("not a torch.save file"), std::string::npos);
  EXPECT_NE(error_of(dir_ / "absent.pt").find("cannot open"), std::string::npos);
}

}  // namespace
}  // namespace npuscope::importer

// Reading torch.save files without Python (importer/src/torch_pt_file.cpp): the files PyTorch
// writes (Debian's torch, at test time, against what it wrote as raw bytes), the small ones checked
// into tests/data/torch_pt (always), and bad input built here (a clear error, never a crash).
#include <gtest/gtest.h>
#include <sys/mman.h>
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
#include "import_test_dir.h"
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

// A zip of stored members, as small as the format allows (no ZIP64, no data descriptors).
std::string stored_zip(const std::vector<std::pair<std::string, std::string>>& members) {
  const auto le = [](std::string& out, std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out += static_cast<char>(v >> (8 * i) & 0xFF);
  };
  std::string zip, central;
  for (const auto& [name, data] : members) {
    const std::size_t offset = zip.size();
    for (std::string* out : {&zip, &central}) {
      const bool c = out == &central;
      le(*out, c ? 0x02014b50 : 0x04034b50, 4);
      le(*out, 20, 2);
      if (c) le(*out, 20, 2);
      le(*out, 0, 4);  // flags, method
      le(*out, 0, 8);  // time, date, CRC-32
      le(*out, data.size(), 4);
      le(*out, data.size(), 4);
      le(*out, name.size(), 2);
      le(*out, 0, 2);
      if (c) le(*out, 0, 6);  // comment, disk, internal attributes
      if (c) le(*out, 0, 4);  // external attributes
      if (c) le(*out, offset, 4);
      *out += name;
      if (!c) zip += data;
    }
  }
  const std::size_t cd_offset = zip.size();
  zip += central;
  le(zip, 0x06054b50, 4);
  le(zip, 0, 4);
  le(zip, members.size(), 2);
  le(zip, members.size(), 2);
  le(zip, central.size(), 4);
  le(zip, cd_offset, 4);
  le(zip, 0, 2);
  return zip;
}

// Pickle opcodes for a value (LONG1 of 8 bytes), a string, a tuple of values.
std::string p_int(std::int64_t v) {
  std::string s = "\x8a\x08";
  for (int i = 0; i < 8; ++i) s += static_cast<char>(static_cast<std::uint64_t>(v) >> (8 * i) & 0xFF);
  return s;
}
std::string p_str(const std::string& v) {
  std::string s = "X";
  for (int i = 0; i < 4; ++i) s += static_cast<char>(v.size() >> (8 * i) & 0xFF);
  return s + v;
}
std::string p_tuple(const std::vector<std::int64_t>& v) {
  std::string s = "(";
  for (const std::int64_t x : v) s += p_int(x);
  return s + "t";
}

// torch.save's pickle of one tensor: _rebuild_tensor_v2(storage, offset, size, stride, False, OrderedDict()).
std::string tensor_pickle(std::int64_t storage_numel, std::int64_t offset, const std::vector<std::int64_t>& size,
                          const std::vector<std::int64_t>& stride,
                          const std::string& global = "torch._utils\n_rebuild_tensor_v2",
                          const std::string& storage = "FloatStorage", const std::string& more_args = "") {
  return std::string("\x80\x02") + "c" + global + "\n((" + p_str("storage") + "ctorch\n" + storage + "\n" + p_str("0") +
         p_str("npu:0") + p_int(storage_numel) + "tQ" + p_int(offset) + p_tuple(size) + p_tuple(stride) +
         "\x89"
         "ccollections\nOrderedDict\n)R" +
         more_args + "tR.";
}

// A torch.save-like file of that pickle over a float32 storage of `bytes` bytes.
std::string pt_file(const std::string& pickle, std::size_t bytes) {
  return stored_zip({{"x/data.pkl", pickle}, {"x/data/0", std::string(bytes, '\0')}, {"x/version", "3\n"}});
}

// Bad-input cases: each file's bytes and a part of the error it must end in (with the file's name).
struct BadCase {
  const char* what;
  std::string file;
  const char* message;
};

// A file in memory (memfd) for the tests that write one file per byte of their input: thousands of
// writes that a disk makes slow.
class MemFile {
 public:
  MemFile() : fd_(memfd_create("torch_pt_test", 0)) {}
  ~MemFile() { close(fd_); }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;
  fs::path path() const { return "/proc/self/fd/" + std::to_string(fd_); }
  void write(const std::string& bytes) const {
    ASSERT_EQ(ftruncate(fd_, 0), 0);
    ASSERT_EQ(pwrite(fd_, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
  }

 private:
  int fd_;
};

class TorchPtTest : public test::ImportTestDir {
 protected:
  void expect_errors(const std::vector<BadCase>& cases) {
    for (const BadCase& c : cases) {
      spit(dir_ / "bad.pt", c.file);
      const std::string message = error_of(dir_ / "bad.pt");
      EXPECT_NE(message.find(c.message), std::string::npos) << c.what << ": " << message;
      EXPECT_NE(message.find("bad.pt"), std::string::npos) << c.what << ": " << message;
    }
  }
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
    const MemFile cut;
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      cut.write(bytes.substr(0, n));
      const std::string message = error_of(cut.path());
      EXPECT_NE(message.find(cut.path().string()), std::string::npos) << name << " cut at " << n << ": " << message;
    }
  }
}

TEST_F(TorchPtTest, EveryFlippedByteIsAnErrorOrATensor) {
  for (const char* name : {"f32_2x3.pt", "bf16_transposed.pt", "legacy_i64.pt"}) {
    const std::string bytes = slurp(kCheckedIn / name);
    const MemFile bad;
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      for (const unsigned char x : {0x01, 0x80, 0xFF}) {
        std::string flipped = bytes;
        flipped[i] = static_cast<char>(flipped[i] ^ x);
        bad.write(flipped);
        try {
          const DumpTensorData d = read_torch_pt(bad.path().string());
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

TEST_F(TorchPtTest, AHandWrittenArchiveReads) {
  spit(dir_ / "ok.pt", pt_file(tensor_pickle(6, 1, {2, 2}, {1, 2}), 24));
  const DumpTensorData d = read_torch_pt((dir_ / "ok.pt").string());
  EXPECT_EQ(d.shape, (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(d.bytes.size(), 16u);
}

// What PyTorch 2.x and torch_npu write beside _rebuild_tensor_v2 (no such torch here: hand-built).
TEST_F(TorchPtTest, TorchTwoAndTorchNpuRebuilds) {
  // torch_npu's save: _rebuild_npu_tensor(..., hooks, npu_format) over the CPU copy of the data.
  spit(dir_ / "npu.pt", pt_file(tensor_pickle(6, 0, {2, 3}, {3, 1}, "torch_npu.utils.storage\n_rebuild_npu_tensor",
                                              "FloatStorage", "K\x02"),
                                24));
  const DumpTensorData npu = read_torch_pt((dir_ / "npu.pt").string());
  EXPECT_EQ(npu.shape, (std::vector<std::int64_t>{2, 3}));
  // 2.1+: _rebuild_tensor_v3(untyped storage (numel in bytes), ..., hooks, dtype).
  spit(dir_ / "v3.pt", pt_file(tensor_pickle(24, 1, {5}, {1}, "torch._utils\n_rebuild_tensor_v3", "UntypedStorage",
                                             "ctorch\nfloat32\n"),
                               24));
  const DumpTensorData v3 = read_torch_pt((dir_ / "v3.pt").string());
  EXPECT_EQ(v3.dtype_id, static_cast<std::int32_t>(DType::kF32));
  EXPECT_EQ(v3.numel, 5);
  spit(dir_ / "v3_past.pt", pt_file(tensor_pickle(24, 1, {6}, {1}, "torch._utils\n_rebuild_tensor_v3", "UntypedStorage",
                                                  "ctorch\nfloat32\n"),
                                    48));
  EXPECT_NE(error_of(dir_ / "v3_past.pt").find("reaching element 6 of a storage of 6"), std::string::npos);
  spit(dir_ / "u16.pt", pt_file(tensor_pickle(24, 0, {12}, {1}, "torch._utils\n_rebuild_tensor_v3", "UntypedStorage",
                                              "ctorch\nuint16\n"),
                                24));
  EXPECT_NE(error_of(dir_ / "u16.pt").find("a torch.uint16 tensor: npuscope has no such dtype"), std::string::npos);
  // A v2 tensor with metadata (the conjugate bit of a complex view) is not a real tensor.
  spit(dir_ / "conj.pt", pt_file(tensor_pickle(6, 0, {6}, {1}, "torch._utils\n_rebuild_tensor_v2", "FloatStorage",
                                               "}" + p_str("conj") + "\x88s"),
                                 24));
  EXPECT_NE(error_of(dir_ / "conj.pt").find("metadata"), std::string::npos);
}

TEST_F(TorchPtTest, BadGeometryIsAnError) {
  expect_errors({
      {"sizes overflow", pt_file(tensor_pickle(6, 0, {1LL << 62, 4}, {4, 1}), 24), "overflows"},
      {"offset past the storage", pt_file(tensor_pickle(6, 5, {3}, {1}), 24), "reaching element 7 of a storage of 6"},
      {"stride past the storage", pt_file(tensor_pickle(6, 0, {2, 3}, {4, 1}), 24), "reaching element 6"},
      {"storage cut short", pt_file(tensor_pickle(6, 0, {6}, {1}), 8), "cut short"},
      {"negative stride", pt_file(tensor_pickle(6, 5, {3}, {-1}), 24), "negative"},
      {"negative size", pt_file(tensor_pickle(6, 0, {-3}, {1}), 24), "negative"},
      {"negative offset", pt_file(tensor_pickle(6, -1, {3}, {1}), 24), "negative storage offset"},
      {"terabytes expanded", pt_file(tensor_pickle(1, 0, {1LL << 40}, {0}), 4), "expanded view"},
      {"sizes and strides disagree", pt_file(tensor_pickle(6, 0, {2, 3}, {1}), 24), "2 sizes and 1 strides"},
      {"no storage member", stored_zip({{"x/data.pkl", tensor_pickle(6, 0, {6}, {1})}}),
       "x/data/0 the pickle names is missing"},
      {"no data.pkl", stored_zip({{"x/version", "3"}}), "without <archive>/data.pkl"},
      {"two archives", stored_zip({{"x/data.pkl", ""}, {"y/data.pkl", ""}}), "several archives"},
      {"big-endian", stored_zip({{"x/data.pkl", tensor_pickle(6, 0, {6}, {1})}, {"x/byteorder", "big"}}),
       "byte order 'big'"},
  });
}

TEST_F(TorchPtTest, APickleRunsNothing) {
  const auto in_archive = [](const std::string& pickle) { return pt_file(pickle, 24); };  // otherwise right
  const std::string proto2 = "\x80\x02";
  expect_errors({
      {"os.system", in_archive(proto2 + "cos\nsystem\n" + p_str("touch /tmp/pwned") + "\x85R."),
       "refers to os.system: npuscope reads one dense tensor per file and runs no code"},
      {"builtins.eval as rebuild", in_archive(tensor_pickle(6, 0, {6}, {1}, "builtins\neval")), "builtins.eval"},
      {"a torch function called", in_archive(proto2 + "ctorch\nload\n" + p_str("x.pt") + "\x85R."), "calls torch.load"},
      {"STACK_GLOBAL", in_archive("\x80\x04" + p_str("subprocess") + p_str("Popen") + "\x93."), "subprocess.Popen"},
      {"INST", in_archive(proto2 + "(ios\nsystem\n."), "the opcode 0x69 ('i')"},
      {"cut inside an opcode", in_archive(proto2 + std::string("X\xff\xff\x00\x00", 5) + "ab"), "cut short"},
      {"no STOP", in_archive(proto2 + "N"), "cut short"},
      {"two values at STOP", in_archive(proto2 + "NN."), "STOP with 2 values"},
      {"pop of nothing", in_archive(proto2 + "0."), "pops an empty stack"},
      {"memo never written", in_archive(proto2 + "h" + "\x07."), "memo entry 7"},
      {"not a tensor", in_archive(proto2 + "}."), "holds a dict of 0, not a tensor"},
      {"a storage that is not a storage", in_archive(proto2 + "(" + p_str("storage") + "NNNNtQ."),
       "a storage of the type None"},
  });
  EXPECT_FALSE(fs::exists("/tmp/pwned"));
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

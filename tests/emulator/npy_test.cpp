// The .npy reader and writer: what numpy writes reads back (versions 1.0, 2.0, 3.0, any spacing and
// key order), a header too long for 1.0 is written as 2.0, and hostile files (huge headers, thousands
// of dims, negative or oversized dims, data of the wrong size) are ModelErrors naming the file and
// the problem, never crashes. Files are built byte by byte.
#include "npuscope/emulator/npy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "npuscope/emulator/onnx_model.h"

using namespace npuscope::emulator;
namespace fs = std::filesystem;

namespace {

// A .npy file: magic, version, the header length (16 bits for 1.0, 32 for 2.0 and 3.0), `dict`
// as it is (no padding added), then `data`.
std::string npy_file(int major, const std::string& dict, const std::string& data) {
  std::string f("\x93NUMPY", 6);
  f += static_cast<char>(major);
  f += '\0';
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i) f += static_cast<char>(dict.size() >> (8 * i) & 0xFF);
  return f + dict + data;
}

std::string floats(std::initializer_list<float> v) {
  std::string s(v.size() * 4, '\0');
  std::memcpy(s.data(), std::data(v), s.size());
  return s;
}

Tensor parse(const std::string& file) {
  return parse_npy({reinterpret_cast<const std::byte*>(file.data()), file.size()}, "x.npy");
}

// parse() must throw a ModelError naming x.npy and containing `what`.
void expect_refused(const std::string& file, const std::string& what) {
  try {
    parse(file);
    ADD_FAILURE() << "accepted; expected: " << what;
  } catch (const ModelError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("'x.npy' is not a usable .npy file: "), std::string::npos) << message;
    EXPECT_NE(message.find(what), std::string::npos) << message;
    EXPECT_LT(message.size(), 400u) << "messages quote hostile input in part only";
  }
}

std::string dims_of_one(std::size_t rank) {
  std::string shape = "(";
  for (std::size_t i = 0; i < rank; ++i) shape += "1, ";
  return shape + ")";
}

class NpyFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("npuscope_npy_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  void write(const std::string& name, const std::string& bytes) const {
    std::ofstream(path(name), std::ios::binary) << bytes;
  }
  fs::path dir_;
};

}  // namespace

TEST(Npy, ReadsWhatNumpyAndPeopleWrite) {
  const std::string data = floats({1, 2, 3, 4, 5, 6});
  for (const std::string dict : {
           "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }      \n",  // numpy.save
           "{\"shape\":(2,3),\"descr\":\"<f4\",\"fortran_order\":False}",          // other quotes and order
           "{ 'fortran_order' : False ,\n 'descr' : '=f4' , 'shape' : ( 2 , 3 , ) , }\n",
           "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }\n",  // Python 2
       }) {
    for (const int version : {1, 2, 3}) {
      const Tensor t = parse(npy_file(version, dict, data));
      EXPECT_EQ(t.dtype(), DType::kF32) << dict;
      EXPECT_EQ(t.shape(), (Shape{2, 3})) << dict;
      EXPECT_EQ(t.to_doubles(), (std::vector<double>{1, 2, 3, 4, 5, 6})) << dict;
    }
  }
  EXPECT_EQ(parse(npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3), }", floats({1, 2, 3}))).shape(),
            Shape{3});
  EXPECT_EQ(parse(npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", floats({7}))).shape(),
            Shape{});
  const Tensor empty = parse(npy_file(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (0, 5), }", ""));
  EXPECT_EQ(empty.shape(), (Shape{0, 5}));
  EXPECT_EQ(empty.dtype(), DType::kU8);
  // Fortran order is C order when at most one dim is above 1.
  EXPECT_EQ(
      parse(npy_file(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (1, 3), }", floats({1, 2, 3}))).to_doubles(),
      (std::vector<double>{1, 2, 3}));
}

TEST(Npy, HeadersTooLongForVersion1AreWrittenAsVersion2) {
  const std::string small = npy_header("<f4", {2, 3});
  EXPECT_EQ(small.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ(small.size() % 64, 0u);
  // 30,000 dims of 1 take ~90 KB: more than 1.0's 16-bit length.
  const Shape shape(30'000, 1);
  const std::string big = npy_header("<f4", shape);
  ASSERT_GT(big.size(), 65'536u);
  EXPECT_EQ(big.substr(0, 8), std::string("\x93NUMPY\x02\x00", 8));
  EXPECT_EQ(big.size() % 64, 0u);
  const std::size_t len = static_cast<std::uint8_t>(big[8]) |
                          static_cast<std::size_t>(static_cast<std::uint8_t>(big[9])) << 8 |
                          static_cast<std::size_t>(static_cast<std::uint8_t>(big[10])) << 16 |
                          static_cast<std::size_t>(static_cast<std::uint8_t>(big[11])) << 24;
  EXPECT_EQ(12 + len, big.size());
  EXPECT_EQ(big.back(), '\n');
  const Tensor t = parse(big + floats({42}));
  EXPECT_EQ(t.shape(), shape);
  EXPECT_EQ(t.to_doubles(), std::vector<double>{42});
}

TEST_F(NpyFileTest, SaveAndLoadRoundTripAHugeRank) {
  const Shape shape(30'000, 1);
  const Tensor x = Tensor::from_floats(std::vector<float>{-1.5f}, shape, DType::kF32);
  save_npy(path("big.npy"), x);
  const Tensor y = load_npy(path("big.npy"));
  EXPECT_EQ(y.shape(), shape);
  EXPECT_EQ(y.to_doubles(), std::vector<double>{-1.5});
}

TEST(Npy, HostileHeadersAreErrorsNotCrashes) {
  // std::regex recursed per character here and overflowed the stack.
  expect_refused(
      npy_file(2, "{'descr': '" + std::string(30'000, 'f') + "', 'fortran_order': False, 'shape': (), }", ""),
      "dtype 'ffffffffffffffffffffffffffffffffffffffff...' is not supported");
  const Tensor wide = parse(
      npy_file(2, "{'descr': '<f4', 'fortran_order': False, 'shape': " + dims_of_one(20'000) + ", }", floats({3})));
  EXPECT_EQ(wide.shape().size(), 20'000u);
  expect_refused(npy_file(2, "{'descr': '<f4', 'fortran_order': False, 'shape': " + dims_of_one(kMaxNpyRank + 1) + "}",
                          floats({3})),
                 "the shape has more than 65536 dims");
  expect_refused(
      npy_file(2, "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::string(40'000, '(') + "}", ""),
      "expected a dimension");
  std::string huge_len = npy_file(2, "{}", "");
  huge_len[11] = '\x7f';  // a 2 GB header
  expect_refused(huge_len, "more than the 16777216 this reader accepts");
}

TEST(Npy, BadDimsAreErrorsNamingTheDim) {
  const auto with_shape = [](const std::string& shape, const std::string& data) {
    return npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }", data);
  };
  expect_refused(with_shape("(-8, 64)", std::string(8 * 64 * 4, '\0')),
                 "dim 0 of the shape is -8: dims cannot be negative");
  expect_refused(with_shape("(2, 12345678901234567890)", ""), "dim 1 of the shape (12345678901234567890) is too large");
  expect_refused(with_shape("(4294967296, 4294967296)", ""), "has more elements than fit in memory");
  expect_refused(with_shape("(4611686018427387904,)", ""), "has more bytes than fit in memory");
  expect_refused(with_shape("(2, 3)", floats({1, 2, 3, 4, 5})),
                 "it holds 20 bytes of data, but shape [2, 3] of f32 needs 24 (truncated?)");
  expect_refused(with_shape("(2, 3)", floats({1, 2, 3, 4, 5, 6, 7})), "needs 24 (bytes left over)");
  expect_refused(with_shape("(1000000000, 1000000000)", ""), "needs 4000000000000000000");
}

TEST(Npy, MalformedHeadersSayWhatIsWrong) {
  const std::string data = floats({1, 2});
  const auto dict = [&](const std::string& d) { return npy_file(1, d, data); };
  expect_refused(dict("{'descr': '<f4', 'shape': (2,), }"), "the header lacks 'fortran_order'");
  expect_refused(dict("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}"), "unknown key 'extra'");
  expect_refused(dict("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}"),
                 "repeated key 'descr'");
  expect_refused(dict("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}"), "structured dtypes");
  expect_refused(dict("{'descr': '>f4', 'fortran_order': False, 'shape': (2,)}"), "big-endian data ('>f4')");
  expect_refused(dict("{'descr': '<c8', 'fortran_order': False, 'shape': (2,)}"), "dtype '<c8' is not supported");
  expect_refused(npy_file(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", floats({1, 2, 3, 4})),
                 "Fortran order is not supported");
  expect_refused(dict("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,)}"), "expected True or False");
  expect_refused(dict("{'descr' '<f4', 'fortran_order': False, 'shape': (2,)}"), "expected ':'");
  expect_refused(dict("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} junk"), "text after the dict");
  expect_refused(dict("{'descr': 'a\\'b', 'fortran_order': False, 'shape': (2,)}"), "escapes in strings");
  expect_refused(dict("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)"), "expected '}'");
  expect_refused("\x93NUMPX\x01\x00", "no NUMPY magic");
  expect_refused(std::string("\x93NUMPY\x04\x00\x10\x00\x00\x00", 12), "format version 4.0 is not supported");
  expect_refused(std::string("\x93NUMPY\x01\x00\x10", 9), "truncated header");
  expect_refused(std::string("\x93NUMPY\x01\x00\x50\x00{'descr'", 17),
                 "truncated header (90 bytes announced, 17 present)");
}

TEST_F(NpyFileTest, FilesReadLikeBuffers) {
  const std::string file = npy_file(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }\n",
                                    std::string("\x05\0\0\0\0\0\0\0\xff\xff\xff\xff\xff\xff\xff\xff", 16));
  write("a.npy", file);
  const Tensor t = load_npy(path("a.npy"));
  EXPECT_EQ(t.dtype(), DType::kI64);
  EXPECT_EQ(t.to_doubles(), (std::vector<double>{5, -1}));
  EXPECT_EQ(parse(file).to_doubles(), t.to_doubles());

  write("short.npy", file.substr(0, file.size() - 1));
  try {
    load_npy(path("short.npy"));
    ADD_FAILURE() << "accepted a truncated file";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("'" + path("short.npy") + "' is not a usable .npy file: it holds 15 bytes"),
              std::string::npos)
        << e.what();
  }
  write("tiny.npy", "\x93NU");
  EXPECT_THROW(load_npy(path("tiny.npy")), ModelError);
  write("cut.npy", file.substr(0, 30));
  try {
    load_npy(path("cut.npy"));
    ADD_FAILURE() << "accepted a cut header";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("truncated header"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_npy(path("missing.npy")), ModelError);
}

// The .npy format: magic "\x93NUMPY", version, a little-endian header length, a Python dict literal
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded to 64 bytes, then raw data.
#include "npuscope/emulator/npy.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <regex>

#include "npuscope/emulator/onnx_model.h"

namespace npuscope::emulator {
namespace {

// The dtypes a .npy file holds as they are (bf16 is written widened to f32: not one of them).
constexpr bool stored_natively(const DTypeInfo& d) {
  return static_cast<std::size_t>(d.npy_descr.back() - '0') == d.size;
}

[[noreturn]] void bad(const std::string& path, const std::string& what) {
  throw ModelError("'" + path + "' is not a usable .npy file: " + what);
}

}  // namespace

Tensor load_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ModelError("cannot open '" + path + "'");
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) bad(path, "no NUMPY magic");
  const int major = static_cast<unsigned char>(magic[6]);
  std::uint32_t header_len = 0;
  unsigned char len_bytes[4] = {0, 0, 0, 0};
  if (!in.read(reinterpret_cast<char*>(len_bytes), major == 1 ? 2 : 4)) bad(path, "truncated header");
  header_len = len_bytes[0] | len_bytes[1] << 8 | static_cast<std::uint32_t>(len_bytes[2]) << 16 |
               static_cast<std::uint32_t>(len_bytes[3]) << 24;
  if (header_len > (1u << 20)) bad(path, "header too long");
  std::string header(header_len, '\0');
  if (!in.read(header.data(), header_len)) bad(path, "truncated header");

  std::smatch m;
  if (!std::regex_search(header, m, std::regex("'descr':\\s*'([^']*)'"))) bad(path, "no descr");
  const std::string descr = m[1];
  const DTypeInfo* found = nullptr;
  std::string supported;
  for (const DTypeInfo& d : kDTypes) {
    if (!stored_natively(d)) continue;
    supported += (supported.empty() ? "" : ", ") + std::string(d.npy_descr.substr(1));
    if (descr == d.npy_descr || (descr.size() == 3 && descr[0] == '=' && descr.substr(1) == d.npy_descr.substr(1)))
      found = &d;
  }
  if (found == nullptr) bad(path, "dtype '" + descr + "' is not supported (" + supported + ", little-endian)");
  if (std::regex_search(header, std::regex("'fortran_order':\\s*True"))) bad(path, "Fortran order is not supported");
  if (!std::regex_search(header, m, std::regex("'shape':\\s*\\(([^)]*)\\)"))) bad(path, "no shape");
  Shape shape;
  const std::string dims = m[1];
  const std::regex number("\\d+");
  for (std::sregex_iterator it(dims.begin(), dims.end(), number), end; it != end; ++it) {
    shape.push_back(std::stoll(it->str()));
  }
  Tensor t = Tensor::empty(shape, found->dtype);
  if (!in.read(reinterpret_cast<char*>(t.raw_data()), static_cast<std::streamsize>(t.nbytes()))) {
    bad(path, "data is shorter than shape " + shape_str(shape) + " needs");
  }
  return t;
}

void save_npy(const std::string& path, const Tensor& tensor) {
  Tensor t = tensor.device().is_npu() ? tensor.cpu() : tensor;
  if (t.dtype() == DType::kBF16) {
    const auto values = t.to_floats();
    t = Tensor::from_floats(values, t.shape(), DType::kF32);
  }
  const std::string descr(dtype_info(t.dtype()).npy_descr);
  std::string shape = "(";
  for (std::size_t i = 0; i < t.shape().size(); ++i)
    shape += std::to_string(t.shape()[i]) + (t.shape().size() == 1 ? "," : i + 1 < t.shape().size() ? ", " : "");
  shape += ")";
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  const std::size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out) throw InvalidArgument("cannot write '" + path + "'");
  const unsigned char preamble[10] = {0x93,
                                      'N',
                                      'U',
                                      'M',
                                      'P',
                                      'Y',
                                      1,
                                      0,
                                      static_cast<unsigned char>(header.size() & 0xff),
                                      static_cast<unsigned char>(header.size() >> 8)};
  out.write(reinterpret_cast<const char*>(preamble), 10);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(t.raw_data()), static_cast<std::streamsize>(t.nbytes()));
  if (!out) throw InvalidArgument("writing '" + path + "' failed (disk full?)");
}

}  // namespace npuscope::emulator

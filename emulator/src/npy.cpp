// The .npy format: magic "\x93NUMPY", version, a little-endian header length (16 bits in 1.0, 32 in
// 2.0 and 3.0), a Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded to 64 bytes, then raw data. See Note [Reading .npy headers] in npy.h.
#include "npuscope/emulator/npy.h"

#include <cstring>
#include <fstream>
#include <vector>

#include "npuscope/emulator/onnx_model.h"

namespace npuscope::emulator {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMaxV1HeaderBytes = 0xFFFF;

// The dtypes a .npy file holds as they are (bf16 is written widened to f32: not one of them).
constexpr bool stored_natively(const DTypeInfo& d) {
  return static_cast<std::size_t>(d.npy_descr.back() - '0') == d.size;
}

[[noreturn]] void bad(const std::string& name, const std::string& what) {
  throw ModelError("'" + name + "' is not a usable .npy file: " + what);
}

// At most `max` characters of `text`, for messages about hostile input.
std::string clip(std::string_view text, std::size_t max = 40) {
  return text.size() <= max ? std::string(text) : std::string(text.substr(0, max)) + "...";
}

std::string describe(const Shape& shape) {
  return shape.size() <= 8 ? shape_str(shape) : "of rank " + std::to_string(shape.size());
}

// The header dict, scanned once from left to right: no recursion, no backtracking.
class DictScanner {
 public:
  DictScanner(std::string_view text, const std::string& name) : text_(text), name_(name) {}

  void skip_space() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }
  char peek() {
    skip_space();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  bool eat(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "'");
  }
  bool at_end() {
    skip_space();
    return pos_ == text_.size();
  }

  std::string_view string_literal() {
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail("expected a quoted string");
    const std::size_t start = ++pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\') fail("escapes in strings are not supported");
      if (text_[pos_] == '\n') break;
      ++pos_;
    }
    if (pos_ >= text_.size() || text_[pos_] != quote) fail("unterminated string");
    return text_.substr(start, pos_++ - start);
  }

  bool boolean() {
    skip_space();
    for (const auto& [word, value] : {std::pair{std::string_view("True"), true}, {"False", false}}) {
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    }
    fail("expected True or False");
  }

  // "(2, 3)", "(3,)", "()", "(3)", Python 2's "(3L,)".
  Shape dims() {
    expect('(');
    Shape shape;
    while (!eat(')')) {
      if (shape.size() == kMaxNpyRank) bad(name_, "the shape has more than " + std::to_string(kMaxNpyRank) + " dims");
      shape.push_back(dim(shape.size()));
      if (!eat(',')) {
        expect(')');
        break;
      }
    }
    return shape;
  }

  [[noreturn]] void fail(const std::string& what) {
    bad(name_, "bad header (" + what + " at byte " + std::to_string(pos_) + " of the dict '" + clip(text_, 60) + "')");
  }

 private:
  std::int64_t dim(std::size_t index) {
    skip_space();
    const std::size_t start = pos_;
    const bool negative = pos_ < text_.size() && text_[pos_] == '-';
    if (negative) ++pos_;
    std::int64_t value = 0;
    bool overflow = false;
    const std::size_t digits = pos_;
    for (; pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9'; ++pos_) {
      overflow = overflow || __builtin_mul_overflow(value, 10, &value) ||
                 __builtin_add_overflow(value, text_[pos_] - '0', &value);
    }
    if (pos_ == digits) fail("expected a dimension");
    const std::string shown = clip(text_.substr(start, pos_ - start), 30);
    if (negative)
      bad(name_, "dim " + std::to_string(index) + " of the shape is " + shown + ": dims cannot be negative");
    if (overflow) bad(name_, "dim " + std::to_string(index) + " of the shape (" + shown + ") is too large");
    if (pos_ < text_.size() && (text_[pos_] == 'L' || text_[pos_] == 'l')) ++pos_;
    return value;
  }

  std::string_view text_;
  const std::string& name_;
  std::size_t pos_ = 0;
};

// '<f4', '=f4', '|u1', ... -> the dtype; big-endian, structured and unknown types are refused.
DType dtype_of(std::string_view descr, const std::string& name) {
  std::string supported;
  for (const DTypeInfo& d : kDTypes) {
    if (!stored_natively(d)) continue;
    supported += (supported.empty() ? "" : ", ") + std::string(d.npy_descr.substr(1));
    if (descr.size() != 3 || descr.substr(1) != d.npy_descr.substr(1)) continue;
    if (descr[0] == '<' || descr[0] == '=' || descr[0] == '|' || (descr[0] == '>' && d.size == 1)) return d.dtype;
    if (descr[0] == '>')
      bad(name, "big-endian data ('" + std::string(descr) + "') is not supported: save it little-endian");
  }
  bad(name, "dtype '" + clip(descr) + "' is not supported (" + supported + ", little-endian)");
}

std::uint32_t little_endian(std::span<const std::byte> bytes) {
  std::uint32_t v = 0;
  for (std::size_t i = bytes.size(); i-- > 0;) v = v << 8 | std::to_integer<std::uint32_t>(bytes[i]);
  return v;
}

}  // namespace

std::size_t npy_header_bytes_needed(std::span<const std::byte> prefix, const std::string& name) {
  if (prefix.size() < 8 || std::memcmp(prefix.data(), kMagic, 6) != 0) bad(name, "no NUMPY magic");
  const auto major = std::to_integer<int>(prefix[6]), minor = std::to_integer<int>(prefix[7]);
  if (major < 1 || major > 3 || minor != 0) {
    bad(name, "format version " + std::to_string(major) + "." + std::to_string(minor) +
                  " is not supported (1.0, 2.0 and 3.0 are)");
  }
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  if (prefix.size() < 8 + len_bytes) bad(name, "truncated header");
  const std::size_t header_len = little_endian(prefix.subspan(8, len_bytes));
  if (header_len > kMaxNpyHeaderBytes) {
    bad(name, "the header is " + std::to_string(header_len) + " bytes long, more than the " +
                  std::to_string(kMaxNpyHeaderBytes) + " this reader accepts");
  }
  return 8 + len_bytes + header_len;
}

NpyHeader parse_npy_header(std::span<const std::byte> prefix, const std::string& name) {
  NpyHeader h;
  h.data_offset = npy_header_bytes_needed(prefix, name);
  if (prefix.size() < h.data_offset) {
    bad(name, "truncated header (" + std::to_string(h.data_offset) + " bytes announced, " +
                  std::to_string(prefix.size()) + " present)");
  }
  const std::size_t preamble = std::to_integer<int>(prefix[6]) == 1 ? 10 : 12;
  const std::string_view text(reinterpret_cast<const char*>(prefix.data()) + preamble, h.data_offset - preamble);
  DictScanner s(text, name);
  bool seen_descr = false, seen_order = false, seen_shape = false, fortran = false;
  s.expect('{');
  while (!s.eat('}')) {
    const std::string_view key = s.string_literal();
    s.expect(':');
    bool* seen = nullptr;
    if (key == "descr") {
      if (s.peek() == '[') bad(name, "structured dtypes (a descr list) are not supported");
      h.dtype = dtype_of(s.string_literal(), name);
      seen = &seen_descr;
    } else if (key == "fortran_order") {
      fortran = s.boolean();
      seen = &seen_order;
    } else if (key == "shape") {
      h.shape = s.dims();
      seen = &seen_shape;
    } else {
      s.fail("unknown key '" + clip(key) + "'");
    }
    if (*seen) s.fail("repeated key '" + std::string(key) + "'");
    *seen = true;
    if (!s.eat(',')) {
      s.expect('}');
      break;
    }
  }
  if (!s.at_end()) s.fail("text after the dict");
  if (!seen_descr || !seen_order || !seen_shape) {
    bad(name, std::string("the header lacks '") +
                  (!seen_descr   ? "descr"
                   : !seen_order ? "fortran_order"
                                 : "shape") +
                  "'");
  }
  std::size_t numel = 1, big_dims = 0;
  for (const std::int64_t d : h.shape) {
    if (__builtin_mul_overflow(numel, static_cast<std::size_t>(d), &numel)) {
      bad(name, "the shape " + describe(h.shape) + " has more elements than fit in memory");
    }
    big_dims += d > 1 ? 1 : 0;
  }
  if (fortran && big_dims > 1) {
    bad(name, "Fortran order is not supported: save a C-ordered array (numpy.ascontiguousarray)");
  }
  if (__builtin_mul_overflow(numel, dtype_size(h.dtype), &h.data_bytes)) {
    bad(name, "the shape " + describe(h.shape) + " has more bytes than fit in memory");
  }
  return h;
}

namespace {

void check_data_size(const NpyHeader& h, std::size_t file_bytes, const std::string& name) {
  const std::size_t have = file_bytes - h.data_offset;
  if (have == h.data_bytes) return;
  bad(name, "it holds " + std::to_string(have) + " bytes of data, but shape " + describe(h.shape) + " of " +
                std::string(dtype_name(h.dtype)) + " needs " + std::to_string(h.data_bytes) +
                (have < h.data_bytes ? " (truncated?)" : " (bytes left over)"));
}

}  // namespace

Tensor parse_npy(std::span<const std::byte> file, const std::string& name) {
  const NpyHeader h = parse_npy_header(file, name);
  check_data_size(h, file.size(), name);
  Tensor t = Tensor::empty(h.shape, h.dtype);
  if (h.data_bytes != 0) std::memcpy(t.raw_data(), file.data() + h.data_offset, h.data_bytes);
  return t;
}

Tensor load_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw ModelError("cannot open '" + path + "'");
  const auto end = in.tellg();
  if (end < 0) throw ModelError("cannot read '" + path + "'");
  const auto file_bytes = static_cast<std::size_t>(end);
  in.seekg(0);
  std::vector<std::byte> header(std::min(file_bytes, kNpyPreambleBytes));
  if (!in.read(reinterpret_cast<char*>(header.data()), static_cast<std::streamsize>(header.size())))
    throw ModelError("cannot read '" + path + "'");
  const std::size_t needed = npy_header_bytes_needed(header, path);
  if (needed > file_bytes) {
    bad(path, "truncated header (" + std::to_string(needed) + " bytes announced, the file has " +
                  std::to_string(file_bytes) + ")");
  }
  const std::size_t have = header.size();
  header.resize(needed);
  if (needed > have &&
      !in.read(reinterpret_cast<char*>(header.data() + have), static_cast<std::streamsize>(needed - have)))
    throw ModelError("cannot read '" + path + "'");
  const NpyHeader h = parse_npy_header(header, path);
  check_data_size(h, file_bytes, path);
  Tensor t = Tensor::empty(h.shape, h.dtype);
  in.seekg(static_cast<std::streamoff>(h.data_offset));
  if (!in.read(reinterpret_cast<char*>(t.raw_data()), static_cast<std::streamsize>(h.data_bytes)))
    throw ModelError("cannot read the data of '" + path + "'");
  return t;
}

std::string npy_header(std::string_view descr, const Shape& shape) {
  std::string dict = "{'descr': '";
  dict += descr;
  dict += "', 'fortran_order': False, 'shape': (";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) dict += ", ";
    dict += std::to_string(shape[i]);
  }
  dict += shape.size() == 1 ? ",), }" : "), }";
  // numpy.save's rule: version 1.0 unless the padded header needs more than its 16-bit length.
  for (const int version : {1, 2}) {
    const std::size_t preamble = version == 1 ? 10 : 12;
    const std::size_t padded = dict.size() + (64 - (preamble + dict.size() + 1) % 64) % 64 + 1;
    if (version == 1 && padded > kMaxV1HeaderBytes) continue;
    std::string out(kMagic, 6);
    out += static_cast<char>(version);
    out += '\0';
    for (std::size_t i = 0; i < preamble - 8; ++i) out += static_cast<char>(padded >> (8 * i) & 0xFF);
    out += dict;
    out.append(padded - dict.size() - 1, ' ');
    out += '\n';
    return out;
  }
  return {};  // not reached: version 2.0 always fits
}

void save_npy(const std::string& path, const Tensor& tensor) {
  Tensor t = tensor.device().is_npu() ? tensor.cpu() : tensor;
  if (t.dtype() == DType::kBF16) {
    const auto values = t.to_floats();
    t = Tensor::from_floats(values, t.shape(), DType::kF32);
  }
  const std::string header = npy_header(dtype_info(t.dtype()).npy_descr, t.shape());
  std::ofstream out(path, std::ios::binary);
  if (!out) throw InvalidArgument("cannot write '" + path + "'");
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(t.raw_data()), static_cast<std::streamsize>(t.nbytes()));
  if (!out) throw InvalidArgument("writing '" + path + "' failed (disk full?)");
}

}  // namespace npuscope::emulator

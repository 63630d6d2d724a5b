// NumPy .npy headers (format versions 1-3, little-endian, C order), read and written once for every
// layer: the emulator's `exec` inputs and outputs (emulator/npy.h), the collector's `export --npy`
// and `export --msprobe` files, the importer's msprobe tensor dumps. Header-only, beside the dtype
// vocabulary it maps descrs to, so that each of them includes it without an arrow between them.
//
// Note [Reading .npy headers]
// The header is a Python dict literal, {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), },
// which NumPy reads with ast.literal_eval. It is parsed here by a small hand-written scanner that
// loops over the characters once and never recurses, so a hostile header costs time linear in its
// length and constant stack (std::regex recursed per character and overflowed the stack on a 30 KB
// descr). It accepts what NumPy writes and what a person might: either quote, any spacing, the keys
// in any order, trailing commas, Python 2's `3L`. It refuses anything else: unknown, missing or
// repeated keys, structured dtypes, negative or oversized dimensions. Limits: the header is at
// most kMaxHeaderBytes and the shape has at most kMaxRank dimensions; the data must be exactly
// the shape's size (a file with bytes missing or left over is refused, not read in part).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "npuscope/runtime_hooks/vocabulary.h"

namespace npuscope::npy {

// A file that is no usable .npy: "'NAME' is not a usable .npy file: WHAT". Each layer turns it
// into its own error (the emulator's ModelError, the importer's MsprobeDumpError).
class NpyFormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Version 1.0 stores the header length in 16 bits; 2.0 and 3.0 in 32.
inline constexpr std::size_t kMaxHeaderBytes = std::size_t{1} << 24;
inline constexpr std::size_t kMaxRank = std::size_t{1} << 16;
inline constexpr std::size_t kPreambleBytes = 12;  // magic, version, header length (at most)

struct Header {
  DType dtype = DType::kF32;
  std::vector<std::int64_t> shape;
  std::size_t data_offset = 0;  // where the elements start in the file
  std::size_t data_bytes = 0;   // numel * element size (checked not to overflow)
};

namespace detail {

inline constexpr char kMagic[] = "\x93NUMPY";
inline constexpr std::size_t kMaxV1HeaderBytes = 0xFFFF;

[[noreturn]] inline void bad(const std::string& name, const std::string& what) {
  throw NpyFormatError("'" + name + "' is not a usable .npy file: " + what);
}

// At most `max` characters of `text`, for messages about hostile input.
inline std::string clip(std::string_view text, std::size_t max = 40) {
  return text.size() <= max ? std::string(text) : std::string(text.substr(0, max)) + "...";
}

inline std::string describe(const std::vector<std::int64_t>& shape) {
  if (shape.size() > 8) return "of rank " + std::to_string(shape.size());
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// The dtypes a .npy file holds as they are (bf16 is written widened to f32: not one of them).
constexpr bool stored_natively(const DTypeInfo& d) {
  return static_cast<std::size_t>(d.npy_descr.back() - '0') == d.size;
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
  std::vector<std::int64_t> dims() {
    expect('(');
    std::vector<std::int64_t> shape;
    while (!eat(')')) {
      if (shape.size() == kMaxRank) bad(name_, "the shape has more than " + std::to_string(kMaxRank) + " dims");
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
inline DType dtype_of(std::string_view descr, const std::string& name) {
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

inline std::uint32_t little_endian(std::span<const std::byte> bytes) {
  std::uint32_t v = 0;
  for (std::size_t i = bytes.size(); i-- > 0;) v = v << 8 | std::to_integer<std::uint32_t>(bytes[i]);
  return v;
}

}  // namespace detail

// How many bytes of the file parse_header needs, from its first kPreambleBytes (the magic, the
// version and the header length). `name` names the file in errors.
inline std::size_t header_bytes_needed(std::span<const std::byte> prefix, const std::string& name) {
  using detail::bad;
  if (prefix.size() < 8 || std::memcmp(prefix.data(), detail::kMagic, 6) != 0) bad(name, "no NUMPY magic");
  const auto major = std::to_integer<int>(prefix[6]), minor = std::to_integer<int>(prefix[7]);
  if (major < 1 || major > 3 || minor != 0) {
    bad(name, "format version " + std::to_string(major) + "." + std::to_string(minor) +
                  " is not supported (1.0, 2.0 and 3.0 are)");
  }
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  if (prefix.size() < 8 + len_bytes) bad(name, "truncated header");
  const std::size_t header_len = detail::little_endian(prefix.subspan(8, len_bytes));
  if (header_len > kMaxHeaderBytes) {
    bad(name, "the header is " + std::to_string(header_len) + " bytes long, more than the " +
                  std::to_string(kMaxHeaderBytes) + " this reader accepts");
  }
  return 8 + len_bytes + header_len;
}

// The header of a .npy file whose first bytes are `prefix` (it must hold the whole header:
// header_bytes_needed() says how many bytes that is). Throws NpyFormatError for anything unreadable
// or unsupported (big-endian, Fortran order, object arrays, dtypes npuscope lacks).
inline Header parse_header(std::span<const std::byte> prefix, const std::string& name) {
  using detail::bad;
  Header h;
  h.data_offset = header_bytes_needed(prefix, name);
  if (prefix.size() < h.data_offset) {
    bad(name, "truncated header (" + std::to_string(h.data_offset) + " bytes announced, " +
                  std::to_string(prefix.size()) + " present)");
  }
  const std::size_t preamble = std::to_integer<int>(prefix[6]) == 1 ? 10 : 12;
  const std::string_view text(reinterpret_cast<const char*>(prefix.data()) + preamble, h.data_offset - preamble);
  detail::DictScanner s(text, name);
  bool seen_descr = false, seen_order = false, seen_shape = false, fortran = false;
  s.expect('{');
  while (!s.eat('}')) {
    const std::string_view key = s.string_literal();
    s.expect(':');
    bool* seen = nullptr;
    if (key == "descr") {
      if (s.peek() == '[') bad(name, "structured dtypes (a descr list) are not supported");
      h.dtype = detail::dtype_of(s.string_literal(), name);
      seen = &seen_descr;
    } else if (key == "fortran_order") {
      fortran = s.boolean();
      seen = &seen_order;
    } else if (key == "shape") {
      h.shape = s.dims();
      seen = &seen_shape;
    } else {
      s.fail("unknown key '" + detail::clip(key) + "'");
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
      bad(name, "the shape " + detail::describe(h.shape) + " has more elements than fit in memory");
    }
    big_dims += d > 1 ? 1 : 0;
  }
  if (fortran && big_dims > 1) {
    bad(name, "Fortran order is not supported: save a C-ordered array (numpy.ascontiguousarray)");
  }
  if (__builtin_mul_overflow(numel, dtype_size(h.dtype), &h.data_bytes)) {
    bad(name, "the shape " + detail::describe(h.shape) + " has more bytes than fit in memory");
  }
  return h;
}

// Throws NpyFormatError unless the file's `file_bytes` hold exactly the header's data.
inline void check_data_size(const Header& h, std::size_t file_bytes, const std::string& name) {
  const std::size_t have = file_bytes - h.data_offset;
  if (have == h.data_bytes) return;
  detail::bad(name, "it holds " + std::to_string(have) + " bytes of data, but shape " + detail::describe(h.shape) +
                        " of " + std::string(dtype_name(h.dtype)) + " needs " + std::to_string(h.data_bytes) +
                        (have < h.data_bytes ? " (truncated?)" : " (bytes left over)"));
}

// The header (magic to padding) of an array of `descr` and `shape`: version 1.0 when it fits,
// else 2.0, as numpy.save does (a shape of thousands of dims does not fit 1.0); the data then
// starts at a multiple of 64 bytes.
inline std::string header(std::string_view descr, std::span<const std::int64_t> shape) {
  std::string dict = "{'descr': '";
  dict += descr;
  dict += "', 'fortran_order': False, 'shape': (";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) dict += ", ";
    dict += std::to_string(shape[i]);
  }
  dict += shape.size() == 1 ? ",), }" : "), }";
  for (const int version : {1, 2}) {
    const std::size_t preamble = version == 1 ? 10 : 12;
    const std::size_t padded = dict.size() + (64 - (preamble + dict.size() + 1) % 64) % 64 + 1;
    if (version == 1 && padded > detail::kMaxV1HeaderBytes) continue;
    std::string out(detail::kMagic, 6);
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

}  // namespace npuscope::npy

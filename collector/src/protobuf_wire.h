// Protocol buffers' wire format, written straight into a byte string: what the Perfetto export
// needs (varints, fixed64, strings, nested messages), without a protobuf library in the collector
// (it is linked into the injection library, which every profiled program loads).
//
// Note [Nested message lengths]
// A nested message is preceded by its length, unknown until the message is written. Instead of
// building it apart and copying it, begin() reserves four bytes and end() writes the length there
// as a four-byte varint, padded with continuation bits (0x80 | ...), as Perfetto's own protozero
// writer does: the protobuf decoders accept a varint of any length up to ten bytes, and Perfetto's
// trace processor reads the traces its own SDK writes so. A message of 2^28 bytes or more does not
// fit; the export keeps each packet small (one event or track each).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace npuscope::collector::protobuf_wire {

enum class WireType : std::uint8_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2 };

inline void append_varint(std::string& out, std::uint64_t v) {
  char bytes[10];
  int n = 0;
  while (v >= 0x80) {
    bytes[n++] = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  bytes[n++] = static_cast<char>(v);
  out.append(bytes, static_cast<std::size_t>(n));
}

inline void append_tag(std::string& out, std::uint32_t field, WireType type) {
  append_varint(out, (std::uint64_t{field} << 3) | static_cast<std::uint64_t>(type));
}

// int32, int64, uint32, uint64, bool and enum fields: a negative value is its 64-bit two's
// complement (ten bytes), as protobuf encodes a negative int32 (not zigzag: no sint fields here).
inline void varint_field(std::string& out, std::uint32_t field, std::int64_t v) {
  append_tag(out, field, WireType::kVarint);
  append_varint(out, static_cast<std::uint64_t>(v));
}

inline void fixed64_field(std::string& out, std::uint32_t field, std::uint64_t v) {
  append_tag(out, field, WireType::kFixed64);
  char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((v >> (8 * i)) & 0xff);  // little-endian
  out.append(bytes, 8);
}

inline void double_field(std::string& out, std::uint32_t field, double v) {
  std::uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  fixed64_field(out, field, bits);
}

inline void string_field(std::string& out, std::uint32_t field, std::string_view s) {
  append_tag(out, field, WireType::kLengthDelimited);
  append_varint(out, s.size());
  out.append(s);
}

// A nested message: begin() writes its tag and reserves its length, end() fills the length in
// (Note [Nested message lengths]).
class Nested {
 public:
  static Nested begin(std::string& out, std::uint32_t field) {
    append_tag(out, field, WireType::kLengthDelimited);
    const std::size_t at = out.size();
    out.append(kLengthBytes, '\0');
    return Nested(at);
  }
  void end(std::string& out) const {
    const std::size_t length = out.size() - at_ - kLengthBytes;
    for (std::size_t i = 0; i < kLengthBytes; ++i) {
      const auto byte = static_cast<std::uint8_t>((length >> (7 * i)) & 0x7f);
      out[at_ + i] = static_cast<char>(i + 1 < kLengthBytes ? byte | 0x80 : byte);
    }
  }
  static constexpr std::size_t kMaxLength = (std::size_t{1} << 28) - 1;

 private:
  static constexpr std::size_t kLengthBytes = 4;
  explicit Nested(std::size_t at) : at_(at) {}
  std::size_t at_;
};

}  // namespace npuscope::collector::protobuf_wire

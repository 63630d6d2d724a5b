// The spool's frames and the field-by-field row encoding (Note [Trace spool] in trace_spool.h).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "schema.h"

namespace npuscope::collector::spool {

// The last byte is the format's version: 2 numbers the row frames after NPUSCOPE_TRACE_ROWS.
inline constexpr char kHeader[16] = {'N', 'P', 'U', 'S', 'C', 'O', 'P', 'E', '-', 'S', 'P', 'O', 'O', 'L', 0, 2};

enum class FrameKind : std::uint32_t {
  kString = 1,   // i64 id, text
  kMeta = 2,     // key, value (text)
  kStat = 3,     // name (text), i64 value
  kEnd = 11,     // the writer finalized: the spool is complete
  kLayout = 12,  // first frame: the sizes of the rows stored as their in-memory struct
  // Then one kind per table (Note [Trace rows]): u32 count, the rows. kRows + TraceRows::index_of<Row>().
  kRows = 32,
};
template <class Row>
constexpr FrameKind rows_frame() {
  return static_cast<FrameKind>(static_cast<std::uint32_t>(FrameKind::kRows) + TraceRows::index_of<Row>());
}

// Rows with only numbers are stored as their struct, bytes as in memory (one memcpy each way): the
// spool is read back by the same build, and the layout frame checks it.
template <class Row>
inline constexpr bool kStoredAsStruct = std::is_trivially_copyable_v<Row>;

// The size of each row type, by table: the same build wrote the spool if they are the same.
struct Layout {
  std::uint32_t sizes[TraceRows::size] = {};
  static Layout of_this_build() {
    Layout l;
    std::size_t i = 0;
    TraceRows::for_each_type([&]<class Row>() { l.sizes[i++] = sizeof(Row); });
    return l;
  }
  bool operator==(const Layout&) const = default;
};

struct FrameHeader {
  std::uint32_t kind;
  std::uint32_t bytes;  // payload bytes after this header
};
// A frame bigger than this is corruption, not data (a tensor dump is capped well below).
inline constexpr std::uint32_t kMaxFrameBytes = 1u << 31;

// Appends values to a byte buffer.
class Encoder {
 public:
  explicit Encoder(std::vector<char>& out) : out_(out) {}
  template <class T>
  void pod(const T& v) {
    const std::size_t at = out_.size();
    out_.resize(at + sizeof(T));
    std::memcpy(out_.data() + at, &v, sizeof(T));
  }
  void raw(const void* data, std::size_t n) {
    const auto* p = static_cast<const char*>(data);
    out_.insert(out_.end(), p, p + n);
  }
  void bytes(const void* data, std::size_t n) {  // length-prefixed
    pod(static_cast<std::uint64_t>(n));
    raw(data, n);
  }
  void text(const std::string& s) { bytes(s.data(), s.size()); }

  template <class Row>
  void row(const Row& r) {
    if constexpr (kStoredAsStruct<Row>) {
      pod(r);
      return;
    }
    for (const schema::Field<Row>& field : schema::table_for<Row>().fields) {
      switch (field.index()) {
        case 0: pod(r.*(*std::get_if<0>(&field))); break;
        case 1: pod(r.*(*std::get_if<1>(&field))); break;
        case 2: pod(r.*(*std::get_if<2>(&field))); break;
        case 3: text(r.*(*std::get_if<3>(&field))); break;
        default: {
          const std::vector<std::uint8_t>& blob = r.*(*std::get_if<4>(&field));
          bytes(blob.data(), blob.size());
        }
      }
    }
  }

 private:
  std::vector<char>& out_;
};

// Reads values back from one frame's payload; ok() turns false (and stays) on reading past its end.
class Decoder {
 public:
  Decoder(const char* data, std::size_t size) : p_(data), end_(data + size) {}
  bool ok() const { return ok_; }
  bool at_end() const { return p_ == end_; }
  std::size_t remaining() const { return static_cast<std::size_t>(end_ - p_); }

  // The fewest bytes one encoded Row takes (texts and blobs empty): how many rows a frame can hold.
  template <class Row>
  static std::size_t min_row_bytes() {
    if constexpr (kStoredAsStruct<Row>) {
      return sizeof(Row);
    } else {
      std::size_t n = 0;
      for (const schema::Field<Row>& field : schema::table_for<Row>().fields) n += field.index() == 0 ? 4 : 8;
      return n > 0 ? n : 1;
    }
  }

  template <class T>
  T pod() {
    T v{};
    if (!take(sizeof(T))) return v;
    std::memcpy(&v, p_ - sizeof(T), sizeof(T));
    return v;
  }
  template <class Container>
  void bytes(Container& out) {
    const auto n = pod<std::uint64_t>();
    if (!ok_ || n > static_cast<std::uint64_t>(end_ - p_)) {
      ok_ = false;
      return;
    }
    out.assign(p_, p_ + n);
    p_ += n;
  }
  std::string text() {
    std::string s;
    bytes(s);
    return s;
  }

  template <class Row>
  void row(Row& r) {
    if constexpr (kStoredAsStruct<Row>) {
      r = pod<Row>();
      return;
    }
    for (const schema::Field<Row>& field : schema::table_for<Row>().fields) {
      switch (field.index()) {
        case 0: r.*(*std::get_if<0>(&field)) = pod<std::int32_t>(); break;
        case 1: r.*(*std::get_if<1>(&field)) = pod<std::int64_t>(); break;
        case 2: r.*(*std::get_if<2>(&field)) = pod<double>(); break;
        case 3: bytes(r.*(*std::get_if<3>(&field))); break;
        default: bytes(r.*(*std::get_if<4>(&field)));
      }
    }
  }

 private:
  bool take(std::size_t n) {
    if (!ok_ || n > static_cast<std::size_t>(end_ - p_)) {
      ok_ = false;
      return false;
    }
    p_ += n;
    return true;
  }

  const char* p_;
  const char* end_;
  bool ok_ = true;
};

}  // namespace npuscope::collector::spool

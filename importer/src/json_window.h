// A window onto a JSON file read through zlib: the bytes not yet parsed, in one buffer with room
// before them (for the '[' the fast path wraps a batch in) and after them (simdjson's padding).
// See Note [Streaming Chrome events] in chrome_events.h.
#pragma once

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace npuscope::importer {

class JsonWindow {
 public:
  static constexpr std::size_t kBefore = 1;   // a '[' written before a batch
  static constexpr std::size_t kAfter = 128;  // a ']' and simdjson's padding (SIMDJSON_PADDING = 64)

  explicit JsonWindow(const std::string& path);
  ~JsonWindow();
  JsonWindow(const JsonWindow&) = delete;
  JsonWindow& operator=(const JsonWindow&) = delete;

  // The unparsed bytes [data(), data() + size()); writable, with kBefore bytes before and kAfter
  // after that the caller may overwrite.
  char* data() { return buf_.data() + kBefore + pos_; }
  std::size_t size() const { return end_ - pos_; }
  void consume(std::size_t n) { pos_ += n; }

  // Reads more: at least `chunk` bytes more room; false at the end of the file (or of the part of
  // a cut-short .gz that could be read). Invalidates data().
  bool read_more();
  bool at_eof() const { return eof_; }
  bool cut_short() const { return cut_short_; }
  // The offset in the (uncompressed) file of data()[i].
  std::int64_t offset(std::size_t i) const { return consumed_ + static_cast<std::int64_t>(pos_ + i); }
  std::int64_t bytes_read() const { return consumed_ + static_cast<std::int64_t>(end_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  gzFile file_;
  std::vector<char> buf_;
  std::size_t pos_ = 0, end_ = 0;  // of the unparsed bytes, after kBefore
  std::int64_t consumed_ = 0;      // bytes of the file before buf_[kBefore]
  bool eof_ = false, cut_short_ = false;
};

}  // namespace npuscope::importer

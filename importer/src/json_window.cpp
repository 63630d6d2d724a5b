#include "json_window.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include "npuscope/importer/import.h"

namespace npuscope::importer {
namespace {

// Read at a time: large enough that a batch's fixed costs vanish, small enough to stay in cache.
constexpr std::size_t kChunk = std::size_t{1} << 20;

}  // namespace

JsonWindow::JsonWindow(const std::string& path) : path_(path), file_(gzopen(path.c_str(), "rb")) {
  if (file_ == nullptr) throw ImportError(path + ": cannot open: " + std::strerror(errno));
  gzbuffer(file_, static_cast<unsigned>(kChunk));
}

JsonWindow::~JsonWindow() { gzclose(file_); }

bool JsonWindow::read_more() {
  if (eof_) return false;
  // Keep the unparsed tail, at the front; room for at least as much again (a value larger than a
  // chunk doubles the window until it fits).
  const std::size_t kept = end_ - pos_;
  if (pos_ > 0) std::memmove(buf_.data() + kBefore, buf_.data() + kBefore + pos_, kept);
  consumed_ += static_cast<std::int64_t>(pos_);
  pos_ = 0;
  end_ = kept;
  const std::size_t room = std::max(kChunk, kept);
  if (buf_.size() < kBefore + kept + room + kAfter) buf_.resize(kBefore + kept + room + kAfter);
  const auto want = static_cast<unsigned>(std::min<std::size_t>(room, std::numeric_limits<int>::max() / 2));
  const int n = gzread(file_, buf_.data() + kBefore + end_, want);
  if (n < 0) {
    int err = 0;
    const char* msg = gzerror(file_, &err);
    // A .gz cut short reads as a data/buffer error at its end: what was read stands.
    if (err == Z_BUF_ERROR || err == Z_DATA_ERROR) {
      cut_short_ = eof_ = true;
      return false;
    }
    throw ImportError(path_ + ": cannot read: " + msg);
  }
  if (n == 0) {
    eof_ = true;
    int err = 0;
    gzerror(file_, &err);
    if (err == Z_BUF_ERROR) cut_short_ = true;  // a gzip member without its end
    return false;
  }
  end_ += static_cast<std::size_t>(n);
  return true;
}

}  // namespace npuscope::importer

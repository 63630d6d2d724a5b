// The spool writer: Note [Trace spool] in trace_spool.h.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <string>
#include <variant>
#include <vector>

#include "npuscope/collector/trace_spool.h"
#include "output_file.h"
#include "spool_format.h"
#include "spool_lock.h"
#include "string_ids.h"

namespace npuscope::collector {
namespace {

using spool::FrameKind;

// Buffered bytes handed to the kernel at once (and at every commit).
constexpr std::size_t kFlushBytes = std::size_t{1} << 20;

class SpoolWriter final : public TraceWriter {
 public:
  SpoolWriter(const std::string& path, const WriterOptions& options)
      : path_(path), interval_(options.commit_interval), clock_(options.clock) {
    open_and_lock();
    buffer_.reserve(2 * kFlushBytes);
    buffer_.insert(buffer_.end(), std::begin(spool::kHeader), std::end(spool::kHeader));
    const std::size_t at = begin_frame(FrameKind::kLayout);
    spool::Encoder(buffer_).pod(spool::Layout::of_this_build());
    end_frame(at);
    flush();
    last_commit_ = clock_();
  }

  ~SpoolWriter() override {
    try {  // a writer dropped without finalize() keeps what it has; the spool stays incomplete
      if (!finalized_) flush();
    } catch (const TraceError&) {
    }
    if (fd_ >= 0) ::close(fd_);
  }

  StringId intern(std::string_view s) override {
    const auto [id, is_new] = strings_.intern(s);
    if (!is_new) return id;
    check_writable();
    const std::size_t at = begin_frame(FrameKind::kString);
    spool::Encoder e(buffer_);
    e.pod(id);
    e.bytes(s.data(), s.size());
    end_frame(at);
    return id;
  }

  void set_meta(std::string_view key, std::string_view value) override {
    check_writable();
    const std::size_t at = begin_frame(FrameKind::kMeta);
    spool::Encoder e(buffer_);
    e.bytes(key.data(), key.size());
    e.bytes(value.data(), value.size());
    end_frame(at);
  }

  using TraceWriter::set_stat;
  void set_stat(std::string_view name, std::int64_t value) override {
    check_writable();
    const std::size_t at = begin_frame(FrameKind::kStat);
    spool::Encoder e(buffer_);
    e.bytes(name.data(), name.size());
    e.pod(value);
    end_frame(at);
  }

  void add_rows(const RowSpan& rows) override {
    std::visit([&](auto span) { add_span(span); }, rows);
  }

  void commit() override {
    check_writable();
    flush();
    last_commit_ = clock_();
  }

  void finalize(TraceStatus status) override {
    if (finalized_) return;
    if (status == TraceStatus::kComplete) end_frame(begin_frame(FrameKind::kEnd));
    flush();
    finalized_ = true;
    ::close(fd_);
    fd_ = -1;
  }

  std::int64_t rows_written() const override { return rows_written_; }

 private:
  template <class Row>
  void add_span(std::span<const Row> rows) {
    check_writable();
    if (rows.empty()) return;
    const std::size_t at = begin_frame(spool::rows_frame<Row>());
    spool::Encoder e(buffer_);
    e.pod(static_cast<std::uint32_t>(rows.size()));
    if constexpr (spool::kStoredAsStruct<Row>) {
      e.raw(rows.data(), rows.size_bytes());  // the rows' bytes as they are in memory: one copy
    } else {
      for (const Row& r : rows) e.row(r);
    }
    end_frame(at);
    after_add(rows.size());
  }

  std::size_t begin_frame(FrameKind kind) {
    const std::size_t at = buffer_.size();
    spool::Encoder(buffer_).pod(spool::FrameHeader{static_cast<std::uint32_t>(kind), 0});
    return at;
  }

  void end_frame(std::size_t at) {
    const std::size_t payload = buffer_.size() - at - sizeof(spool::FrameHeader);
    if (payload >= spool::kMaxFrameBytes) {
      buffer_.resize(at);
      throw TraceError(path_ + ": a spool frame of " + std::to_string(payload) + " bytes is too big (limit 2 GiB)");
    }
    const auto bytes = static_cast<std::uint32_t>(payload);
    std::memcpy(buffer_.data() + at + offsetof(spool::FrameHeader, bytes), &bytes, sizeof bytes);
    if (buffer_.size() >= kFlushBytes) flush();
  }

  void after_add(std::size_t rows) {
    rows_written_ += static_cast<std::int64_t>(rows);
    if (clock_() - last_commit_ >= interval_) commit();
  }

  // Creates the spool, or opens the empty one npuscope run made, and holds its writer and owner
  // locks until finalize (Note [Spool ownership] in trace_spool.h). Read-write: locks need both.
  void open_and_lock() {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd_ < 0 && errno == EEXIST) fd_ = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
    if (fd_ < 0) throw TraceError("cannot create the spool " + path_ + ": " + std::strerror(errno));
    try {
      if (!spool::lock(fd_, spool::LockByte::kWriter, spool::LockMode::kExclusive, false, path_)) {
        throw TraceError("cannot write the spool " + path_ + ": another process is writing it");
      }
      struct stat st {};
      if (::fstat(fd_, &st) != 0 || st.st_size != 0) {
        throw TraceError(path_ + " already exists: remove it, choose another output file, or overwrite it");
      }
      // Waits only for a recovery that found the file empty and is letting it go.
      spool::lock(fd_, spool::LockByte::kOwner, spool::LockMode::kShared, true, path_);
    } catch (...) {
      ::close(fd_);
      fd_ = -1;
      throw;
    }
  }

  // Whole frames only ever reach the file in order; a killed process tears at most the last one.
  void flush() {
    const char* p = buffer_.data();
    std::size_t left = buffer_.size();
    while (left > 0) {
      const ssize_t n = ::write(fd_, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const int err = errno;
        buffer_.erase(buffer_.begin(), buffer_.begin() + (p - buffer_.data()));  // never written twice
        throw TraceError("cannot write the spool " + path_ + ": " + std::strerror(err));
      }
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    buffer_.clear();
  }

  void check_writable() const {
    if (finalized_) throw TraceError(path_ + ": the spool is finalized: nothing more can be written to it");
  }

  std::string path_;
  int fd_ = -1;
  std::vector<char> buffer_;
  StringIds strings_;
  std::chrono::milliseconds interval_;
  std::chrono::steady_clock::time_point (*clock_)();
  std::chrono::steady_clock::time_point last_commit_;
  std::int64_t rows_written_ = 0;
  bool finalized_ = false;
};

}  // namespace

std::unique_ptr<TraceWriter> create_spool_writer(const std::string& path, const WriterOptions& options) {
  struct stat st {};
  const bool made_by_owner = ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0;
  if (!made_by_owner) prepare_output_file(path, options.overwrite);
  return std::make_unique<SpoolWriter>(path, options);
}

}  // namespace npuscope::collector

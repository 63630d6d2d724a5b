// Replaying a spool into a trace database: Note [Trace spool] in trace_spool.h.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "npuscope/collector/trace_spool.h"
#include "spool_format.h"

namespace npuscope::collector {
namespace {

using spool::FrameKind;

constexpr std::size_t kReadBytes = std::size_t{4} << 20;
// How long a follower sleeps at the end of the data before looking again.
constexpr auto kFollowPoll = std::chrono::milliseconds(5);

// The spool file read in big pieces; whole frames are consumed from the front.
class SpoolFile {
 public:
  explicit SpoolFile(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw TraceError("cannot open the spool " + path + ": " + std::strerror(errno));
  }
  ~SpoolFile() {
    if (mapped_ != nullptr) ::munmap(mapped_, end_);
    ::close(fd_);
  }
  SpoolFile(const SpoolFile&) = delete;
  SpoolFile& operator=(const SpoolFile&) = delete;

  // Note [Mapping a finished spool]
  // A spool nobody writes any more (the workload exited: npuscope run's conversion on a machine
  // without cores to spare, or a recovery) is mapped rather than read: reading copied its every
  // byte from the page cache, 15 % of converting a launch-heavy workload's spool. The consumed part
  // is unmapped from the process every kReleaseBytes (the pages stay in the page cache), so a spool
  // of many GB of tensors takes no more resident memory mapped than read. False (and nothing
  // changes): empty, or the kernel refused the mapping; the file is then read.
  bool map_whole() {
    struct stat st {};
    if (mapped_ != nullptr || end_ != 0 || ::fstat(fd_, &st) != 0 || st.st_size <= 0) return false;
    void* p = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd_, 0);
    if (p == MAP_FAILED) return false;
    ::madvise(p, static_cast<std::size_t>(st.st_size), MADV_SEQUENTIAL);
    mapped_ = static_cast<char*>(p);
    end_ = static_cast<std::size_t>(st.st_size);
    return true;
  }

  // Reads what the file has beyond the buffer; false when nothing new came (always, mapped).
  bool read_more() {
    if (mapped_ != nullptr) return false;
    if (begin_ > 0) {  // keep the unconsumed tail only
      std::memmove(data_.get(), data_.get() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    if (capacity_ - end_ < kReadBytes) grow(end_ + kReadBytes);  // for big frames only
    ssize_t n;
    do {
      n = ::read(fd_, data_.get() + end_, capacity_ - end_);
    } while (n < 0 && errno == EINTR);
    if (n < 0) throw TraceError("cannot read the spool " + path_ + ": " + std::strerror(errno));
    end_ += static_cast<std::size_t>(n);
    return n > 0;
  }

  std::size_t available() const { return end_ - begin_; }
  const char* front() const { return (mapped_ != nullptr ? mapped_ : data_.get()) + begin_; }
  void consume(std::size_t n) {
    begin_ += n;
    offset_ += static_cast<std::int64_t>(n);
    if (mapped_ != nullptr && begin_ - released_ >= kReleaseBytes) {
      const std::size_t until = begin_ & ~std::size_t{4095};
      ::madvise(mapped_ + released_, until - released_, MADV_DONTNEED);
      released_ = until;
    }
  }
  std::int64_t offset() const { return offset_; }  // of front() in the file
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  // Never zeroed: read() fills what is used. Zeroing and regrowing a std::vector by each read's
  // size took 3 % of a conversion's time in page faults and memset.
  void grow(std::size_t at_least) {
    const std::size_t capacity = std::max(at_least, 2 * capacity_);
    auto bigger = std::make_unique_for_overwrite<char[]>(capacity);
    if (end_ > 0) std::memcpy(bigger.get(), data_.get(), end_);
    data_ = std::move(bigger);
    capacity_ = capacity;
  }

  static constexpr std::size_t kReleaseBytes = std::size_t{64} << 20;

  std::unique_ptr<char[]> data_;  // [begin_, end_) read and not consumed yet
  std::size_t capacity_ = 0, begin_ = 0, end_ = 0;
  char* mapped_ = nullptr;    // map_whole(): the whole file, [begin_, end_) not consumed yet
  std::size_t released_ = 0;  // mapped bytes below it were consumed and dropped
  std::int64_t offset_ = 0;
};

class Replayer {
 public:
  Replayer(SpoolFile& file, TraceWriter& out) : file_(file), out_(out) {}

  // Applies one frame; false once the writer's end frame came.
  bool apply(FrameKind kind, spool::Decoder& d) {
    switch (kind) {
      case FrameKind::kString: {
        const auto id = d.pod<std::int64_t>();
        const std::string text = d.text();
        if (d.ok() && out_.intern(text) != id) corrupt("string ids out of order");
        break;
      }
      case FrameKind::kMeta: {
        const std::string key = d.text(), value = d.text();
        if (d.ok()) out_.set_meta(key, value);
        break;
      }
      case FrameKind::kStat: {
        const std::string name = d.text();
        const auto value = d.pod<std::int64_t>();
        if (d.ok()) out_.set_stat(name, value);
        break;
      }
      case FrameKind::kEnd: return false;
      case FrameKind::kLayout:
        if (d.pod<spool::Layout>() != spool::Layout::of_this_build()) {
          throw TraceError(file_.path() +
                           " was written by another build of npuscope: convert it with the build that "
                           "wrote it");
        }
        break;
      default: apply_rows(kind, d);
    }
    if (!d.ok() || !d.at_end()) corrupt("a frame's contents do not match its size");
    return true;
  }

  [[noreturn]] void corrupt(const std::string& what) const {
    throw TraceError("the spool " + file_.path() + " is corrupt at byte " + std::to_string(file_.offset()) + ": " +
                     what);
  }

  SpoolReplay result;

 private:
  // A row frame: its rows to the writer (Note [Trace rows]).
  void apply_rows(FrameKind kind, spool::Decoder& d) {
    const auto table = static_cast<std::uint32_t>(kind) - static_cast<std::uint32_t>(FrameKind::kRows);
    if (static_cast<std::uint32_t>(kind) < static_cast<std::uint32_t>(FrameKind::kRows) || table >= TraceRows::size)
      corrupt("unknown frame kind " + std::to_string(static_cast<std::uint32_t>(kind)));
    std::uint32_t i = 0;
    TraceRows::for_each_type([&]<class Row>() {
      if (i++ != table) return;
      const std::span<const Row> rows = decode<Row>(d);
      out_.add(rows);
      if constexpr (std::is_same_v<Row, TaskRow>) summarise(rows);
    });
  }

  // The rows of a row frame, decoded into a reused vector.
  template <class Row>
  std::span<const Row> decode(spool::Decoder& d) {
    auto& v = std::get<std::vector<Row>>(buffers_);
    const auto count = d.pod<std::uint32_t>();
    if (!d.ok()) return {};
    // Checked before anything is allocated: a damaged count (0xffffffff) must not become a 400 GB
    // vector; a frame holds at most remaining / min_row_bytes rows.
    if (count > d.remaining() / spool::Decoder::min_row_bytes<Row>()) {
      corrupt("a frame claims " + std::to_string(count) + " rows in " + std::to_string(d.remaining()) + " bytes");
    }
    v.resize(count);
    for (Row& r : v) {
      d.row(r);
      if (!d.ok()) return {};
    }
    result.rows += count;
    return v;
  }

  void summarise(std::span<const TaskRow> tasks) {
    TaskSummary& s = result.tasks;
    for (const TaskRow& t : tasks) {
      s.first_start_ns = s.tasks == 0 ? t.start_ns : std::min(s.first_start_ns, t.start_ns);
      s.last_end_ns = s.tasks == 0 ? t.end_ns : std::max(s.last_end_ns, t.end_ns);
      s.overflows += t.overflow;
      ++s.tasks;
    }
  }

  SpoolFile& file_;
  TraceWriter& out_;
  // Row frames decode into these, reused frame after frame.
  TraceRows::Each<std::tuple, std::vector> buffers_;
};

// Waits (while the writer may still be writing) until `bytes` bytes are buffered; false if they
// never come.
bool wait_for(SpoolFile& file, std::size_t bytes, const std::function<bool()>& more_may_come) {
  while (file.available() < bytes) {
    if (file.read_more()) continue;
    // Asked before the last look: data written before the writer stopped is not missed.
    const bool writer_alive = more_may_come && more_may_come();
    if (file.read_more()) continue;
    if (!writer_alive) return false;
    std::this_thread::sleep_for(kFollowPoll);
  }
  return true;
}

}  // namespace

SpoolReplay replay_spool(const std::string& path, TraceWriter& out, const std::function<bool()>& more_may_come) {
  SpoolFile file(path);
  if (!more_may_come || !more_may_come()) file.map_whole();  // Note [Mapping a finished spool]
  if (!wait_for(file, sizeof spool::kHeader, more_may_come) ||
      std::memcmp(file.front(), spool::kHeader, sizeof spool::kHeader - 1) != 0) {
    throw TraceError(path + " is not an npuscope spool (a raw trace that `npuscope run` converts)");
  }
  if (file.front()[sizeof spool::kHeader - 1] != spool::kHeader[sizeof spool::kHeader - 1]) {
    throw TraceError(path + " is a spool of another npuscope version: convert it with the version that wrote it");
  }
  file.consume(sizeof spool::kHeader);
  Replayer replayer(file, out);
  bool complete = false;
  while (wait_for(file, sizeof(spool::FrameHeader), more_may_come)) {
    spool::FrameHeader header;
    std::memcpy(&header, file.front(), sizeof header);
    if (header.bytes >= spool::kMaxFrameBytes)
      replayer.corrupt("a frame claims " + std::to_string(header.bytes) + " bytes");
    if (!wait_for(file, sizeof header + header.bytes, more_may_come)) break;  // torn by a kill
    spool::Decoder decoder(file.front() + sizeof header, header.bytes);
    if (!replayer.apply(static_cast<FrameKind>(header.kind), decoder)) {
      complete = true;
      file.consume(sizeof header + header.bytes);
      break;
    }
    file.consume(sizeof header + header.bytes);
  }
  SpoolReplay result = replayer.result;
  result.complete = complete;
  result.torn_bytes = complete ? 0 : static_cast<std::int64_t>(file.available());
  if (result.torn_bytes > 0) out.set_stat(StatId::kSpoolTornBytes, result.torn_bytes);
  out.finalize(complete ? TraceStatus::kComplete : TraceStatus::kIncomplete);
  return result;
}

}  // namespace npuscope::collector

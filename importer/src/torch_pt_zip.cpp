// The container of a torch.save file: see torch_pt_zip.h.
#include "torch_pt_zip.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "npuscope/collector/msprobe_dump.h"

namespace npuscope::importer::torch_pt {
namespace {

constexpr std::uint32_t kLocalHeader = 0x04034b50;     // "PK\3\4"
constexpr std::uint32_t kCentralHeader = 0x02014b50;   // "PK\1\2"
constexpr std::uint32_t kEndRecord = 0x06054b50;       // "PK\5\6"
constexpr std::uint32_t kZip64EndRecord = 0x06064b50;  // "PK\6\6"
constexpr std::uint32_t kZip64Locator = 0x07064b50;    // "PK\6\7"
constexpr std::uint64_t kEndRecordSize = 22, kLocatorSize = 20, kZip64EndSize = 56;
constexpr std::uint64_t kMaxComment = 0xFFFF;
// A torch.save archive has a handful of members: a central directory past this is not one.
constexpr std::uint64_t kMaxCentralDirectory = 16u << 20;
// Deflate expands at most about 1032:1; an entry claiming more is lying about its size.
constexpr std::uint64_t kMaxDeflateRatio = 1100;

std::uint64_t le(const char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(p[i]);
  return v;
}

// A cursor over a record held in memory; reading past its end is the archive's error.
struct Cursor {
  const PtFile& file;
  std::string_view bytes;
  std::string_view what;
  std::size_t pos = 0;

  std::uint64_t take(int n) {
    if (bytes.size() - pos < static_cast<std::size_t>(n)) file.fail(std::string(what) + " is cut short");
    const std::uint64_t v = le(bytes.data() + pos, n);
    pos += n;
    return v;
  }
  std::string_view take_bytes(std::uint64_t n) {
    if (bytes.size() - pos < n) file.fail(std::string(what) + " is cut short");
    const std::string_view v = bytes.substr(pos, n);
    pos += n;
    return v;
  }
};

// The ZIP64 extended information field of a central header: the 64-bit values of the fields that
// hold 0xFFFFFFFF, in the order size, compressed size, header offset.
void apply_zip64_extra(const PtFile& file, std::string_view extra, ZipEntry& e, bool size64, bool csize64,
                       bool offset64) {
  Cursor c{file, extra, "a ZIP64 extra field"};
  while (c.bytes.size() - c.pos >= 4) {
    const std::uint64_t id = c.take(2), len = c.take(2);
    Cursor field{file, c.take_bytes(len), "a ZIP64 extra field"};
    if (id != 0x0001) continue;
    if (size64) e.size = field.take(8);
    if (csize64) e.compressed_size = field.take(8);
    if (offset64) e.header_offset = field.take(8);
    return;
  }
  if (size64 || csize64 || offset64)
    file.fail("the member " + e.name + " has 32-bit fields of 0xFFFFFFFF but no ZIP64 extra field");
}

}  // namespace

PtFile::PtFile(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) fail(std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) fail("not a regular file");
  size_ = static_cast<std::uint64_t>(st.st_size);
}

PtFile::~PtFile() {
  if (fd_ >= 0) ::close(fd_);
}

void PtFile::fail(std::string_view message) const {
  throw collector::MsprobeDumpError(path_ + ": " + std::string(message));
}

void PtFile::read(std::uint64_t offset, void* dst, std::uint64_t n, std::string_view what) const {
  if (offset > size_ || n > size_ - offset) fail(std::string(what) + " is cut short (the file ends first)");
  auto* out = static_cast<char*>(dst);
  while (n > 0) {
    // Linux moves at most about 2 GiB per call.
    const ssize_t got = ::pread(fd_, out, std::min<std::uint64_t>(n, 1u << 30), static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail(std::string("cannot read ") + std::string(what) + ": " + std::strerror(errno));
    if (got == 0) fail(std::string(what) + " is cut short (the file shrank while read)");
    out += got;
    offset += static_cast<std::uint64_t>(got);
    n -= static_cast<std::uint64_t>(got);
  }
}

std::string PtFile::read(std::uint64_t offset, std::uint64_t n, std::string_view what) const {
  if (offset > size_ || n > size_ - offset) fail(std::string(what) + " is cut short (the file ends first)");
  std::string s(n, '\0');
  read(offset, s.data(), n, what);
  return s;
}

ZipArchive::ZipArchive(const PtFile& file) : file_(file) {
  // The end record is in the last 22 + 65535 bytes (after it, only its comment).
  const std::uint64_t tail_size = std::min(file.size(), kEndRecordSize + kMaxComment + kLocatorSize);
  const std::uint64_t tail_start = file.size() - tail_size;
  const std::string tail = file.read(tail_start, tail_size, "the zip end record");
  std::uint64_t end = std::string::npos;
  for (std::uint64_t i = tail_size >= kEndRecordSize ? tail_size - kEndRecordSize + 1 : 0; i-- > 0;) {
    if (le(tail.data() + i, 4) == kEndRecord && i + kEndRecordSize + le(tail.data() + i + 20, 2) <= tail_size) {
      end = i;
      break;
    }
  }
  if (end == std::string::npos) file.fail("not a zip archive (no end of central directory record)");
  std::uint64_t count = le(tail.data() + end + 10, 2);
  std::uint64_t cd_size = le(tail.data() + end + 12, 4);
  std::uint64_t cd_offset = le(tail.data() + end + 16, 4);
  // ZIP64: a locator just before the end record points to the 64-bit end record (torch.save writes
  // one always; a reader must use it when the 16- and 32-bit fields are saturated).
  if (end >= kLocatorSize && le(tail.data() + end - kLocatorSize, 4) == kZip64Locator) {
    const std::uint64_t at = le(tail.data() + end - kLocatorSize + 8, 8);
    const std::string rec = file.read(at, kZip64EndSize, "the ZIP64 end record");
    if (le(rec.data(), 4) != kZip64EndRecord) file.fail("the ZIP64 end record is not where its locator says");
    count = le(rec.data() + 32, 8);
    cd_size = le(rec.data() + 40, 8);
    cd_offset = le(rec.data() + 48, 8);
  }
  read_central_directory(cd_offset, cd_size, count);
}

void ZipArchive::read_central_directory(std::uint64_t offset, std::uint64_t size, std::uint64_t count) {
  if (size > kMaxCentralDirectory) file_.fail("the zip central directory is too large for a torch.save file");
  if (count > size / 46) file_.fail("the zip central directory is cut short (fewer bytes than its members need)");
  const std::string cd = file_.read(offset, size, "the zip central directory");
  Cursor c{file_, cd, "the zip central directory"};
  entries_.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    if (c.take(4) != kCentralHeader) file_.fail("the zip central directory has a bad member header");
    c.take(4);  // versions
    const std::uint64_t flags = c.take(2);
    ZipEntry e;
    e.method = static_cast<std::uint16_t>(c.take(2));
    c.take(8);  // time, date, CRC-32
    e.compressed_size = c.take(4);
    e.size = c.take(4);
    const std::uint64_t name_len = c.take(2), extra_len = c.take(2), comment_len = c.take(2);
    c.take(8);  // disk, attributes
    e.header_offset = c.take(4);
    e.name = std::string(c.take_bytes(name_len));
    apply_zip64_extra(file_, c.take_bytes(extra_len), e, e.size == 0xFFFFFFFF, e.compressed_size == 0xFFFFFFFF,
                      e.header_offset == 0xFFFFFFFF);
    c.take_bytes(comment_len);
    if ((flags & 1) != 0) file_.fail("the member " + e.name + " is encrypted");
    entries_.push_back(std::move(e));
  }
}

const ZipEntry* ZipArchive::find(std::string_view name) const {
  for (const ZipEntry& e : entries_) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

std::uint64_t ZipArchive::data_offset(const ZipEntry& e) const {
  // The local header's own name and extra lengths count (torch.save pads its extra field so that
  // the data starts at a multiple of 64 bytes; the central copy of the extra field differs).
  const std::string h = file_.read(e.header_offset, 30, "the local header of " + e.name);
  if (le(h.data(), 4) != kLocalHeader)
    file_.fail("the member " + e.name + " has no local header where the directory says");
  const std::uint64_t data = e.header_offset + 30 + le(h.data() + 26, 2) + le(h.data() + 28, 2);
  if (data > file_.size() || e.compressed_size > file_.size() - data) {
    file_.fail("the member " + e.name + " is cut short (" + std::to_string(e.compressed_size) +
               " bytes past the end of the file)");
  }
  if (e.method == 0 && e.size != e.compressed_size) file_.fail("the stored member " + e.name + " has two sizes");
  if (e.method == 8 && e.size / kMaxDeflateRatio > e.compressed_size)
    file_.fail("the member " + e.name + " claims more data than deflate can hold");
  if (e.method != 0 && e.method != 8) {
    file_.fail("the member " + e.name + " is compressed with method " + std::to_string(e.method) +
               " (npuscope reads stored and deflated members; torch.save stores them)");
  }
  return data;
}

void ZipArchive::read(const ZipEntry& e, std::uint64_t offset, void* dst, std::uint64_t n) const {
  const std::uint64_t data = data_offset(e);
  if (offset > e.size || n > e.size - offset) file_.fail("the member " + e.name + " is shorter than its tensor needs");
  if (n == 0) return;
  if (e.method == 0) return file_.read(data + offset, dst, n, e.name);
  inflate(e, offset, dst, n);
}

std::string ZipArchive::read_all(const ZipEntry& e, std::uint64_t limit) const {
  if (e.size > limit) file_.fail("the member " + e.name + " is too large (" + std::to_string(e.size) + " bytes)");
  std::string s(e.size, '\0');
  read(e, 0, s.data(), e.size);
  return s;
}

// Inflates the member from its start, dropping the bytes before `offset`: deflated members are not
// what torch.save writes, so they are read correctly rather than fast.
void ZipArchive::inflate(const ZipEntry& e, std::uint64_t offset, void* dst, std::uint64_t n) const {
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) file_.fail("zlib cannot start inflating " + e.name);
  std::uint64_t in_pos = data_offset(e), in_left = e.compressed_size;
  std::vector<char> in(1u << 16), skip(1u << 16);
  std::uint64_t skipped = 0, done = 0;
  auto* out = static_cast<unsigned char*>(dst);
  int rc = Z_OK;
  while (done < n) {
    if (z.avail_in == 0) {
      const std::uint64_t chunk = std::min<std::uint64_t>(in.size(), in_left);
      file_.read(in_pos, in.data(), chunk, e.name);
      in_pos += chunk;
      in_left -= chunk;
      z.next_in = reinterpret_cast<Bytef*>(in.data());
      z.avail_in = static_cast<uInt>(chunk);
    }
    const bool skipping = skipped < offset;
    const std::uint64_t want =
        skipping ? std::min<std::uint64_t>(skip.size(), offset - skipped) : std::min<std::uint64_t>(n - done, 1u << 30);
    z.next_out = skipping ? reinterpret_cast<Bytef*>(skip.data()) : out + done;
    z.avail_out = static_cast<uInt>(want);
    rc = ::inflate(&z, Z_NO_FLUSH);
    const std::uint64_t got = want - z.avail_out;
    (skipping ? skipped : done) += got;
    if (rc == Z_STREAM_END && done < n) break;
    if (rc != Z_OK && rc != Z_STREAM_END && !(rc == Z_BUF_ERROR && got > 0)) break;
    if (got == 0 && z.avail_in == 0 && in_left == 0) break;
  }
  inflateEnd(&z);
  if (done < n) file_.fail("the deflated member " + e.name + " is corrupt or cut short");
}

}  // namespace npuscope::importer::torch_pt

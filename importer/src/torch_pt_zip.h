// The container of a torch.save file: the file itself (read with pread, never past its end) and the
// zip archive torch.save writes since PyTorch 1.6. See Note [Reading torch.save files] in
// torch_pt_file.cpp for why the central directory is parsed here rather than by a zip library.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace npuscope::importer::torch_pt {

// An open file read at offsets. Every read is checked against the file's size: a read past the end
// is a collector::MsprobeDumpError "<path>: <what> is cut short", never a short buffer.
class PtFile {
 public:
  explicit PtFile(std::string path);  // MsprobeDumpError when it cannot be opened
  ~PtFile();
  PtFile(const PtFile&) = delete;
  PtFile& operator=(const PtFile&) = delete;

  const std::string& path() const { return path_; }
  std::uint64_t size() const { return size_; }
  // Reads [offset, offset + n) into dst; `what` names the part in the error when the file ends first.
  void read(std::uint64_t offset, void* dst, std::uint64_t n, std::string_view what) const;
  std::string read(std::uint64_t offset, std::uint64_t n, std::string_view what) const;
  // Throws MsprobeDumpError "<path>: <message>".
  [[noreturn]] void fail(std::string_view message) const;

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

// One member of the archive, as its central directory describes it.
struct ZipEntry {
  std::string name;
  std::uint16_t method = 0;  // 0 stored, 8 deflated
  std::uint64_t compressed_size = 0;
  std::uint64_t size = 0;           // uncompressed
  std::uint64_t header_offset = 0;  // its local header
};

// The archive's members (ZIP64 understood), read from the end of the file.
class ZipArchive {
 public:
  explicit ZipArchive(const PtFile& file);

  const std::vector<ZipEntry>& entries() const { return entries_; }
  const ZipEntry* find(std::string_view name) const;  // null when absent
  // Where the entry's data starts in the file (after its local header), checked to lie in the file.
  std::uint64_t data_offset(const ZipEntry& e) const;
  // The bytes [offset, offset + n) of the entry's uncompressed data into dst: straight from the file
  // for a stored entry, inflated for a deflated one.
  void read(const ZipEntry& e, std::uint64_t offset, void* dst, std::uint64_t n) const;
  std::string read_all(const ZipEntry& e, std::uint64_t limit) const;  // MsprobeDumpError above `limit` bytes

 private:
  void read_central_directory(std::uint64_t offset, std::uint64_t size, std::uint64_t count);
  void inflate(const ZipEntry& e, std::uint64_t offset, void* dst, std::uint64_t n) const;

  const PtFile& file_;
  std::vector<ZipEntry> entries_;
};

}  // namespace npuscope::importer::torch_pt

#include "export_util.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <system_error>

#include "npuscope/collector/export_error.h"

namespace npuscope::collector::export_util {

namespace fs = std::filesystem;

OutputFile::OutputFile(std::string path) : path_(std::move(path)), partial_path_(path_ + ".partial") {
  file_ = std::fopen(partial_path_.c_str(), "wb");
  if (file_ == nullptr) {
    throw ExportError("cannot create '" + path_ + "': " + std::strerror(errno));
  }
}

OutputFile::~OutputFile() {
  if (committed_) return;
  if (file_ != nullptr) std::fclose(file_);
  std::error_code ignored;
  fs::remove(partial_path_, ignored);
}

void OutputFile::fail(const char* what) {
  const std::string reason = errno != 0 ? std::strerror(errno) : "I/O error";
  throw ExportError(std::string(what) + " '" + path_ + "': " + reason);
}

void OutputFile::flush() {
  if (buffer_.empty()) return;
  errno = 0;
  if (std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size()) fail("cannot write");
  written_ += static_cast<std::int64_t>(buffer_.size());
  buffer_.clear();
}

void OutputFile::write(std::string_view bytes) {
  if (buffer_.size() + bytes.size() < kFlushBytes) {
    buffer_.append(bytes);
    return;
  }
  flush();
  errno = 0;
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) fail("cannot write");
  written_ += static_cast<std::int64_t>(bytes.size());
}

void OutputFile::commit() {
  flush();
  errno = 0;
  const int rc = std::fclose(file_);
  file_ = nullptr;
  if (rc != 0) fail("cannot write");
  std::error_code ec;
  fs::rename(partial_path_, path_, ec);
  if (ec) throw ExportError("cannot create '" + path_ + "': " + ec.message());
  committed_ = true;
}

void ensure_directory(const std::string& dir) {
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return;
  if (fs::exists(dir, ec)) throw ExportError("'" + dir + "' exists and is not a directory");
  fs::create_directories(dir, ec);
  if (ec) throw ExportError("cannot create directory '" + dir + "': " + ec.message());
}

void append_int(std::string& out, std::int64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void append_us(std::string& out, std::int64_t ns) {
  // Unsigned arithmetic: the magnitude of INT64_MIN does not fit an int64.
  std::uint64_t mag = static_cast<std::uint64_t>(ns);
  if (ns < 0) {
    out.push_back('-');
    mag = ~mag + 1;
  }
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, mag / 1000);
  out.append(buf, r.ptr);
  const auto frac = static_cast<unsigned>(mag % 1000);
  out.push_back('.');
  out.push_back(static_cast<char>('0' + frac / 100));
  out.push_back(static_cast<char>('0' + frac / 10 % 10));
  out.push_back(static_cast<char>('0' + frac % 10));
}

void append_fixed(std::string& out, double v, int decimals) {
  char buf[64];
  const int n = std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  if (n > 0) out.append(buf, std::min<std::size_t>(static_cast<std::size_t>(n), sizeof buf - 1));
}

std::string sanitize_file_name(std::string_view name) {
  constexpr std::size_t kMaxBytes = 160;  // leaves room for ".<call>.<role>.<index>.npy" under 255
  std::string out;
  out.reserve(std::min(name.size(), kMaxBytes));
  for (const char c : name.substr(0, kMaxBytes)) {
    const bool keep =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    out.push_back(keep ? c : '_');
  }
  if (out.empty()) return "unnamed";
  if (out.front() == '.') out.front() = '_';  // no hidden files, no "." or ".."
  return out;
}

const DTypeInfo* tensor_dtype(std::int32_t dtype) {
  const auto t = dtype_from_value(dtype);
  return t ? &dtype_info(*t) : nullptr;
}

std::string tensor_dtype_name(std::int32_t dtype) {
  const DTypeInfo* t = tensor_dtype(dtype);
  return t != nullptr ? std::string(t->name) : "dtype" + std::to_string(dtype);
}

std::string copy_kind_name(std::int32_t kind) { return stored_name<CopyKind>(kind, "kind"); }

std::string memory_op_name(std::int32_t op) { return stored_name<MemoryOp>(op, "op"); }

}  // namespace npuscope::collector::export_util

// What the exports share: a buffered output file that appears only when complete, and the text
// formatting of JSON strings, CSV fields and microsecond timestamps.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "npuscope/collector/csv.h"
#include "npuscope/collector/json_string.h"
#include "npuscope/collector/trace_rows.h"

namespace npuscope::collector::export_util {

// Note [Exports stream]
// Exports read the trace through TraceReader's for_each_* callbacks and append each row's text to
// one buffer that is written out whenever it holds kFlushBytes, so memory stays constant however
// many rows the trace has (10 M tasks export in the same few MiB as 10). The text goes to
// `path.partial`, renamed to `path` by commit(): an export that fails half way (disk full, a
// corrupt trace) leaves no half-written file that looks complete.
class OutputFile {
 public:
  static constexpr std::size_t kFlushBytes = std::size_t{1} << 20;

  // Throws ExportError naming the file if it cannot be created.
  explicit OutputFile(std::string path);
  ~OutputFile();  // removes the partial file unless committed
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Append text here, then call maybe_flush().
  std::string& buffer() { return buffer_; }
  void maybe_flush() {
    if (buffer_.size() >= kFlushBytes) flush();
  }
  void write(std::string_view bytes);  // large binary payloads, bypassing the buffer when big
  // Flushes, closes and renames into place. Throws ExportError on any write error.
  void commit();

  const std::string& path() const { return path_; }
  std::int64_t bytes_written() const { return written_ + static_cast<std::int64_t>(buffer_.size()); }

 private:
  void flush();
  [[noreturn]] void fail(const char* what);

  std::string path_, partial_path_;
  std::FILE* file_ = nullptr;
  std::string buffer_;
  std::int64_t written_ = 0;
  bool committed_ = false;
};

// Note [Export pids]
// The timeline exports (Chrome JSON, Perfetto) name processes and threads alike: host 1, cpu golden
// 2, npu:N 3 + N; a lane (host thread or stream) of process P is tid P·10⁶ + lane, unique across
// processes because Perfetto keys threads by tid alone.
inline constexpr std::int64_t kHostPid = 1;
inline constexpr std::int64_t kGoldenPid = 2;
inline constexpr std::int64_t kFirstNpuPid = 3;
inline constexpr std::int64_t kLaneStride = 1'000'000;
inline std::int64_t device_pid(std::int32_t device_id) {
  return device_id >= 0 ? kFirstNpuPid + device_id : kGoldenPid;
}
// The process's name ("host", "cpu golden", "npu:N") and its rank among processes: host first,
// then the NPUs in order, the golden backend last.
inline std::string process_name(std::int64_t pid) {
  return pid == kHostPid ? "host" : pid == kGoldenPid ? "cpu golden" : "npu:" + std::to_string(pid - kFirstNpuPid);
}
inline std::int64_t process_rank(std::int64_t pid) {
  return pid == kHostPid ? 0 : pid == kGoldenPid ? kLaneStride : pid;
}

// Creates `dir` (and its parents) if needed. Throws ExportError if it is not a usable directory.
void ensure_directory(const std::string& dir);

using collector::append_csv_field;    // npuscope/collector/csv.h
using collector::append_json_string;  // npuscope/collector/json_string.h
void append_int(std::string& out, std::int64_t v);
// Nanoseconds as microseconds with exactly three decimals ("1234.567"): exact, no float rounding.
void append_us(std::string& out, std::int64_t ns);
// A double with `decimals` digits after the point ("%.*f").
void append_fixed(std::string& out, double v, int decimals);

// A file-name stem: path separators and anything but [A-Za-z0-9._-] become '_', at most 160 bytes,
// never empty, ".", ".." or hidden.
std::string sanitize_file_name(std::string_view name);

// TENSOR.dtype values: the vocabulary's dtype (size, name, .npy type), nullptr for a value this
// build does not know.
const DTypeInfo* tensor_dtype(std::int32_t dtype);
std::string tensor_dtype_name(std::int32_t dtype);  // name, or "dtype<N>"

// MEMCPY.copy_kind names: "HtoD", "DtoH", "DtoD", else "kind<N>".
std::string copy_kind_name(std::int32_t kind);
// MEMORY_RECORD.op names: "alloc", "free", "reserve", "release", else "op<N>".
std::string memory_op_name(std::int32_t op);

}  // namespace npuscope::collector::export_util

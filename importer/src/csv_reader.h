// Reading the profilers' CSV files (kernel_details.csv, op_summary_*.csv, memory_record.csv, ...).
//
// Note [Reading profilers' CSVs]
// The Ascend tools write RFC 4180 CSV with quirks every reader here must take: times end in a tab
// ("1736408883704643.212\t", so that spreadsheets keep their digits); shapes are quoted twice
// (`"""32,3,224,224"""`: the field holds `"32,3,224,224"`, whose own quotes are dropped too); `N/A`
// and 4294967295 (an unset uint32) mark a missing value; call stacks and Input Dims hold ";\r\n"
// between their parts inside a quoted field, so a record may span lines; lines end in "\r\n" or
// "\n". The reader streams the file through a buffer (1 MiB, grown only for a record longer than
// that) and splits each record into views of that buffer: no allocation per record or field (a
// field with escaped quotes is copied once into a scratch buffer sized for the record). Columns are
// found by their header name, never by position (the writers add and move columns between
// versions); a column no caller asked for is listed by unused_columns() so that the importer counts
// it as not mapped. A file that ends inside a quoted field was cut short: its last record is
// dropped and truncated() says so.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace npuscope::importer {

class CsvReader {
 public:
  // Opens `path` (plain or .gz) and reads its header. ImportError when it cannot be read or is empty.
  explicit CsvReader(std::string path);
  ~CsvReader();
  CsvReader(const CsvReader&) = delete;
  CsvReader& operator=(const CsvReader&) = delete;

  const std::string& path() const { return path_; }
  std::size_t columns() const { return header_.size(); }
  const std::string& header(std::size_t i) const { return header_[i]; }

  // The column with one of these names (the first found, exact after trimming), or -1; marks it used.
  int column(std::initializer_list<std::string_view> names);
  int column(std::string_view name) { return column({name}); }
  // As column(), but an ImportError naming the file and the column when there is none.
  int require(std::initializer_list<std::string_view> names);
  int require(std::string_view name) { return require({name}); }
  void use(int col);
  // The columns nobody asked for (by column(), require() or use()), in file order.
  std::vector<std::string> unused_columns() const;

  // Reads the next record; false at the end of the file.
  bool next();
  // The value of column `col` in the current record, cleaned (Note [Reading profilers' CSVs]):
  // blanks and tabs around it and one pair of quotes inside the CSV quoting removed; "" for col < 0
  // or a record shorter than the header.
  std::string_view field(int col) const;
  std::size_t fields() const { return fields_.size(); }

  std::int64_t rows() const { return rows_; }          // records read so far (the header not counted)
  std::int64_t line() const { return line_; }          // line of the current record's start (1-based)
  std::int64_t offset() const { return rec_offset_; }  // byte offset of the current record
  std::int64_t bytes() const { return consumed_ + static_cast<std::int64_t>(begin_); }  // read so far
  bool truncated() const { return truncated_; }
  // Reads the record at `offset` (one offset() returned) with the next next().
  void seek(std::int64_t offset);

 private:
  bool fill();  // reads more into the buffer; false at the end of the file
  bool find_record_end(std::size_t& end);
  void split(std::size_t begin, std::size_t end);

  std::string path_;
  gzFile file_ = nullptr;
  std::vector<std::string> header_;
  std::vector<bool> used_;
  std::vector<char> buf_;
  std::size_t begin_ = 0, end_ = 0;  // unread bytes of buf_
  std::size_t scan_ = 0;             // how far find_record_end has looked (resumes there after a fill)
  bool scan_quoted_ = false;
  std::int64_t consumed_ = 0;  // file bytes before buf_[0]
  bool eof_ = false, truncated_ = false;
  std::vector<std::string_view> fields_;
  std::string scratch_;  // unescaped quoted fields of the current record
  std::int64_t rows_ = 0, line_ = 0, next_line_ = 1, rec_offset_ = 0;
};

// A value the writers use for "none": "", "N/A", "NA", "None", 4294967295 or 18446744073709551615.
bool csv_missing(std::string_view v);
// Numbers in a field; nullopt when missing or not a number.
std::optional<std::int64_t> csv_int(std::string_view v);
std::optional<double> csv_double(std::string_view v);
// `v` rounded to the nearest int64, clamped to its range (NaN: 0): a value from a file may be anything.
std::int64_t clamp_to_i64(double v);
// A time in microseconds ("1736408883704643.212") as exact integer nanoseconds.
std::optional<std::int64_t> csv_time_ns(std::string_view v);
// A list the tools write with ";\r\n" between its parts (Input Dims, Call stack) as `sep` between them.
std::string join_parts(std::string_view v, std::string_view sep);

}  // namespace npuscope::importer

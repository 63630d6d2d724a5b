// See Note [Reading profilers' CSVs] in csv_reader.h.
#include "csv_reader.h"

#include <cmath>
#include <limits>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "chrome_events.h"
#include "npuscope/importer/import.h"

namespace npuscope::importer {
namespace {

constexpr std::size_t kReadBytes = std::size_t{1} << 20;

std::string_view trim(std::string_view v) {
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!v.empty() && blank(v.front())) v.remove_prefix(1);
  while (!v.empty() && blank(v.back())) v.remove_suffix(1);
  return v;
}

std::string_view clean(std::string_view v) {
  v = trim(v);
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = trim(v.substr(1, v.size() - 2));
  return v;
}

}  // namespace

CsvReader::CsvReader(std::string path) : path_(std::move(path)), buf_(kReadBytes) {
  file_ = gzopen(path_.c_str(), "rb");
  if (file_ == nullptr) throw ImportError(path_ + ": cannot open: " + std::strerror(errno));
  gzbuffer(file_, static_cast<unsigned>(kReadBytes));
  try {
    if (!next()) throw ImportError(path_ + ": empty file: expected a CSV header line");
  } catch (...) {  // no destructor runs for a constructor that throws
    gzclose(file_);
    throw;
  }
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    std::string_view h = clean(fields_[i]);
    if (i == 0 && h.starts_with("\xEF\xBB\xBF")) h.remove_prefix(3);  // a UTF-8 byte order mark
    header_.emplace_back(h);
  }
  used_.assign(header_.size(), false);
  rows_ = 0;
}

CsvReader::~CsvReader() { gzclose(file_); }

int CsvReader::column(std::initializer_list<std::string_view> names) {
  for (std::string_view name : names) {
    for (std::size_t i = 0; i < header_.size(); ++i) {
      if (header_[i] == name) {
        used_[i] = true;
        return static_cast<int>(i);
      }
    }
  }
  return -1;
}

int CsvReader::require(std::initializer_list<std::string_view> names) {
  const int c = column(names);
  if (c >= 0) return c;
  std::string wanted, has;
  for (std::string_view n : names) wanted += (wanted.empty() ? "" : "\" or \"") + std::string(n);
  for (const std::string& h : header_) has += (has.empty() ? "" : ", ") + h;
  throw ImportError(path_ + ": no column \"" + wanted + "\" (its columns: " + has + ")");
}

void CsvReader::use(int col) {
  if (col >= 0 && static_cast<std::size_t>(col) < used_.size()) used_[static_cast<std::size_t>(col)] = true;
}

std::vector<std::string> CsvReader::unused_columns() const {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < header_.size(); ++i) {
    if (!used_[i] && !header_[i].empty()) out.push_back(header_[i]);
  }
  return out;
}

std::string_view CsvReader::field(int col) const {
  if (col < 0 || static_cast<std::size_t>(col) >= fields_.size()) return {};
  return clean(fields_[static_cast<std::size_t>(col)]);
}

void CsvReader::seek(std::int64_t offset) {
  scan_quoted_ = false;
  if (offset >= consumed_ && offset <= consumed_ + static_cast<std::int64_t>(end_)) {  // in the buffer
    begin_ = scan_ = static_cast<std::size_t>(offset - consumed_);
    return;
  }
  if (gzseek(file_, static_cast<z_off_t>(offset), SEEK_SET) < 0) {
    throw ImportError(path_ + ": cannot seek to byte " + std::to_string(offset));
  }
  begin_ = end_ = scan_ = 0;
  consumed_ = offset;
  eof_ = false;
}

bool CsvReader::fill() {
  if (eof_) return false;
  if (begin_ > 0) {
    std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
    consumed_ += static_cast<std::int64_t>(begin_);
    end_ -= begin_;
    scan_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buf_.size()) buf_.resize(buf_.size() * 2);  // a record longer than the buffer
  const int n = gzread(file_, buf_.data() + end_, static_cast<unsigned>(buf_.size() - end_));
  if (n < 0) {
    int err = 0;
    const char* msg = gzerror(file_, &err);
    if (err != Z_BUF_ERROR && err != Z_DATA_ERROR) throw ImportError(path_ + ": cannot read: " + msg);
    truncated_ = true;  // a .gz cut short: what was read stands
    eof_ = true;
    return false;
  }
  if (n == 0) {
    eof_ = true;
    return false;
  }
  end_ += static_cast<std::size_t>(n);
  return true;
}

// Looks for the '\n' ending the record at begin_, outside quotes; resumes where the last look stopped.
bool CsvReader::find_record_end(std::size_t& end) {
  const char* base = buf_.data();
  std::size_t pos = scan_;
  while (pos < end_) {
    if (scan_quoted_) {
      const void* q = std::memchr(base + pos, '"', end_ - pos);
      if (q == nullptr) {
        pos = end_;
        break;
      }
      pos = static_cast<std::size_t>(static_cast<const char*>(q) - base) + 1;
      scan_quoted_ = false;  // an escaped "" closes and reopens
      continue;
    }
    const void* nl = std::memchr(base + pos, '\n', end_ - pos);
    const std::size_t stop = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - base) : end_;
    const void* q = std::memchr(base + pos, '"', stop - pos);
    if (q != nullptr) {
      pos = static_cast<std::size_t>(static_cast<const char*>(q) - base) + 1;
      scan_quoted_ = true;
      continue;
    }
    if (nl != nullptr) {
      end = stop;
      scan_ = stop;
      return true;
    }
    pos = end_;
  }
  scan_ = pos;
  return false;
}

bool CsvReader::next() {
  for (;;) {
    std::size_t end = 0;
    bool found = find_record_end(end);
    while (!found) {
      if (!fill()) break;
      found = find_record_end(end);
    }
    if (!found) {
      if (begin_ >= end_) return false;
      if (scan_quoted_) {  // the file ends inside a quoted field: cut short
        truncated_ = true;
        begin_ = scan_ = end_;
        return false;
      }
      end = end_;
    }
    const std::size_t b = begin_;
    std::size_t e = end;
    rec_offset_ = consumed_ + static_cast<std::int64_t>(b);
    line_ = next_line_;
    std::int64_t newlines = 1;
    for (std::size_t i = b; i < end; ++i) newlines += buf_[i] == '\n';
    next_line_ += newlines;
    begin_ = scan_ = end < end_ ? end + 1 : end;
    if (e > b && buf_[e - 1] == '\r') --e;
    if (e == b) continue;  // a blank line
    split(b, e);
    if (!found && !header_.empty() && fields_.size() < header_.size()) {  // a last line cut short
      truncated_ = true;
      return false;
    }
    ++rows_;
    return true;
  }
}

void CsvReader::split(std::size_t b, std::size_t e) {
  fields_.clear();
  scratch_.clear();
  scratch_.reserve(e - b);  // never grows while this record's views point into it
  const char* base = buf_.data();
  std::size_t i = b;
  for (;;) {
    if (i < e && base[i] == '"') {
      std::size_t j = i + 1, close = e;
      bool escaped = false;
      while (j < e) {
        const void* q = std::memchr(base + j, '"', e - j);
        if (q == nullptr) break;
        const std::size_t at = static_cast<std::size_t>(static_cast<const char*>(q) - base);
        if (at + 1 < e && base[at + 1] == '"') {
          escaped = true;
          j = at + 2;
          continue;
        }
        close = at;
        break;
      }
      std::string_view content(base + i + 1, close - i - 1);
      if (escaped) {
        const std::size_t at = scratch_.size();
        for (std::size_t k = 0; k < content.size(); ++k) {
          scratch_.push_back(content[k]);
          if (content[k] == '"' && k + 1 < content.size() && content[k + 1] == '"') ++k;
        }
        content = std::string_view(scratch_).substr(at);
      }
      fields_.push_back(content);
      i = close < e ? close + 1 : e;
      const void* comma = std::memchr(base + i, ',', e - i);  // text after the closing quote is dropped
      if (comma == nullptr) return;
      i = static_cast<std::size_t>(static_cast<const char*>(comma) - base) + 1;
      continue;
    }
    const void* comma = std::memchr(base + i, ',', e - i);
    if (comma == nullptr) {
      fields_.emplace_back(base + i, e - i);
      return;
    }
    const std::size_t at = static_cast<std::size_t>(static_cast<const char*>(comma) - base);
    fields_.emplace_back(base + i, at - i);
    i = at + 1;
  }
}

bool csv_missing(std::string_view v) {
  return v.empty() || v == "N/A" || v == "NA" || v == "None" || v == "4294967295" || v == "18446744073709551615";
}

std::optional<std::int64_t> csv_int(std::string_view v) {
  if (csv_missing(v)) return std::nullopt;
  return parse_int(v);
}

std::int64_t clamp_to_i64(double v) {
  if (!(v == v)) return 0;
  constexpr double kMax = 9.2233720368547748e18;  // 2^63: the first double past INT64_MAX
  if (v >= kMax) return std::numeric_limits<std::int64_t>::max();
  if (v <= -kMax) return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(std::llround(v));
}

std::optional<double> csv_double(std::string_view v) {
  if (csv_missing(v)) return std::nullopt;
  return parse_double(v);
}

std::optional<std::int64_t> csv_time_ns(std::string_view v) {
  if (csv_missing(v)) return std::nullopt;
  return parse_us_as_ns(v);
}

std::string join_parts(std::string_view v, std::string_view sep) {
  std::string out;
  out.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] == ';') {
      std::size_t j = i + 1;
      if (j < v.size() && v[j] == '\r') ++j;
      if (j < v.size() && v[j] == '\n') {
        out += sep;
        i = j;
        continue;
      }
    }
    out.push_back(v[i]);
  }
  while (!out.empty() && (out.back() == '\r' || out.back() == '\n')) out.pop_back();
  return out;
}

}  // namespace npuscope::importer

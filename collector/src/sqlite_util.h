// Small RAII wrappers over the SQLite C API. Every failure becomes a TraceError naming the file.
#pragma once

#include <sqlite3.h>

#include <string>
#include <string_view>

#include "npuscope/collector/trace_error.h"

namespace npuscope::collector::sqlite {

class Db {
 public:
  // Opens (sqlite3_open_v2 flags); throws TraceError "<path>: cannot open: <reason>".
  Db(const std::string& path, int flags);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  sqlite3* get() const { return db_; }
  const std::string& path() const { return path_; }
  bool is_open() const { return db_ != nullptr; }
  void close() noexcept;

  void exec(std::string_view sql);  // throws TraceError
  // The first column of the first row as text ("" when there is no row).
  std::string query_text(std::string_view sql);
  [[noreturn]] void fail(std::string_view what) const;  // "<path>: <what>: <sqlite message>"

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

class Stmt {
 public:
  Stmt(Db& db, std::string_view sql);  // throws TraceError
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  sqlite3_stmt* get() const { return stmt_; }
  bool step();   // true: a row is ready; false: done. Throws TraceError on error.
  void reset();  // ready to run again, bindings cleared

 private:
  Db& db_;
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace npuscope::collector::sqlite

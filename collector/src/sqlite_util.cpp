#include "sqlite_util.h"

namespace npuscope::collector::sqlite {

Db::Db(const std::string& path, int flags) : path_(path) {
  const int rc = sqlite3_open_v2(path.c_str(), &db_, flags | SQLITE_OPEN_EXRESCODE, nullptr);
  if (rc != SQLITE_OK) {
    const std::string reason = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    close();
    throw TraceError(path + ": cannot open: " + reason);
  }
}

Db::~Db() { close(); }

void Db::close() noexcept {
  if (db_) sqlite3_close_v2(db_);
  db_ = nullptr;
}

void Db::fail(std::string_view what) const {
  const int code = db_ ? sqlite3_errcode(db_) & 0xff : SQLITE_OK;
  if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB) {  // met while reading a trace opened without verify
    throw TraceError(path_ + ": corrupt trace, damaged or truncated (" + sqlite3_errmsg(db_) + ")");
  }
  throw TraceError(path_ + ": " + std::string(what) + ": " + (db_ ? sqlite3_errmsg(db_) : "database closed"));
}

void Db::exec(std::string_view sql) {
  if (sqlite3_exec(db_, std::string(sql).c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) fail(sql);
}

std::string Db::query_text(std::string_view sql) {
  Stmt stmt(*this, sql);
  if (!stmt.step()) return "";
  const unsigned char* text = sqlite3_column_text(stmt.get(), 0);
  return text ? reinterpret_cast<const char*>(text) : "";
}

Stmt::Stmt(Db& db, std::string_view sql) : db_(db) {
  const int rc = sqlite3_prepare_v3(db.get(), sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                                    &stmt_, nullptr);
  if (rc != SQLITE_OK) db.fail(sql);
}

Stmt::~Stmt() { sqlite3_finalize(stmt_); }

bool Stmt::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  const std::string sql = sqlite3_sql(stmt_) ? sqlite3_sql(stmt_) : "";
  sqlite3_reset(stmt_);
  db_.fail(sql.size() > 80 ? sql.substr(0, 80) + "..." : sql);
}

void Stmt::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

}  // namespace npuscope::collector::sqlite

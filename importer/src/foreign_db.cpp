// Reading another tool's SQLite database: Note [Reading a foreign SQLite], Note [Foreign columns by
// name] in foreign_db.h.
#include "foreign_db.h"

#include <unistd.h>

#include <array>
#include <cstdlib>
#include <fstream>
#include <system_error>

#include "chrome_events.h"  // parse_int, parse_double

namespace npuscope::importer {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kMagic{"SQLite format 3\0", 16};

// A path as an SQLite URI: the characters URIs give a meaning percent-encoded.
std::string uri_of(const std::string& path, std::string_view query) {
  std::string uri = "file:";
  for (const char c : fs::absolute(path).string()) {
    if (c == '%' || c == '?' || c == '#' || static_cast<unsigned char>(c) < 0x21) {
      constexpr char kHex[] = "0123456789ABCDEF";
      uri += '%';
      uri += kHex[static_cast<unsigned char>(c) >> 4];
      uri += kHex[static_cast<unsigned char>(c) & 15];
    } else {
      uri += c;
    }
  }
  return uri + "?" + std::string(query);
}

std::int64_t size_or_zero(const fs::path& p) {
  std::error_code ec;
  const auto n = fs::file_size(p, ec);
  return ec ? 0 : static_cast<std::int64_t>(n);
}

bool damaged(int code) {
  const int primary = code & 0xff;
  return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB || primary == SQLITE_IOERR;
}

// A fresh private folder under $TMPDIR.
fs::path private_folder() {
  std::string pattern = (fs::temp_directory_path() / "npuscope-foreign-db-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) return {};
  return pattern;
}

}  // namespace

std::string sql_quoted(std::string_view identifier) {
  std::string q = "\"";
  for (const char c : identifier) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

bool ForeignDb::looks_like_sqlite(const fs::path& path) {
  std::array<char, 16> head{};
  std::ifstream in(path, std::ios::binary);
  return in.read(head.data(), head.size()) && std::string_view(head.data(), head.size()) == kMagic;
}

ForeignDb::ForeignDb(const std::string& path) : path_(path) {
  std::array<unsigned char, 100> header{};
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ImportError(path + ": cannot be read");
  in.read(reinterpret_cast<char*>(header.data()), header.size());
  const std::streamsize got = in.gcount();
  if (got < 16 || std::string_view(reinterpret_cast<const char*>(header.data()), 16) != kMagic) {
    throw ImportError(path + ": not an SQLite database (it does not start with \"SQLite format 3\"): an msprof or " +
                      "Ascend PyTorch Profiler db export is one");
  }
  if (got < 100) {
    throw ImportError(path + ": an SQLite database cut short inside its header (" + std::to_string(got) + " bytes)");
  }
  try {
    const bool wal = header[18] == 2 || header[19] == 2;
    const fs::path wal_file = path + "-wal", shm_file = path + "-shm";
    std::error_code ec;
    if (!wal) {
      open(uri_of(path, "mode=ro"));
    } else if (size_or_zero(wal_file) <= 32) {  // no frame: the main file is the database
      open(uri_of(path, "immutable=1"));
    } else if (fs::exists(shm_file, ec)) {
      open(uri_of(path, "mode=ro&readonly_shm=1"));
    } else {
      private_copy_ = private_folder();
      const fs::path copy = private_copy_ / "db";
      if (private_copy_.empty() || !fs::copy_file(path, copy, ec) ||
          !fs::copy_file(wal_file, copy.string() + "-wal", ec)) {
        throw ImportError(path + ": its -wal holds data and has no -shm beside it; copying both to read them failed (" +
                          (ec ? ec.message() : std::string("no temporary folder")) + ")");
      }
      open(uri_of(copy.string(), "mode=ro"));
    }
    const auto list_tables = [&] {
      tables_.clear();
      ForeignStmt list(*this,
                       "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite!_%' ESCAPE '!' "
                       "ORDER BY rowid");
      while (list.step()) tables_.emplace_back(list.text(0));
    };
    try {
      list_tables();
    } catch (const ForeignDbDamaged& e) {
      // A file shorter than its header says (Note [A database cut short]): read what it holds.
      try {
        exec("PRAGMA writable_schema = ON");
        list_tables();
        cut_short_ = true;
      } catch (const ImportError&) {
        throw ImportError(path + ": not a readable SQLite database, damaged or cut short (" + e.what() + ")");
      }
    } catch (const ImportError& e) {
      throw ImportError(path + ": not a readable SQLite database (" + e.what() + ")");
    }
  } catch (...) {  // no destructor runs for an object whose constructor threw
    close();
    throw;
  }
}

void ForeignDb::open(const std::string& uri) {
  const int rc = sqlite3_open_v2(uri.c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
  if (rc != SQLITE_OK) {
    const std::string why = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw ImportError(path_ + ": cannot open it as an SQLite database: " + why);
  }
  sqlite3_busy_timeout(db_, 2000);  // a profiler still writing it (not with immutable=1)
}

ForeignDb::~ForeignDb() { close(); }

void ForeignDb::close() {
  sqlite3_close_v2(db_);  // _v2: freed once the last statement is finalized
  db_ = nullptr;
  if (!private_copy_.empty()) {
    std::error_code ec;
    fs::remove_all(private_copy_, ec);
    private_copy_.clear();
  }
}

bool ForeignDb::has_table(std::string_view name) const {
  for (const std::string& t : tables_) {
    if (t == name) return true;
  }
  return false;
}

std::vector<std::string> ForeignDb::columns(std::string_view table) const {
  std::vector<std::string> out;
  ForeignStmt info(const_cast<ForeignDb&>(*this), "PRAGMA table_info(" + sql_quoted(table) + ")");
  while (info.step()) out.emplace_back(info.text(1));
  return out;
}

void ForeignDb::exec(const std::string& sql) {
  char* error = nullptr;
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error);
  if (rc != SQLITE_OK) {
    const std::string why = error != nullptr ? error : sqlite3_errstr(rc);
    sqlite3_free(error);
    if (damaged(rc)) throw ForeignDbDamaged(path_ + ": damaged: " + why);
    throw ImportError(path_ + ": " + why + " (in: " + sql.substr(0, 200) + ")");
  }
}

void ForeignDb::fail(std::string_view what) const {
  throw ImportError(path_ + ": " + std::string(what) + ": " + sqlite3_errmsg(db_));
}

ForeignStmt::ForeignStmt(ForeignDb& db, const std::string& sql) : db_(db) {
  const int rc = sqlite3_prepare_v2(db.get(), sql.c_str(), static_cast<int>(sql.size()), &stmt_, nullptr);
  if (rc != SQLITE_OK) {
    if (damaged(rc)) throw ForeignDbDamaged(db.path() + ": damaged: " + sqlite3_errmsg(db.get()));
    db.fail("cannot read it (" + sql.substr(0, 200) + ")");
  }
}

ForeignStmt::~ForeignStmt() { sqlite3_finalize(stmt_); }

bool ForeignStmt::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  if (damaged(rc)) throw ForeignDbDamaged(db_.path() + ": damaged: " + sqlite3_errmsg(db_.get()));
  db_.fail("cannot read it");
}

void ForeignStmt::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

void ForeignStmt::bind(int index, std::int64_t value) { sqlite3_bind_int64(stmt_, index, value); }
void ForeignStmt::bind(int index, std::string_view value) {
  sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
}

std::int64_t ForeignStmt::int64(int col, std::int64_t otherwise) const {
  switch (sqlite3_column_type(stmt_, col)) {
    case SQLITE_INTEGER: return sqlite3_column_int64(stmt_, col);
    case SQLITE_FLOAT: {
      const double d = sqlite3_column_double(stmt_, col);
      if (!(d < 9.2e18 && d > -9.2e18)) return otherwise;
      return static_cast<std::int64_t>(d < 0 ? d - 0.5 : d + 0.5);
    }
    case SQLITE_TEXT: {
      const std::string_view t = text(col);
      if (const auto v = parse_int(t)) return *v;
      if (const auto d = parse_double(t); d && *d < 9.2e18 && *d > -9.2e18) {
        return static_cast<std::int64_t>(*d < 0 ? *d - 0.5 : *d + 0.5);
      }
      return otherwise;
    }
    default: return otherwise;
  }
}

double ForeignStmt::real(int col, double otherwise) const {
  switch (sqlite3_column_type(stmt_, col)) {
    case SQLITE_INTEGER:
    case SQLITE_FLOAT: return sqlite3_column_double(stmt_, col);
    case SQLITE_TEXT: return parse_double(text(col)).value_or(otherwise);
    default: return otherwise;
  }
}

std::string_view ForeignStmt::text(int col) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
  return p == nullptr ? std::string_view{}
                      : std::string_view(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col)));
}

ForeignTable::ForeignTable(ForeignDb& db, std::string name) : db_(db), name_(std::move(name)) {
  exists_ = db.has_table(name_);
  if (!exists_) return;
  for (std::string& c : db.columns(name_)) columns_.push_back({std::move(c)});
}

std::string ForeignTable::find(std::initializer_list<std::string_view> names) {
  for (const std::string_view n : names) {
    for (Column& c : columns_) {
      if (c.name == n) {
        c.read = true;
        return c.name;
      }
    }
  }
  return {};
}

bool ForeignTable::has(std::initializer_list<std::string_view> names) const {
  for (const std::string_view n : names) {
    for (const Column& c : columns_) {
      if (c.name == n) return true;
    }
  }
  return false;
}

std::string ForeignTable::col(std::string_view alias, std::initializer_list<std::string_view> names) {
  const std::string c = find(names);
  return c.empty() ? std::string("NULL") : std::string(alias) + "." + sql_quoted(c);
}

std::string ForeignTable::required(std::string_view alias, std::initializer_list<std::string_view> names) {
  const std::string c = find(names);
  if (!c.empty()) return std::string(alias) + "." + sql_quoted(c);
  std::string have;
  for (const Column& k : columns_) have += (have.empty() ? "" : ", ") + k.name;
  throw ImportError(db_.path() + ": table " + name_ + " has no column " + std::string(*names.begin()) +
                    " (it has: " + have + "): not a table of an export npuscope knows");
}

void ForeignTable::count_unread(ImportSink& sink, std::string_view file) {
  std::string counts;
  std::vector<const Column*> unread;
  for (const Column& c : columns_) {
    if (c.read) continue;
    unread.push_back(&c);
    counts += (counts.empty() ? "" : ", ") + std::string("COUNT(") + sql_quoted(c.name) + ")";
  }
  if (unread.empty()) return;
  try {
    ForeignStmt count(db_, "SELECT " + counts + " FROM " + sql_quoted(name_));
    if (!count.step()) return;
    for (std::size_t i = 0; i < unread.size(); ++i) {
      const std::int64_t n = count.int64(static_cast<int>(i));
      if (n > 0) sink.unmapped(file, "column " + name_ + "." + unread[i]->name, n);
    }
  } catch (const ForeignDbDamaged&) {  // the table's own pass said so already
  }
}

}  // namespace npuscope::importer

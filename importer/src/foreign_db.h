// An SQLite database another tool wrote (msprof_*.db, ascend_pytorch_profiler_{rank}.db), read
// without writing a byte beside it, its tables and columns found by name.
//
// Note [Reading a foreign SQLite]
// The profilers write their databases in WAL mode, and a database may come with its -wal and -shm
// files (a tool such as MindStudio Insight opened it, or the profiler was killed before its last
// checkpoint). SQLite's plain read-only open (mode=ro) still creates the -wal and -shm beside the
// file, or writes into an existing -shm, whenever the process may write there, and npuscope often
// runs as root, who may write anywhere: a user's profile, a read-only copy of someone's data. So the
// file's header and the -wal's size choose how to open it:
// - a rollback-journal database (header bytes 18-19 = 1): mode=ro, which writes nothing there;
// - WAL, and no -wal or one without a frame (at most its 32-byte header): the main file holds
//   every committed page, so immutable=1 reads it without locks or side files;
// - WAL with frames and a -shm: mode=ro&readonly_shm=1, which reads the frames through the -shm
//   opened read-only (SQLite rebuilds the index in private memory when the -shm is stale);
// - WAL with frames and no -shm (a killed profiler): SQLite cannot read the frames without
//   creating a -shm, so the database and its -wal are copied into a private temporary folder and
//   read there (removed on close). This costs a copy of the file, in this rare case only.
// immutable=1 is never used when the -wal has frames: it would ignore them, and read what the
// profiler committed last as if it had never been written.
//
// Temporary tables (CREATE TEMP TABLE) live in SQLite's temporary database, in a file under
// $TMPDIR: joins the foreign schema lacks an index for are materialised there, in bounded memory.
//
// Note [A database cut short]
// A database file copied or written only in part is shorter than the page count its header gives,
// and SQLite then refuses to open its schema ("malformed"). With writable_schema on (the connection
// is read-only: nothing is written) it takes the file's own length instead: the schema and the
// tables' pages that are there read, a read that reaches a missing page fails with SQLITE_CORRUPT
// (ForeignDbDamaged), and the import keeps what was read before, marked incomplete.
//
// Note [Foreign columns by name]
// The tools change their schemas between versions (msprof renamed COMPUTE_TASK_INFO.block_dim to
// blockDim and later to blockNum, reusing blockDim for another meaning; torch_npu added depth
// columns): an importer never relies on a column's position. ForeignTable reads the table's
// columns (PRAGMA table_info); a mapping asks for each column it reads by its names, newest
// first, and gets the SQL expression of the first one the table has (NULL when it has none, or an
// ImportError naming the file, the table and the column when it is required). The columns no
// mapping asked for are counted in UNMAPPED with how many values they hold.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "import_sink.h"
#include "npuscope/importer/import.h"

namespace npuscope::importer {

// The database file is damaged where a statement reads it (cut short, a page overwritten): what
// was read before stands; the caller marks the import incomplete.
class ForeignDbDamaged : public ImportError {
 public:
  using ImportError::ImportError;
};

class ForeignDb {
 public:
  // Opens `path` read-only (Note [Reading a foreign SQLite]). ImportError naming the file when it
  // is not an SQLite database or cannot be read.
  explicit ForeignDb(const std::string& path);
  ~ForeignDb();
  ForeignDb(const ForeignDb&) = delete;
  ForeignDb& operator=(const ForeignDb&) = delete;

  const std::string& path() const { return path_; }
  // The file is shorter than its header says (Note [A database cut short]): the tables read as far
  // as the file goes; the import is incomplete.
  bool cut_short() const { return cut_short_; }
  sqlite3* get() const { return db_; }
  // The tables of the database (not SQLite's own), in schema order.
  const std::vector<std::string>& tables() const { return tables_; }
  bool has_table(std::string_view name) const;  // exact name
  std::vector<std::string> columns(std::string_view table) const;
  void exec(const std::string& sql);
  [[noreturn]] void fail(std::string_view what) const;  // ImportError "<path>: <what>: <sqlite message>"

  // "SQLite format 3\0" at the start of the file.
  static bool looks_like_sqlite(const std::filesystem::path& path);

 private:
  void open(const std::string& uri);
  void close();

  std::string path_;
  sqlite3* db_ = nullptr;
  std::filesystem::path private_copy_;  // the temporary folder of a copied database, else empty
  std::vector<std::string> tables_;
  bool cut_short_ = false;
};

class ForeignStmt {
 public:
  ForeignStmt(ForeignDb& db, const std::string& sql);
  ~ForeignStmt();
  ForeignStmt(const ForeignStmt&) = delete;
  ForeignStmt& operator=(const ForeignStmt&) = delete;

  // true: a row is ready. ForeignDbDamaged when the file is damaged where it reads, ImportError for
  // any other failure.
  bool step();
  void reset();
  void bind(int index, std::int64_t value);  // from 1
  void bind(int index, std::string_view value);

  bool is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  // An integer exactly as stored: an INTEGER as is, a TEXT of digits parsed (the profilers store
  // nanosecond times as TEXT: "1736410576386409710"), a REAL rounded; `otherwise` for NULL and
  // for text that is no number.
  std::int64_t int64(int col, std::int64_t otherwise = 0) const;
  double real(int col, double otherwise = 0) const;
  std::string_view text(int col) const;  // "" for NULL; valid until the next step

 private:
  ForeignDb& db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// One table of a foreign database, its columns found by name (Note [Foreign columns by name]).
class ForeignTable {
 public:
  ForeignTable(ForeignDb& db, std::string name);

  const std::string& name() const { return name_; }
  bool exists() const { return exists_; }
  // The name of the first of `names` the table has ("" when none); that column counts as read.
  std::string find(std::initializer_list<std::string_view> names);
  bool has(std::initializer_list<std::string_view> names) const;
  // `alias.column` of the first of `names` the table has, else "NULL".
  std::string col(std::string_view alias, std::initializer_list<std::string_view> names);
  // As col(), but ImportError "<file>: table T has no column N (it has: ...)" when none is there.
  std::string required(std::string_view alias, std::initializer_list<std::string_view> names);
  // Counts, into UNMAPPED, the values held by the columns no mapping read: "column TASK.modelId".
  void count_unread(ImportSink& sink, std::string_view file);

 private:
  struct Column {
    std::string name;
    bool read = false;
  };
  ForeignDb& db_;
  std::string name_;
  bool exists_ = false;
  std::vector<Column> columns_;
};

// SQL text of an identifier: "name" with inner quotes doubled.
std::string sql_quoted(std::string_view identifier);

}  // namespace npuscope::importer

// An eponymous-only virtual table per trace table: see Note [Batch inserts] in batch_vtab.h.
#include "batch_vtab.h"

#include <string>

namespace npuscope::collector::schema {
namespace {

struct BatchVtab {
  sqlite3_vtab base;  // first: SQLite sees a sqlite3_vtab*
  const BatchSource* source;
};

int batch_connect(sqlite3* db, void* aux, int, const char* const*, sqlite3_vtab** out, char**) {
  const auto* source = static_cast<const BatchSource*>(aux);
  const int rc = sqlite3_declare_vtab(db, batch_vtab_declaration(*source->info).c_str());
  if (rc != SQLITE_OK) return rc;
  auto* vtab = static_cast<BatchVtab*>(sqlite3_malloc(sizeof(BatchVtab)));
  if (!vtab) return SQLITE_NOMEM;
  *vtab = BatchVtab{{}, source};
  *out = &vtab->base;
  return SQLITE_OK;
}

int batch_disconnect(sqlite3_vtab* vtab) {
  sqlite3_free(vtab);
  return SQLITE_OK;
}

// The only plan: the hidden `batch` argument (the last column) is given, and it is the whole input.
int batch_best_index(sqlite3_vtab* vtab, sqlite3_index_info* info) {
  const int hidden = static_cast<int>(reinterpret_cast<BatchVtab*>(vtab)->source->info->columns.size());
  for (int i = 0; i < info->nConstraint; ++i) {
    const auto& c = info->aConstraint[i];
    if (c.iColumn != hidden || c.op != SQLITE_INDEX_CONSTRAINT_EQ) continue;
    if (!c.usable) return SQLITE_CONSTRAINT;
    info->aConstraintUsage[i].argvIndex = 1;
    info->aConstraintUsage[i].omit = 1;
    info->estimatedCost = 1;
    return SQLITE_OK;
  }
  return SQLITE_CONSTRAINT;
}

int batch_open(sqlite3_vtab* vtab, sqlite3_vtab_cursor** out) {
  auto* cursor = static_cast<BatchCursor*>(sqlite3_malloc(sizeof(BatchCursor)));
  if (!cursor) return SQLITE_NOMEM;
  const BatchSource* source = reinterpret_cast<BatchVtab*>(vtab)->source;
  *cursor = BatchCursor{{}, source->fields, source->info->columns.size(), nullptr, 0};
  *out = &cursor->base;
  return SQLITE_OK;
}

int batch_close(sqlite3_vtab_cursor* cursor) {
  sqlite3_free(cursor);
  return SQLITE_OK;
}

int batch_filter(sqlite3_vtab_cursor* base, int, const char*, int argc, sqlite3_value** argv) {
  auto* cursor = reinterpret_cast<BatchCursor*>(base);
  cursor->batch = argc == 1 ? static_cast<const Batch*>(sqlite3_value_pointer(argv[0], kBatchPointerType)) : nullptr;
  cursor->row = 0;
  return SQLITE_OK;
}

int batch_next(sqlite3_vtab_cursor* base) {
  ++reinterpret_cast<BatchCursor*>(base)->row;
  return SQLITE_OK;
}

int batch_eof(sqlite3_vtab_cursor* base) {
  const auto* cursor = reinterpret_cast<BatchCursor*>(base);
  return !cursor->batch || cursor->row >= cursor->batch->size;
}

int batch_rowid(sqlite3_vtab_cursor* base, sqlite3_int64* rowid) {
  *rowid = static_cast<sqlite3_int64>(reinterpret_cast<BatchCursor*>(base)->row);
  return SQLITE_OK;
}

}  // namespace

sqlite3_module make_batch_module(ColumnFn column) {
  sqlite3_module m{};
  m.xConnect = batch_connect;  // no xCreate: eponymous-only, it exists in no schema
  m.xBestIndex = batch_best_index;
  m.xDisconnect = batch_disconnect;
  m.xOpen = batch_open;
  m.xClose = batch_close;
  m.xFilter = batch_filter;
  m.xNext = batch_next;
  m.xEof = batch_eof;
  m.xColumn = column;
  m.xRowid = batch_rowid;
  return m;
}

void register_batch_module(sqlite::Db& db, const BatchSource& source) {
  const std::string name = batch_module_name(*source.info);
  if (sqlite3_create_module_v2(db.get(), name.c_str(), &source.module, const_cast<BatchSource*>(&source), nullptr) !=
      SQLITE_OK) {
    db.fail("registering " + name);
  }
}

}  // namespace npuscope::collector::schema

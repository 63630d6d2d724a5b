// STRING_IDS into the trace's strings (foreign_strings.h).
#include "foreign_strings.h"

namespace npuscope::importer {
namespace {

// STRING_IDS.id is the table's rowid (INTEGER PRIMARY KEY): a lookup is one b-tree search.
bool id_is_rowid(ForeignDb& db) {
  ForeignStmt info(db, "PRAGMA table_info(STRING_IDS)");
  while (info.step()) {
    if (info.text(1) == "id") return info.int64(5) == 1 && info.text(2) == "INTEGER";
  }
  return false;
}

}  // namespace

ForeignStrings::ForeignStrings(ForeignDb& db, ImportSink& sink) : sink_(sink), table_("STRING_IDS") {
  ForeignTable strings(db, "STRING_IDS");
  if (!strings.exists()) throw ImportError(db.path() + ": no table STRING_IDS (every name of an msprof db is in it)");
  strings.required("s", {"id"});
  strings.required("s", {"value"});
  if (!id_is_rowid(db)) {  // index it in the temporary database, once
    db.exec(
        "CREATE TEMP TABLE np_strings(id INTEGER PRIMARY KEY, value TEXT); "
        "INSERT OR IGNORE INTO temp.np_strings SELECT id, value FROM main.STRING_IDS WHERE typeof(id) = 'integer'");
    table_ = "temp.np_strings";
  }
  lookup_.emplace(db, "SELECT value FROM " + table_ + " WHERE id = ?");
}

std::string_view ForeignStrings::text(std::int64_t foreign) {
  text_.clear();
  if (foreign < 0) return text_;
  lookup_->reset();
  lookup_->bind(1, foreign);
  try {
    if (lookup_->step()) text_.assign(lookup_->text(0));
  } catch (const ForeignDbDamaged&) {
    damaged_ = true;
  }
  return text_;
}

collector::StringId ForeignStrings::id(std::int64_t foreign) {
  if (foreign < 0) return 0;
  if (const auto it = ids_.find(foreign); it != ids_.end()) return it->second;
  const collector::StringId ours = sink_.id(text(foreign));
  ids_.emplace(foreign, ours);
  return ours;
}

}  // namespace npuscope::importer

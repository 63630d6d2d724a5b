#include "npuscope/collector/compare_results.h"

#include <filesystem>
#include <unordered_map>
#include <vector>

#include "batch_vtab.h"
#include "npuscope/collector/trace_reader.h"
#include "npuscope/collector/trace_writer.h"
#include "schema.h"
#include "sqlite_util.h"

namespace npuscope::collector {
namespace {

class SqliteCompareResultWriter final : public CompareResultWriter {
 public:
  explicit SqliteCompareResultWriter(const std::string& path) : db_(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX) {
    schema::register_batch_module(db_, schema::batch_source<CompareResultRow>());
    sqlite::Stmt strings(db_, "SELECT id, value FROM STRING_IDS");
    while (strings.step()) {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(strings.get(), 1));
      const StringId id = sqlite3_column_int64(strings.get(), 0);
      ids_.emplace(text ? text : "", id);
      next_id_ = std::max(next_id_, id + 1);
    }
  }

  StringId intern(std::string_view s) override {
    const auto it = ids_.find(std::string(s));
    if (it != ids_.end()) return it->second;
    ids_.emplace(std::string(s), next_id_);
    new_strings_.push_back({next_id_, std::string(s)});
    return next_id_++;
  }

  void set_meta(std::string_view key, std::string_view value) override {
    meta_.push_back({std::string(key), std::string(value)});
  }

  void add(std::span<const CompareResultRow> rows) override { rows_.insert(rows_.end(), rows.begin(), rows.end()); }

  void commit() override {
    const schema::TableInfo& table = schema::table_for<CompareResultRow>().info;
    db_.exec("BEGIN IMMEDIATE");
    try {
      db_.exec(schema::create_table_sql(table, true));  // traces written before the table existed lack it
      db_.exec("DELETE FROM COMPARE_RESULT");
      {
        sqlite::Stmt add_string(db_, "INSERT INTO STRING_IDS (id, value) VALUES (?1, ?2)");
        for (const schema::StringRow& s : new_strings_) {
          sqlite3_bind_int64(add_string.get(), 1, s.id);
          sqlite3_bind_text(add_string.get(), 2, s.value.data(), static_cast<int>(s.value.size()), SQLITE_STATIC);
          add_string.step();
          add_string.reset();
        }
        sqlite::Stmt meta(db_, "INSERT OR REPLACE INTO META (key, value) VALUES (?1, ?2)");
        for (const schema::MetaRow& m : meta_) {
          sqlite3_bind_text(meta.get(), 1, m.key.data(), static_cast<int>(m.key.size()), SQLITE_STATIC);
          sqlite3_bind_text(meta.get(), 2, m.value.data(), static_cast<int>(m.value.size()), SQLITE_STATIC);
          meta.step();
          meta.reset();
        }
        sqlite::Stmt insert(db_, schema::insert_sql(table));
        schema::Batch batch{rows_.data(), rows_.size()};
        sqlite3_bind_pointer(insert.get(), 1, &batch, schema::kBatchPointerType, nullptr);
        insert.step();
        insert.reset();
      }
      for (const std::string& sql : schema::create_index_sql(table)) db_.exec(sql);
      db_.exec("COMMIT");
    } catch (...) {
      db_.exec("ROLLBACK");
      throw;
    }
    new_strings_.clear();
    meta_.clear();
  }

 private:
  sqlite::Db db_;
  std::unordered_map<std::string, StringId> ids_;
  StringId next_id_ = 1;
  std::vector<schema::StringRow> new_strings_;
  std::vector<schema::MetaRow> meta_;
  std::vector<CompareResultRow> rows_;
};

}  // namespace

std::unique_ptr<CompareResultWriter> CompareResultWriter::open(const std::string& path, bool create) {
  if (create) {
    TraceWriter::create(path)->finalize();  // an empty, complete trace: every table, META, indexes
  } else {
    TraceReader::open(path, {.verify = false});  // a trace, of a schema this build knows, not truncated
  }
  return std::make_unique<SqliteCompareResultWriter>(path);
}

}  // namespace npuscope::collector

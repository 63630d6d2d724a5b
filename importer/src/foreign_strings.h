// STRING_IDS of an msprof / Ascend PyTorch Profiler database (every name column is an id into it),
// turned into the trace's own string ids as rows need them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "foreign_db.h"
#include "import_sink.h"

namespace npuscope::importer {

class ForeignStrings {
 public:
  // ImportError naming the file when it has no STRING_IDS(id, value).
  ForeignStrings(ForeignDb& db, ImportSink& sink);

  // The text of a foreign id; "" for one STRING_IDS does not hold (and for a NULL read as -1), and
  // for one on a damaged page of it (damaged() then says so). Valid until the next call.
  std::string_view text(std::int64_t foreign);
  // The trace's id of that text (0 for "").
  collector::StringId id(std::int64_t foreign);
  // The trace's id of the text made by `make(text)`, remembered per `kind` (a small number the
  // caller picks per transformation: shape lists, dtype lists, ...).
  template <class F>
  collector::StringId id(std::size_t kind, std::int64_t foreign, F&& make) {
    if (kind >= made_.size()) made_.resize(kind + 1);
    auto& cache = made_[kind];
    if (const auto it = cache.find(foreign); it != cache.end()) return it->second;
    const collector::StringId ours = sink_.id(make(text(foreign)));
    cache.emplace(foreign, ours);
    return ours;
  }
  // make(text) of a foreign id, a small value (a task type, an API kind) remembered per `kind`: a
  // name's meaning is worked out once, not once per row.
  template <class F>
  std::int64_t memo(std::size_t kind, std::int64_t foreign, F&& make) {
    if (kind >= memo_.size()) memo_.resize(kind + 1);
    auto& cache = memo_[kind];
    if (const auto it = cache.find(foreign); it != cache.end()) return it->second;
    const std::int64_t value = make(text(foreign));
    cache.emplace(foreign, value);
    return value;
  }
  // The table to join for a value by id in SQL: STRING_IDS, or its indexed temporary copy.
  const std::string& table() const { return table_; }
  // A lookup reached a damaged page of STRING_IDS.
  bool damaged() const { return damaged_; }

 private:
  ImportSink& sink_;
  std::string table_;  // STRING_IDS, or the temporary copy of it indexed by id
  std::optional<ForeignStmt> lookup_;
  std::string text_;
  bool damaged_ = false;
  std::unordered_map<std::int64_t, collector::StringId> ids_;
  std::vector<std::unordered_map<std::int64_t, collector::StringId>> made_;
  std::vector<std::unordered_map<std::int64_t, std::int64_t>> memo_;
};

}  // namespace npuscope::importer
